//===- Segments.cpp - Segment reductions to linalg ------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// segment_reduce and its gradient (nn.EmbeddingBag's bags). Rows are
// viewed as `rows x width`; each bag's rows are walked by an scf.for inside
// a parallel linalg.generic over bags and columns. A row's bag is found by
// a binary search over the bounds, once per row. Every bound a loop reads
// memory with is checked: bounds come from data (PyTorch's offsets).
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::to_linalg;

namespace {

/// `value` as a `rows x width` matrix.
Value asMatrix(OpBuilder &b, Location loc, Value value) {
  ArrayRef<int64_t> shape = tensorTypeOf(value).getShape();
  int64_t width = 1;
  for (int64_t dim : shape.drop_front())
    width *= dim;
  return reshapeTo(b, loc, value, {shape.front(), width});
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value boundAt(OpBuilder &b, Location loc, Value bounds, Value position) {
  Value raw = tensor::ExtractOp::create(b, loc, bounds, position);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
}

/// `value` divided by a bag's size (an index), for `mean`.
Value divideBySize(OpBuilder &b, Location loc, Value value, Value size) {
  Value count = arith::UIToFPOp::create(
      b, loc, value.getType(),
      arith::IndexCastOp::create(b, loc, b.getI64Type(), size));
  return arith::DivFOp::create(b, loc, value, count);
}

/// The rows [start, end) of bag `s`, checked: both bounds in [0, rows] and
/// end >= start, or the program ends naming `op`'s node.
std::pair<Value, Value> bagRange(OpBuilder &b, Location loc, Operation *op,
                                 Value bounds, Value s, int64_t rows) {
  Value start = boundAt(b, loc, bounds, s);
  Value end =
      boundAt(b, loc, bounds,
              arith::AddIOp::create(b, loc, s, indexConstant(b, loc, 1)));
  Value limit = indexConstant(b, loc, rows);
  std::string what = "embedding bag bound (rows " + std::to_string(rows) + ")";
  for (Value bound : {start, end}) {
    // Unsigned: a negative bound is above the limit too.
    Value bad =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, bound, limit);
    emitIndexCheck(b, loc, op, bad, bound, 0, rows + 1, what);
  }
  Value size = arith::SubIOp::create(b, loc, end, start);
  Value decreasing = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           size, indexConstant(b, loc, 0));
  emitIndexCheck(b, loc, op, decreasing, size, 0, rows + 1,
                 "embedding bag size (bounds must not decrease)");
  return {start, end};
}

/// A parallel linalg.generic over `type` whose body computes an element
/// from the loop indices.
Value generate(OpBuilder &b, Location loc, RankedTensorType type,
               function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{},
             ValueRange{emptyTensor(b, loc, type)},
             SmallVector<AffineMap>{b.getMultiDimIdentityMap(type.getRank())},
             iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange) {
               SmallVector<Value> indices;
               for (int64_t d = 0; d < type.getRank(); ++d)
                 indices.push_back(linalg::IndexOp::create(nb, nloc, d));
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, indices));
             })
      .getResult(0);
}

/// Per column of every bag, the row of the bag's first maximum (the value
/// wins only when greater, as PyTorch's EmbeddingBag keeps the first), or
/// -1 for an empty bag.
Value firstMaxRows(OpBuilder &b, Location loc, Operation *op, Value data,
                   Value bounds, int64_t bags) {
  RankedTensorType dataType = tensorTypeOf(data);
  int64_t rows = dataType.getDimSize(0);
  auto type =
      RankedTensorType::get({bags, dataType.getDimSize(1)}, b.getIndexType());
  return generate(
      b, loc, type, [&](OpBuilder &nb, Location nloc, ValueRange idx) -> Value {
        auto [start, end] = bagRange(nb, nloc, op, bounds, idx[0], rows);
        Type element = dataType.getElementType();
        Value none = indexConstant(nb, nloc, -1);
        auto loop = scf::ForOp::create(
            nb, nloc, start, end, indexConstant(nb, nloc, 1),
            ValueRange{lowest(nb, nloc, element), none},
            [&](OpBuilder &lb, Location lloc, Value j, ValueRange acc) {
              Value x = tensor::ExtractOp::create(lb, lloc, data,
                                                  ValueRange{j, idx[1]});
              Value better = arith::CmpFOp::create(
                  lb, lloc, arith::CmpFPredicate::OGT, x, acc[0]);
              Value first = arith::CmpIOp::create(
                  lb, lloc, arith::CmpIPredicate::eq, acc[1], none);
              Value take = arith::OrIOp::create(lb, lloc, better, first);
              scf::YieldOp::create(
                  lb, lloc,
                  ValueRange{
                      arith::SelectOp::create(lb, lloc, take, x, acc[0]),
                      arith::SelectOp::create(lb, lloc, take, j, acc[1])});
            });
        return loop.getResult(1);
      });
}

struct SegmentReduceLowering : OpConversionPattern<SegmentReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SegmentReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = asMatrix(rewriter, loc, adaptor.getData());
    Value bounds = adaptor.getBounds();
    RankedTensorType dataType = tensorTypeOf(data);
    RankedTensorType resultType = tensorTypeOf(op.getResult());
    int64_t rows = dataType.getDimSize(0);
    int64_t bags = resultType.getDimSize(0);
    Type element = dataType.getElementType();
    auto type = RankedTensorType::get({bags, dataType.getDimSize(1)}, element);
    ReduceKind kind = op.getKind();
    Value result = generate(
        rewriter, loc, type,
        [&](OpBuilder &b, Location l, ValueRange idx) -> Value {
          auto [start, end] = bagRange(b, l, op, bounds, idx[0], rows);
          Value zero = scalarConstant(b, l, element, 0);
          Value initial =
              kind == ReduceKind::Max ? lowest(b, l, element) : zero;
          auto loop = scf::ForOp::create(
              b, l, start, end, indexConstant(b, l, 1), ValueRange{initial},
              [&](OpBuilder &lb, Location ll, Value j, ValueRange acc) {
                Value x = tensor::ExtractOp::create(lb, ll, data,
                                                    ValueRange{j, idx[1]});
                Value next = kind == ReduceKind::Max ? maxOf(lb, ll, acc[0], x)
                                                     : addOf(lb, ll, acc[0], x);
                scf::YieldOp::create(lb, ll, next);
              });
          Value acc = loop.getResult(0);
          Value size = arith::SubIOp::create(b, l, end, start);
          Value empty = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              size, indexConstant(b, l, 0));
          if (kind == ReduceKind::Mean) {
            acc = divideBySize(b, l, acc, size);
          }
          // An empty bag gives 0, not -inf or 0/0.
          return arith::SelectOp::create(b, l, empty, zero, acc);
        });
    rewriter.replaceOp(op,
                       reshapeTo(rewriter, loc, result, resultType.getShape()));
    return success();
  }
};

struct SegmentReduceGradLowering : OpConversionPattern<SegmentReduceGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SegmentReduceGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value grad = asMatrix(rewriter, loc, adaptor.getOutputGrad());
    Value data = asMatrix(rewriter, loc, adaptor.getData());
    Value bounds = adaptor.getBounds();
    RankedTensorType dataType = tensorTypeOf(data);
    int64_t rows = dataType.getDimSize(0);
    int64_t bags = tensorTypeOf(grad).getDimSize(0);
    Type element = dataType.getElementType();
    ReduceKind kind = op.getKind();

    // Each row's bag: the last s with bounds[s] <= row (a binary search
    // over all S + 1 bounds), or -1 / S when the row is in no bag.
    Value bagOfRow = generate(
        rewriter, loc, RankedTensorType::get({rows}, rewriter.getIndexType()),
        [&](OpBuilder &b, Location l, ValueRange idx) -> Value {
          Value row = idx[0];
          Value one = indexConstant(b, l, 1);
          auto search = scf::WhileOp::create(
              b, l, TypeRange{b.getIndexType(), b.getIndexType()},
              ValueRange{indexConstant(b, l, 0), indexConstant(b, l, bags + 1)},
              [&](OpBuilder &wb, Location wl, ValueRange range) {
                Value more = arith::CmpIOp::create(
                    wb, wl, arith::CmpIPredicate::slt, range[0], range[1]);
                scf::ConditionOp::create(wb, wl, more, range);
              },
              [&](OpBuilder &wb, Location wl, ValueRange range) {
                Value mid = arith::DivUIOp::create(
                    wb, wl, arith::AddIOp::create(wb, wl, range[0], range[1]),
                    indexConstant(wb, wl, 2));
                Value atOrBelow =
                    arith::CmpIOp::create(wb, wl, arith::CmpIPredicate::sle,
                                          boundAt(wb, wl, bounds, mid), row);
                Value above = arith::AddIOp::create(wb, wl, mid, one);
                scf::YieldOp::create(
                    wb, wl,
                    ValueRange{arith::SelectOp::create(wb, wl, atOrBelow, above,
                                                       range[0]),
                               arith::SelectOp::create(wb, wl, atOrBelow,
                                                       range[1], mid)});
              });
          return arith::SubIOp::create(b, l, search.getResult(0), one);
        });
    Value firstMax;
    if (kind == ReduceKind::Max)
      firstMax = firstMaxRows(rewriter, loc, op, data, bounds, bags);

    Value result = generate(
        rewriter, loc, tensorTypeOf(data),
        [&](OpBuilder &b, Location l, ValueRange idx) -> Value {
          Value row = idx[0], column = idx[1];
          Value zero = scalarConstant(b, l, element, 0);
          Value s = tensor::ExtractOp::create(b, l, bagOfRow, row);
          Value inBag = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, s,
                                    indexConstant(b, l, 0)),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, s,
                                    indexConstant(b, l, bags)));
          // Past the last bag's end (bounds[S] < rows) a row is in none.
          Value safeBag =
              arith::SelectOp::create(b, l, inBag, s, indexConstant(b, l, 0));
          Value end = boundAt(
              b, l, bounds,
              arith::AddIOp::create(b, l, safeBag, indexConstant(b, l, 1)));
          inBag = arith::AndIOp::create(
              b, l, inBag,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, row, end));
          Value dy = tensor::ExtractOp::create(b, l, grad,
                                               ValueRange{safeBag, column});
          switch (kind) {
          case ReduceKind::Mean: {
            Value size = arith::SubIOp::create(b, l, end,
                                               boundAt(b, l, bounds, safeBag));
            dy = divideBySize(b, l, dy, size);
            break;
          }
          case ReduceKind::Max: {
            Value winner = tensor::ExtractOp::create(
                b, l, firstMax, ValueRange{safeBag, column});
            inBag = arith::AndIOp::create(
                b, l, inBag,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, winner,
                                      row));
            break;
          }
          default:
            break;
          }
          return arith::SelectOp::create(b, l, inBag, dy, zero);
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, result,
                                     tensorTypeOf(op.getResult()).getShape()));
    return success();
  }
};

} // namespace

void mlir::parallax::to_linalg::populateSegmentReductionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<SegmentReduceLowering, SegmentReduceGradLowering>(
      patterns.getContext());
}
