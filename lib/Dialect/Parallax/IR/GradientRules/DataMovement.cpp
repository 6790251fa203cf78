//===- DataMovement.cpp - Gradients of data movement ops ------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::gradients;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        auto dataType = tensorType(getData());
        auto indicesType = tensorType(getIndices());
        int64_t axis = getAxis(), rank = dataType.getRank();
        int64_t k = indicesType.getNumElements();
        int64_t idxRank = indicesType.getRank();
        // Move the gathered dimensions to the front: dy becomes one row per
        // index of the data with `axis` moved first.
        Shape permutation;
        for (int64_t d = 0; d < idxRank; ++d)
          permutation.push_back(axis + d);
        for (int64_t d = 0; d < axis; ++d)
          permutation.push_back(d);
        for (int64_t d = axis + idxRank; d < tensorType(dy).getRank(); ++d)
          permutation.push_back(d);
        Shape rowsFirst(1, dataType.getDimSize(axis));
        for (int64_t d = 0; d < rank; ++d)
          if (d != axis)
            rowsFirst.push_back(dataType.getDimSize(d));
        Value rows = dy;
        if (axis != 0)
          rows = g.transpose(dy, permutation);
        Shape rowShape(rowsFirst);
        rowShape.front() = k;
        rows = g.reshape(rows, rowShape);
        Value ids = g.reshape(getIndices(), {k});
        if (!indicesType.getElementType().isInteger(64))
          ids = CastOp::create(
              g.b, g.loc, RankedTensorType::get({k}, g.b.getI64Type()), ids);
        auto sparseType = RowSparseType::get(
            RankedTensorType::get(rowsFirst, dataType.getElementType()), k);
        Value sparse =
            RowSparsePackOp::create(g.b, g.loc, sparseType, ids, rows);
        if (axis != 0) {
          // Rows of a non-leading axis: densify and move the axis back.
          Shape back;
          for (int64_t d = 1; d <= axis; ++d)
            back.push_back(d);
          back.push_back(0);
          for (int64_t d = axis + 1; d < rank; ++d)
            back.push_back(d);
          sparse =
              g.transpose(RowSparseToDenseOp::create(g.b, g.loc, sparse), back);
        }
        out.push_back(sparse);
        return success();
      });
}

LogicalResult ReshapeOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                        SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                out.push_back(g.reshape(dy, tensorType(getInput()).getShape()));
                return success();
              });
}

LogicalResult ExpandOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                out.push_back(g.unbroadcast(dy, tensorType(getInput())));
                return success();
              });
}

LogicalResult TransposeOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                          SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                out.push_back(
                    g.transpose(dy, invertPermutationVector(getPermutation())));
                return success();
              });
}

LogicalResult ConcatOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                auto dyType = tensorType(dy);
                int64_t axis = getAxis(), offset = 0;
                for (Value input : getInputs()) {
                  auto type = tensorType(input);
                  Shape offsets(dyType.getRank(), 0);
                  offsets[axis] = offset;
                  out.push_back(g.slice(dy, offsets, type.getShape(),
                                        Shape(dyType.getRank(), 1)));
                  offset += type.getDimSize(axis);
                }
                return success();
              });
}

LogicalResult SliceOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                      SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        auto inputType = tensorType(getInput());
        int64_t rank = inputType.getRank();
        // Per dimension: undo a reversal, put the strided elements back in
        // place with zeros between them, then pad to the input's extent.
        for (int64_t d = 0; d < rank; ++d) {
          int64_t size = getSizes()[d], stride = getStrides()[d];
          int64_t first = getOffsets()[d];
          if (size == 0)
            return emitOpError("has no gradient rule for an empty slice");
          if (stride < 0) {
            first += (size - 1) * stride;
            stride = -stride;
            Shape offsets(rank, 0), sizes(tensorType(dy).getShape()),
                strides(rank, 1);
            offsets[d] = size - 1;
            strides[d] = -1;
            dy = g.slice(dy, offsets, sizes, strides);
          }
          dy = g.dilate(dy, d, stride);
          Shape low(rank, 0), high(rank, 0);
          low[d] = first;
          high[d] = inputType.getDimSize(d) - first - ((size - 1) * stride + 1);
          dy = g.padOrCrop(dy, low, high);
        }
        out.push_back(dy);
        return success();
      });
}

LogicalResult TileOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                auto inputType = tensorType(getInput());
                Shape split, axes;
                for (auto [d, repeats] : llvm::enumerate(getRepeats())) {
                  axes.push_back(split.size());
                  split.push_back(repeats);
                  split.push_back(inputType.getDimSize(d));
                }
                out.push_back(
                    g.reshape(g.sum(g.reshape(dy, split), axes, false),
                              inputType.getShape()));
                return success();
              });
}

LogicalResult PadOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                    SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        Shape low, high;
        for (auto [l, h] : llvm::zip(getLow(), getHigh())) {
          low.push_back(-l);
          high.push_back(-h);
        }
        if (getMode() == PadMode::Constant) {
          out.push_back(g.padOrCrop(dy, low, high));
          return success();
        }
        // Reflect and edge padding copy input elements outward,
        // one dimension at a time: send each padded slice's
        // gradient back to the elements it copied.
        auto inputType = tensorType(getInput());
        int64_t rank = inputType.getRank();
        for (int64_t d = 0; d < rank; ++d) {
          int64_t l = getLow()[d], h = getHigh()[d];
          int64_t n = inputType.getDimSize(d);
          auto along = [&](int64_t offset, int64_t size, int64_t stride) {
            Shape offsets(rank, 0), sizes(tensorType(dy).getShape()),
                strides(rank, 1);
            offsets[d] = offset;
            sizes[d] = size;
            strides[d] = stride;
            return g.slice(dy, offsets, sizes, strides);
          };
          auto placed = [&](Value v, int64_t before, int64_t after) {
            Shape lo(rank, 0), hi(rank, 0);
            lo[d] = before;
            hi[d] = after;
            return g.padOrCrop(v, lo, hi);
          };
          Value dx = along(l, n, 1);
          if (getMode() == PadMode::Edge) {
            if (l)
              dx =
                  g.add(dx, placed(g.sum(along(0, l, 1), {d}, true), 0, n - 1));
            if (h)
              dx = g.add(
                  dx, placed(g.sum(along(l + n, h, 1), {d}, true), n - 1, 0));
          } else {
            // out[l - 1 - i] = in[1 + i], out[l + n + i] =
            // in[n - 2 - i].
            if (l)
              dx = g.add(dx, placed(along(l - 1, l, -1), 1, n - 1 - l));
            if (h)
              dx = g.add(dx, placed(along(l + n + h - 1, h, -1), n - 1 - h, 1));
          }
          dy = dx;
        }
        out.push_back(dy);
        return success();
      });
}
