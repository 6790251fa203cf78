//===- GradientRules.cpp - Reverse-mode derivative rules of the ops -------===//
//
// Part of the Parallax project.
//
// One GradientOpInterface::buildGradients per differentiable compute op:
// given dL/dresult, build dL/doperand from Parallax ops. Rules build on the
// forward values (operands and the result) and never on the op's lowering.
// A broadcasting op reduces each operand's gradient back to the operand's
// shape. The gradient of a gather on axis 0 is row-sparse.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::parallax;

#include "parallax/Dialect/Parallax/IR/ParallaxInterfaces.cpp.inc"

namespace {

using Shape = SmallVector<int64_t>;

/// The largest window (elements) of the general pooling gradient, which
/// builds a few ops per window element.
constexpr int64_t kMaxPoolWindow = 256;

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Builds the rule's ops at one location.
struct GradBuilder {
  OpBuilder &b;
  Location loc;

  /// A rank-0 constant of `like`'s element type (broadcasts in binary ops).
  Value scalar(Value like, double value) {
    Type element = tensorType(like).getElementType();
    auto type = RankedTensorType::get({}, element);
    auto attr =
        DenseElementsAttr::get(type, b.getFloatAttr(element, value).getValue());
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value reshape(Value value, ArrayRef<int64_t> shape) {
    auto type = tensorType(value);
    if (type.getShape() == shape)
      return value;
    return ReshapeOp::create(b, loc, type.clone(shape), value);
  }
  Value expand(Value value, RankedTensorType to) {
    if (value.getType() == to)
      return value;
    return ExpandOp::create(b, loc, to, value);
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value sum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
    return ReduceOp::create(b, loc, ReduceKind::Sum, x, axes, keepdims);
  }
  Value mean(Value x, ArrayRef<int64_t> axes, bool keepdims) {
    return ReduceOp::create(b, loc, ReduceKind::Mean, x, axes, keepdims);
  }
  Value transpose(Value x, ArrayRef<int64_t> permutation) {
    return TransposeOp::create(b, loc, x, permutation);
  }
  Value slice(Value x, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
              ArrayRef<int64_t> strides) {
    return SliceOp::create(b, loc, x, offsets, sizes, strides);
  }
  /// `where(condition, x, 0)`.
  Value select(Value condition, Value x) {
    return WhereOp::create(b, loc, condition, x, scalar(x, 0.0));
  }

  /// Sums `grad` (of a broadcast result's shape) over the dimensions that
  /// broadcasting added to or stretched in `to`, and gives it `to`'s shape.
  Value unbroadcast(Value grad, RankedTensorType to) {
    auto from = tensorType(grad);
    if (from.getShape() == to.getShape())
      return grad;
    int64_t lead = from.getRank() - to.getRank();
    Shape axes;
    for (int64_t d = 0; d < from.getRank(); ++d)
      if (d < lead || (to.getDimSize(d - lead) == 1 && from.getDimSize(d) != 1))
        axes.push_back(d);
    if (!axes.empty())
      grad = sum(grad, axes, /*keepdims=*/true);
    return reshape(grad, to.getShape());
  }

  /// Pads (positive entries) or crops (negative entries) every dimension.
  Value padOrCrop(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
    auto type = tensorType(x);
    Shape offsets, sizes, padLow, padHigh;
    bool crop = false, pad = false;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      offsets.push_back(std::max<int64_t>(0, -low[d]));
      sizes.push_back(type.getDimSize(d) - std::max<int64_t>(0, -low[d]) -
                      std::max<int64_t>(0, -high[d]));
      padLow.push_back(std::max<int64_t>(0, low[d]));
      padHigh.push_back(std::max<int64_t>(0, high[d]));
      crop |= low[d] < 0 || high[d] < 0;
      pad |= low[d] > 0 || high[d] > 0;
    }
    if (crop)
      x = slice(x, offsets, sizes, Shape(type.getRank(), 1));
    if (pad)
      x = PadOp::create(b, loc, PadMode::Constant, x, padLow, padHigh,
                        APFloat(0.0));
    return x;
  }

  /// Inserts `factor - 1` zeros after every element of dimension `dim`
  /// (the adjoint of a strided slice), dropping the trailing ones.
  Value dilate(Value x, int64_t dim, int64_t factor) {
    if (factor == 1)
      return x;
    auto type = tensorType(x);
    Shape split(type.getShape());
    split.insert(split.begin() + dim + 1, 1);
    x = reshape(x, split);
    Shape low(split.size(), 0), high(split.size(), 0);
    high[dim + 1] = factor - 1;
    x = PadOp::create(b, loc, PadMode::Constant, x, low, high, APFloat(0.0));
    Shape merged(type.getShape());
    merged[dim] *= factor;
    x = reshape(x, merged);
    Shape offsets(merged.size(), 0), sizes(merged);
    sizes[dim] = (type.getDimSize(dim) - 1) * factor + 1;
    return slice(x, offsets, sizes, Shape(merged.size(), 1));
  }
};

/// The inverse of a permutation.
Shape invert(ArrayRef<int64_t> permutation) {
  Shape inverse(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    inverse[p] = i;
  return inverse;
}

/// The permutation swapping the last two of `rank` dimensions.
Shape swapLastTwo(int64_t rank) {
  Shape permutation(rank);
  std::iota(permutation.begin(), permutation.end(), 0);
  std::swap(permutation[rank - 1], permutation[rank - 2]);
  return permutation;
}

/// Shared rule shape: one builder, one result gradient.
template <typename OpT, typename Fn>
LogicalResult rule(OpT op, OpBuilder &builder, ValueRange resultGradients,
                   SmallVectorImpl<Value> &operandGradients, Fn &&fn) {
  GradBuilder g{builder, op.getLoc()};
  size_t before = operandGradients.size();
  if (failed(fn(g, resultGradients.front())))
    return failure();
  assert(operandGradients.size() == before + op->getNumOperands() &&
         "a rule gives one gradient (or null) per operand");
  (void)before;
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

#define UNARY_RULE(OP, BODY)                                                   \
  LogicalResult OP::buildGradients(OpBuilder &builder, ValueRange grads,       \
                                   SmallVectorImpl<Value> &out) {              \
    return rule(*this, builder, grads, out,                                    \
                [&](GradBuilder &g, Value dy) -> LogicalResult {               \
                  Value x = getInput(), y = getResult();                       \
                  (void)x;                                                     \
                  (void)y;                                                     \
                  out.push_back(BODY);                                         \
                  return success();                                            \
                });                                                            \
  }

UNARY_RULE(NegOp, g.neg(dy))
UNARY_RULE(AbsOp, g.mul(dy, SignOp::create(g.b, g.loc, x)))
UNARY_RULE(SignOp, Value())
UNARY_RULE(FloorOp, Value())
UNARY_RULE(CeilOp, Value())
UNARY_RULE(ReluOp,
           g.select(GreaterOp::create(g.b, g.loc, x, g.scalar(x, 0.0)), dy))
UNARY_RULE(ExpOp, g.mul(dy, y))
UNARY_RULE(LogOp, g.div(dy, x))
UNARY_RULE(SqrtOp, g.div(g.mul(dy, g.scalar(y, 0.5)), y))
UNARY_RULE(ReciprocalOp, g.neg(g.mul(dy, g.mul(y, y))))
UNARY_RULE(SigmoidOp, g.mul(dy, g.mul(y, g.sub(g.scalar(y, 1.0), y))))
UNARY_RULE(TanhOp, g.mul(dy, g.sub(g.scalar(y, 1.0), g.mul(y, y))))
UNARY_RULE(ErfOp,
           g.mul(dy, g.mul(g.scalar(x, 2.0 / std::sqrt(M_PI)),
                           ExpOp::create(g.b, g.loc, g.neg(g.mul(x, x))))))
UNARY_RULE(SinOp, g.mul(dy, CosOp::create(g.b, g.loc, x)))
UNARY_RULE(CosOp, g.neg(g.mul(dy, SinOp::create(g.b, g.loc, x))))
#undef UNARY_RULE

LogicalResult CastOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                auto inputType = tensorType(getInput());
                out.push_back(
                    isa<FloatType>(inputType.getElementType())
                        ? Value(CastOp::create(g.b, g.loc, inputType, dy))
                        : Value());
                return success();
              });
}

LogicalResult ClipOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        // Passes where min <= x <= max, as torch.clamp does.
        Value x = getInput(), inside;
        auto both = [&](Value condition) {
          inside = inside ? Value(AndOp::create(g.b, g.loc, inside, condition))
                          : condition;
        };
        if (auto min = getMin())
          both(GreaterEqualOp::create(g.b, g.loc, x,
                                      g.scalar(x, min->convertToDouble())));
        if (auto max = getMax())
          both(LessEqualOp::create(g.b, g.loc, x,
                                   g.scalar(x, max->convertToDouble())));
        out.push_back(inside ? g.select(inside, dy) : dy);
        return success();
      });
}

//===----------------------------------------------------------------------===//
// Elementwise binary (numpy broadcasting)
//===----------------------------------------------------------------------===//

/// Pushes the unbroadcast gradients for lhs and rhs (either may be null).
static LogicalResult
binaryRule(Operation *op, OpBuilder &builder, Value dy,
           SmallVectorImpl<Value> &out,
           function_ref<std::pair<Value, Value>(GradBuilder &, Value, Value,
                                                Value, Value)>
               fn) {
  GradBuilder g{builder, op->getLoc()};
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  auto [dl, dr] = fn(g, lhs, rhs, op->getResult(0), dy);
  out.push_back(dl ? g.unbroadcast(dl, tensorType(lhs)) : Value());
  out.push_back(dr ? g.unbroadcast(dr, tensorType(rhs)) : Value());
  return success();
}

#define BINARY_RULE(OP, DL, DR)                                                \
  LogicalResult OP::buildGradients(OpBuilder &builder, ValueRange grads,       \
                                   SmallVectorImpl<Value> &out) {              \
    return binaryRule(*this, builder, grads.front(), out,                      \
                      [](GradBuilder &g, Value l, Value r, Value y,            \
                         Value dy) -> std::pair<Value, Value> {                \
                        (void)l;                                               \
                        (void)r;                                               \
                        (void)y;                                               \
                        return {DL, DR};                                       \
                      });                                                      \
  }

BINARY_RULE(AddOp, dy, dy)
BINARY_RULE(SubOp, dy, g.neg(dy))
BINARY_RULE(MulOp, g.mul(dy, r), g.mul(dy, l))
BINARY_RULE(DivOp, g.div(dy, r), g.neg(g.div(g.mul(dy, y), r)))
BINARY_RULE(PowOp,
            g.mul(dy, g.mul(r, PowOp::create(g.b, g.loc, l,
                                             g.sub(r, g.scalar(r, 1.0))))),
            g.mul(dy, g.mul(y, LogOp::create(g.b, g.loc, l))))
// Ties go to the left operand (ONNX leaves them unspecified); the two
// gradients still add up to dy.
BINARY_RULE(MaxOp, g.select(GreaterEqualOp::create(g.b, g.loc, l, r), dy),
            g.select(LessOp::create(g.b, g.loc, l, r), dy))
BINARY_RULE(MinOp, g.select(LessEqualOp::create(g.b, g.loc, l, r), dy),
            g.select(GreaterOp::create(g.b, g.loc, l, r), dy))
#undef BINARY_RULE

LogicalResult WhereOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                      SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                Value zero = g.scalar(dy, 0.0);
                out.push_back(Value());
                out.push_back(g.unbroadcast(
                    WhereOp::create(g.b, g.loc, getCondition(), dy, zero),
                    tensorType(getTrueValue())));
                out.push_back(g.unbroadcast(
                    WhereOp::create(g.b, g.loc, getCondition(), zero, dy),
                    tensorType(getFalseValue())));
                return success();
              });
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        // Promote 1-D operands to matrices as numpy does, and dy with
        // them.
        Value a = getLhs(), b = getRhs();
        auto aType = tensorType(a), bType = tensorType(b);
        Shape dyShape(tensorType(dy).getShape());
        if (aType.getRank() == 1) {
          a = g.reshape(a, {1, aType.getDimSize(0)});
          dyShape.insert(dyShape.end() - (bType.getRank() == 1 ? 0 : 1), 1);
        }
        if (bType.getRank() == 1) {
          b = g.reshape(b, {bType.getDimSize(0), 1});
          dyShape.push_back(1);
        }
        dy = g.reshape(dy, dyShape);
        Value bT = g.transpose(b, swapLastTwo(tensorType(b).getRank()));
        Value da = MatMulOp::create(g.b, g.loc, dy, bT);
        Value db;
        if (tensorType(b).getRank() == 2 && tensorType(a).getRank() > 2) {
          // A matrix shared by a batch: one product over all rows,
          // A[rows, K]^T dy[rows, N], instead of a product per batch
          // element summed afterwards.
          int64_t k = tensorType(a).getShape().back();
          int64_t n = dyShape.back();
          int64_t rows = tensorType(a).getNumElements() / k;
          Value a2 = g.reshape(a, {rows, k});
          db = MatMulOp::create(g.b, g.loc, g.transpose(a2, {1, 0}),
                                g.reshape(dy, {rows, n}));
        } else {
          Value aT = g.transpose(a, swapLastTwo(tensorType(a).getRank()));
          db = MatMulOp::create(g.b, g.loc, aT, dy);
        }
        // Sum over broadcast batch dimensions, then drop the promoted
        // ones.
        da = g.unbroadcast(da, tensorType(a));
        db = g.unbroadcast(db, tensorType(b));
        out.push_back(g.reshape(da, aType.getShape()));
        out.push_back(g.reshape(db, bType.getShape()));
        return success();
      });
}

LogicalResult GemmOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        bool ta = getTransA(), tb = getTransB();
        FloatAttr alpha = getAlphaAttr();
        FloatAttr one = g.b.getF32FloatAttr(1.0);
        auto gemm = [&](Value x, Value y, bool transX, bool transY) -> Value {
          return GemmOp::create(g.b, g.loc, x, y, Value(),
                                transX ? g.b.getUnitAttr() : UnitAttr(),
                                transY ? g.b.getUnitAttr() : UnitAttr(), alpha,
                                one);
        };
        Value a = getA(), b = getB();
        // dop(A) = alpha dy op(B)^T, dop(B) = alpha op(A)^T dy.
        out.push_back(ta ? gemm(b, dy, tb, true) : gemm(dy, b, false, !tb));
        out.push_back(tb ? gemm(dy, a, true, ta) : gemm(a, dy, !ta, false));
        if (Value c = getC()) {
          Value dc = dy;
          if (getBeta().convertToDouble() != 1.0)
            dc = g.mul(dy, g.scalar(dy, getBeta().convertToDouble()));
          out.push_back(g.unbroadcast(dc, tensorType(c)));
        }
        return success();
      });
}

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
                out.push_back(g.transpose(dy, invert(getPermutation())));
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

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        Value x = getInput();
        auto inputType = tensorType(x);
        Shape kept(inputType.getShape());
        int64_t count = 1;
        for (int64_t axis : getAxes()) {
          count *= kept[axis];
          kept[axis] = 1;
        }
        Value spread = g.expand(g.reshape(dy, kept), inputType);
        switch (getKind()) {
        case ReduceKind::Sum:
          out.push_back(spread);
          break;
        case ReduceKind::Mean:
          out.push_back(g.div(spread, g.scalar(x, count)));
          break;
        case ReduceKind::Prod:
          // d/dx_i prod = prod / x_i (inputs are assumed non-zero).
          out.push_back(g.div(
              g.mul(spread, g.expand(g.reshape(getResult(), kept), inputType)),
              x));
          break;
        case ReduceKind::Max:
        case ReduceKind::Min: {
          // Shared evenly among tied extrema, as torch.amax / amin do.
          Value extremum = g.expand(g.reshape(getResult(), kept), inputType);
          Value hit = CastOp::create(g.b, g.loc, inputType,
                                     EqualOp::create(g.b, g.loc, x, extremum));
          Value ties = g.expand(g.sum(hit, getAxes(), true), inputType);
          out.push_back(g.div(g.mul(spread, hit), ties));
          break;
        }
        }
        return success();
      });
}

LogicalResult SoftmaxOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                        SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                Value y = getResult();
                Value dot = g.sum(g.mul(dy, y),
                                  {static_cast<int64_t>(getAxis())}, true);
                out.push_back(g.mul(y, g.sub(dy, dot)));
                return success();
              });
}

LogicalResult LogSoftmaxOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                           SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                Value total =
                    g.sum(dy, {static_cast<int64_t>(getAxis())}, true);
                out.push_back(g.sub(
                    dy, g.mul(ExpOp::create(g.b, g.loc, getResult()), total)));
                return success();
              });
}

LogicalResult BatchNormOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                          SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        // With given statistics the op is affine per channel:
        // y = (x - mean) * rstd * scale + bias, rstd = 1 / sqrt(var + eps).
        Value x = getInput();
        auto inputType = tensorType(x);
        auto channelType = tensorType(getScale());
        Shape perChannel(inputType.getRank(), 1), axes;
        perChannel[1] = inputType.getDimSize(1);
        for (int64_t d = 0; d < inputType.getRank(); ++d)
          if (d != 1)
            axes.push_back(d);
        auto channel = [&](Value v) { return g.reshape(v, perChannel); };
        Value rstd = ReciprocalOp::create(
            g.b, g.loc,
            SqrtOp::create(g.b, g.loc,
                           g.add(getVariance(),
                                 g.scalar(x, getEpsilon().convertToDouble()))));
        Value centered = g.sub(x, channel(getMean()));
        Value scaleRstd = g.mul(getScale(), rstd);
        auto perChannelSum = [&](Value v) {
          return g.reshape(g.sum(v, axes, false), channelType.getShape());
        };
        Value dyCentered = perChannelSum(g.mul(dy, centered));
        out.push_back(g.mul(dy, channel(scaleRstd)));
        out.push_back(g.mul(dyCentered, rstd));
        Value dBias = perChannelSum(dy);
        out.push_back(dBias);
        out.push_back(g.neg(g.mul(dBias, scaleRstd)));
        // d/dvar of rstd = -rstd^3 / 2.
        out.push_back(
            g.mul(g.mul(dyCentered, getScale()),
                  g.mul(g.scalar(x, -0.5), g.mul(rstd, g.mul(rstd, rstd)))));
        return success();
      });
}

LogicalResult LayerNormOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                          SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        Value x = getInput();
        auto inputType = tensorType(x);
        Shape axes;
        for (int64_t d = getAxis(); d < inputType.getRank(); ++d)
          axes.push_back(d);
        Value centered = g.sub(x, g.mean(x, axes, true));
        Value variance = g.mean(g.mul(centered, centered), axes, true);
        Value rstd = ReciprocalOp::create(
            g.b, g.loc,
            SqrtOp::create(
                g.b, g.loc,
                g.add(variance, g.scalar(x, getEpsilon().convertToDouble()))));
        Value normalized = g.mul(centered, rstd);
        Value dNormalized = g.mul(dy, getScale());
        // dx = rstd * (dn - mean(dn) - n * mean(dn * n)).
        Value dx = g.mul(
            rstd, g.sub(g.sub(dNormalized, g.mean(dNormalized, axes, true)),
                        g.mul(normalized, g.mean(g.mul(dNormalized, normalized),
                                                 axes, true))));
        out.push_back(dx);
        out.push_back(
            g.unbroadcast(g.mul(dy, normalized), tensorType(getScale())));
        if (Value bias = getBias())
          out.push_back(g.unbroadcast(dy, tensorType(bias)));
        return success();
      });
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// dx and dw of an ungrouped convolution.
static std::pair<Value, Value> convGradients(GradBuilder &g, Value x, Value w,
                                             Value dy,
                                             ArrayRef<int64_t> strides,
                                             ArrayRef<int64_t> dilations,
                                             ArrayRef<int64_t> pads) {
  auto xType = tensorType(x), wType = tensorType(w);
  int64_t rank = xType.getRank(), spatial = rank - 2;
  Shape swap01(rank);
  std::iota(swap01.begin(), swap01.end(), 0);
  std::swap(swap01[0], swap01[1]);
  Shape ones(spatial, 1), zeros(2 * spatial, 0);

  // dx: the stride-dilated dy, padded to a full correlation, convolved
  // with the filter flipped in space and with in/out channels swapped.
  Value dilated = dy;
  for (int64_t d = 0; d < spatial; ++d)
    dilated = g.dilate(dilated, d + 2, strides[d]);
  Shape low(rank, 0), high(rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t reach = dilations[d] * (wType.getDimSize(d + 2) - 1);
    low[d + 2] = reach - pads[d];
    high[d + 2] = xType.getDimSize(d + 2) + reach - low[d + 2] -
                  tensorType(dilated).getDimSize(d + 2);
  }
  dilated = g.padOrCrop(dilated, low, high);
  Shape flipOffsets(rank, 0), flipStrides(rank, 1);
  for (int64_t d = 2; d < rank; ++d) {
    flipOffsets[d] = wType.getDimSize(d) - 1;
    flipStrides[d] = -1;
  }
  Value flipped = g.transpose(
      g.slice(w, flipOffsets, wType.getShape(), flipStrides), swap01);
  Value dx = ConvOp::create(g.b, g.loc, dilated, flipped, Value(), ones, zeros,
                            dilations, 1);

  // dw: the padded input's patches against dy (conv_filter_grad).
  Shape padLow(rank, 0), padHigh(rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    padLow[d + 2] = pads[d];
    padHigh[d + 2] = pads[d + spatial];
  }
  Value padded = g.padOrCrop(x, padLow, padHigh);
  Value dw = ConvFilterGradOp::create(g.b, g.loc, padded, dy,
                                      wType.getShape().drop_front(2), strides,
                                      dilations);
  return {dx, dw};
}

LogicalResult ConvOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        Value x = getInput(), w = getFilter();
        int64_t groups = getGroups(), rank = tensorType(x).getRank();
        // A grouped convolution is `groups` independent ones on channel
        // slices: differentiate each and concatenate.
        auto channels = [&](Value v, int64_t group) {
          auto type = tensorType(v);
          Shape offsets(rank, 0), sizes(type.getShape());
          sizes[1] /= groups;
          offsets[1] = group * sizes[1];
          return groups == 1 ? v : g.slice(v, offsets, sizes, Shape(rank, 1));
        };
        auto filters = [&](int64_t group) {
          auto type = tensorType(w);
          Shape offsets(rank, 0), sizes(type.getShape());
          sizes[0] /= groups;
          offsets[0] = group * sizes[0];
          return groups == 1 ? w : g.slice(w, offsets, sizes, Shape(rank, 1));
        };
        SmallVector<Value> dxs, dws;
        for (int64_t group = 0; group < groups; ++group) {
          auto [dx, dw] = convGradients(g, channels(x, group), filters(group),
                                        channels(dy, group), getStrides(),
                                        getDilations(), getPads());
          dxs.push_back(dx);
          dws.push_back(dw);
        }
        out.push_back(groups == 1
                          ? dxs.front()
                          : Value(ConcatOp::create(g.b, g.loc, dxs, 1)));
        out.push_back(groups == 1
                          ? dws.front()
                          : Value(ConcatOp::create(g.b, g.loc, dws, 0)));
        if (getBias()) {
          Shape axes{0};
          for (int64_t d = 2; d < rank; ++d)
            axes.push_back(d);
          out.push_back(g.sum(dy, axes, false));
        }
        return success();
      });
}

/// Pooling whose windows overlap, are padded or do not tile the input:
/// one strided slice of the (padded) input per kernel offset holds every
/// window's element at that offset; each slice's share of dy is scattered
/// back through the adjoint of its slice.
static Value generalPoolGradient(GradBuilder &g, PoolOp op, Value dy) {
  Value x = op.getInput(), y = op.getResult();
  auto xType = tensorType(x), yType = tensorType(y);
  int64_t rank = xType.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    pads = op.getPads();
  // Pad to exactly the extent the windows cover (ceil_mode may reach past
  // the declared pads; unused trailing input is cropped).
  Shape low(rank, 0), high(rank, 0), declaredHigh(rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t extent = (yType.getDimSize(d + 2) - 1) * strides[d] + kernel[d];
    low[d + 2] = pads[d];
    high[d + 2] = extent - xType.getDimSize(d + 2) - pads[d];
    declaredHigh[d + 2] = std::min(high[d + 2], pads[d + spatial]);
  }
  auto padWith = [&](Value v, double value, ArrayRef<int64_t> lo,
                     ArrayRef<int64_t> hi) {
    Shape crop(rank, 0), padLo(lo), padHi(hi);
    for (int64_t d = 0; d < rank; ++d) {
      crop[d] = std::min<int64_t>(0, hi[d]);
      padHi[d] = std::max<int64_t>(0, hi[d]);
    }
    v = g.padOrCrop(v, Shape(rank, 0), crop);
    return Value(PadOp::create(g.b, g.loc, PadMode::Constant, v, padLo, padHi,
                               APFloat(value)));
  };
  // Every window offset as a multi-index, the first kernel dimension
  // slowest.
  int64_t offsets = std::accumulate(kernel.begin(), kernel.end(), int64_t{1},
                                    std::multiplies<>());
  auto offsetOf = [&](int64_t k) {
    Shape at(rank, 0);
    for (int64_t d = spatial - 1; d >= 0; --d) {
      at[d + 2] = k % kernel[d];
      k /= kernel[d];
    }
    return at;
  };
  auto windowSlice = [&](Value padded, int64_t k) {
    Shape sliceStrides(rank, 1);
    for (int64_t d = 0; d < spatial; ++d)
      sliceStrides[d + 2] = strides[d];
    return g.slice(padded, offsetOf(k), yType.getShape(), sliceStrides);
  };
  SmallVector<Value> shares;
  if (op.getKind() == PoolKind::Max) {
    // Shared evenly among tied maxima of a window.
    Value padded =
        padWith(x, -std::numeric_limits<double>::infinity(), low, high);
    SmallVector<Value> hits;
    Value ties;
    for (int64_t k = 0; k < offsets; ++k) {
      Value hit = CastOp::create(
          g.b, g.loc, yType,
          EqualOp::create(g.b, g.loc, windowSlice(padded, k), y));
      hits.push_back(hit);
      ties = ties ? g.add(ties, hit) : hit;
    }
    Value share = g.div(dy, ties);
    for (Value hit : hits)
      shares.push_back(g.mul(hit, share));
  } else {
    // Divide by the number of elements the forward pass averaged: the
    // window's elements inside the input, plus its declared pads with
    // count_include_pad.
    Value ones = arith::ConstantOp::create(
        g.b, g.loc,
        DenseElementsAttr::get(
            xType, g.b.getFloatAttr(xType.getElementType(), 1.0).getValue()));
    Value counted = ones;
    Shape rest(rank, 0), restHigh(rank, 0);
    if (op.getCountIncludePad()) {
      counted = padWith(ones, 1.0, low, declaredHigh);
      for (int64_t d = 0; d < rank; ++d)
        restHigh[d] = high[d] - declaredHigh[d];
      counted = padWith(counted, 0.0, rest, restHigh);
    } else {
      counted = padWith(ones, 0.0, low, high);
    }
    Value divisor;
    for (int64_t k = 0; k < offsets; ++k) {
      Value part = windowSlice(counted, k);
      divisor = divisor ? g.add(divisor, part) : part;
    }
    Value share = g.div(dy, divisor);
    shares.assign(offsets, share);
  }
  // Scatter each offset's share back: the adjoint of its strided slice.
  Value dxPadded;
  for (int64_t k = 0; k < offsets; ++k) {
    Shape at = offsetOf(k);
    Value part = shares[k];
    Shape lo(rank, 0), hi(rank, 0);
    for (int64_t d = 0; d < spatial; ++d) {
      part = g.dilate(part, d + 2, strides[d]);
      int64_t extent = (yType.getDimSize(d + 2) - 1) * strides[d] + kernel[d];
      lo[d + 2] = at[d + 2];
      hi[d + 2] = extent - at[d + 2] - tensorType(part).getDimSize(d + 2);
    }
    part = g.padOrCrop(part, lo, hi);
    dxPadded = dxPadded ? g.add(dxPadded, part) : part;
  }
  Shape cropLow(rank, 0), cropHigh(rank, 0);
  for (int64_t d = 0; d < rank; ++d) {
    cropLow[d] = -low[d];
    cropHigh[d] = -high[d];
  }
  return g.padOrCrop(dxPadded, cropLow, cropHigh);
}

LogicalResult PoolOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        Value x = getInput();
        auto xType = tensorType(x);
        int64_t rank = xType.getRank();
        ArrayRef<int64_t> kernel = getKernel(), strides = getStrides();
        bool tiles = true;
        for (int64_t d = 0; d + 2 < rank; ++d)
          tiles &= kernel[d] == strides[d] &&
                   xType.getDimSize(d + 2) % kernel[d] == 0 && !getPads()[d] &&
                   !getPads()[d + rank - 2];
        if (!tiles) {
          int64_t offsets = std::accumulate(kernel.begin(), kernel.end(),
                                            int64_t{1}, std::multiplies<>());
          if (offsets > kMaxPoolWindow)
            return emitOpError()
                   << "has a gradient rule for overlapping or padded "
                      "windows of at most "
                   << kMaxPoolWindow << " elements, got " << offsets;
          out.push_back(generalPoolGradient(g, *this, dy));
          return success();
        }
        // Non-overlapping windows tiling the input exactly: every input
        // element lies in one window, so the windows become reshaped
        // dimensions.
        Shape windows{xType.getDimSize(0), xType.getDimSize(1)}, axes;
        for (int64_t d = 0; d + 2 < rank; ++d) {
          windows.push_back(xType.getDimSize(d + 2) / kernel[d]);
          windows.push_back(kernel[d]);
          axes.push_back(windows.size() - 1);
        }
        Shape perWindow(windows);
        for (int64_t axis : axes)
          perWindow[axis] = 1;
        auto windowType = xType.clone(windows);
        Value spread = g.expand(g.reshape(dy, perWindow), windowType);
        Value dx;
        if (getKind() == PoolKind::Average) {
          int64_t size = std::accumulate(kernel.begin(), kernel.end(),
                                         int64_t{1}, std::multiplies<>());
          dx = g.div(spread, g.scalar(x, size));
        } else {
          // Shared evenly among tied maxima of a window.
          Value xw = g.reshape(x, windows);
          Value hit = CastOp::create(
              g.b, g.loc, windowType,
              EqualOp::create(
                  g.b, g.loc, xw,
                  g.expand(g.reshape(getResult(), perWindow), windowType)));
          Value ties = g.expand(g.sum(hit, axes, true), windowType);
          dx = g.div(g.mul(spread, hit), ties);
        }
        out.push_back(g.reshape(dx, xType.getShape()));
        return success();
      });
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// d loss / d input of the class losses: `T` is the one-hot label tensor
/// weighted per class and zero for ignored labels; softmax cross-entropy
/// gives softmax(x) * sum_c(T) - T, NLL gives -T; a mean divides by sum(T).
/// sum_c(T) is each row's weight: 1, or 0 for an ignored label, unless
/// class weights make it a sum over the classes.
template <typename OpT>
static LogicalResult classLossRule(OpT op, OpBuilder &builder, ValueRange grads,
                                   SmallVectorImpl<Value> &out, bool softmax) {
  return rule(
      op, builder, grads, out, [&](GradBuilder &g, Value dy) -> LogicalResult {
        Value x = op.getInput(), labels = op.getLabels();
        auto xType = tensorType(x);
        auto labelsType = tensorType(labels);
        Shape perClass(xType.getRank(), 1);
        perClass[1] = xType.getDimSize(1);
        Shape perLabel(xType.getShape());
        perLabel[1] = 1;
        Value target = OneHotOp::create(g.b, g.loc, xType, labels, 1);
        // The weight of each example's row (perLabel-shaped; null: 1), so
        // that without class weights nothing is summed over the classes.
        Value rowWeight;
        if (auto ignore = op.getIgnoreIndex()) {
          auto scalarType =
              RankedTensorType::get({}, labelsType.getElementType());
          Value ignored = arith::ConstantOp::create(
              g.b, g.loc,
              DenseElementsAttr::get(scalarType,
                                     APInt(labelsType.getElementTypeBitWidth(),
                                           *ignore,
                                           /*isSigned=*/true)));
          Value kept = CastOp::create(
              g.b, g.loc, labelsType.clone(xType.getElementType()),
              NotOp::create(g.b, g.loc,
                            EqualOp::create(g.b, g.loc, labels, ignored)));
          rowWeight = g.reshape(kept, perLabel);
          target = g.mul(target, rowWeight);
        }
        if (Value weights = op.getWeights()) {
          target = g.mul(target, g.reshape(weights, perClass));
          rowWeight = g.sum(target, {1}, true);
        }
        Value dx = g.neg(target);
        if (softmax) {
          Value p = SoftmaxOp::create(g.b, g.loc, x, 1);
          dx = g.sub(rowWeight ? g.mul(p, rowWeight) : p, target);
        }
        switch (op.getReduction()) {
        case LossReduction::Mean: {
          // Divided by the total weight of the examples.
          Value total;
          if (rowWeight) {
            Shape all(xType.getRank());
            std::iota(all.begin(), all.end(), 0);
            total = g.sum(rowWeight, all, false);
          } else {
            auto scalar = RankedTensorType::get({}, xType.getElementType());
            total = arith::ConstantOp::create(
                g.b, g.loc,
                DenseElementsAttr::get(
                    scalar,
                    g.b.getFloatAttr(xType.getElementType(),
                                     ShapedType::getNumElements(perLabel))
                        .getValue()));
          }
          dx = g.mul(dx, g.div(dy, total));
          break;
        }
        case LossReduction::Sum:
          dx = g.mul(dx, dy);
          break;
        case LossReduction::None:
          dx = g.mul(dx, g.reshape(dy, perLabel));
          break;
        }
        out.push_back(dx);
        out.push_back(Value());
        if (op.getWeights())
          out.push_back(Value());
        return success();
      });
}

LogicalResult
SoftmaxCrossEntropyOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                      SmallVectorImpl<Value> &out) {
  return classLossRule(*this, builder, grads, out, /*softmax=*/true);
}

LogicalResult
NegativeLogLikelihoodOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                        SmallVectorImpl<Value> &out) {
  return classLossRule(*this, builder, grads, out, /*softmax=*/false);
}
