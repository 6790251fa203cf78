//===- Reductions.cpp - Reductions, softmax and normalisations to linalg --===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// reduce, softmax, log_softmax, batch_norm and layer_norm: reductions as
// linalg.generic with reduction iterators, the rest elementwise.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::to_linalg;

namespace {

struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    ArrayRef<int64_t> axes = op.getAxes();
    Value result;
    switch (op.getKind()) {
    case ReduceKind::Sum:
      result = reduce(rewriter, loc, input, axes, 0, addOf);
      break;
    case ReduceKind::Mean:
      result = meanOver(rewriter, loc, input, axes);
      break;
    case ReduceKind::Prod:
      result = reduce(rewriter, loc, input, axes, 1, mulOf);
      break;
    case ReduceKind::Max:
      result = reduce(rewriter, loc, input, axes, lowest, maxOf);
      break;
    case ReduceKind::Min:
      result = reduce(rewriter, loc, input, axes, highest, minOf);
      break;
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, result,
                                     tensorTypeOf(op.getResult()).getShape()));
    return success();
  }
};

/// The pieces of a softmax along `axis`: max(x) and sum(exp(x - max))
/// shaped as `x` with `axis` of size 1, and exp(x - max) itself. (The
/// exponentials are a pass of their own: inside the sum's loop they would

/// softmax(x) = exp(x - max) / sum(exp(x - max)) along `axis`;
/// log_softmax(x) = x - max - log(sum(exp(x - max))).
template <typename OpT, bool isLog>
struct SoftmaxLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType type = tensorTypeOf(x);
    SoftmaxParts parts = softmaxParts(rewriter, loc, x, op.getAxis());
    Value result =
        isLog
            ? elementwise(
                  rewriter, loc, type, ValueRange{x, parts.max, parts.sum},
                  [](OpBuilder &b, Location l, ValueRange v) -> Value {
                    // One op per statement: the IR's order must not
                    // follow the compiler's order of evaluating arguments.
                    Value logSum = math::LogOp::create(b, l, v[2]);
                    Value shifted = arith::SubFOp::create(b, l, v[0], v[1]);
                    return arith::SubFOp::create(b, l, shifted, logSum);
                  })
            : elementwise(rewriter, loc, type,
                          ValueRange{parts.exps, parts.sum},
                          [](OpBuilder &b, Location l, ValueRange v) -> Value {
                            return arith::DivFOp::create(b, l, v[0], v[1]);
                          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c], channel dim 1,
/// as x * m[c] + o[c] with m = scale / sqrt(var + eps) and o = bias -
/// mean * m computed per channel first: the loop over x then has no
/// square root or division per element.
struct BatchNormLowering : OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    RankedTensorType channelType = tensorTypeOf(adaptor.getScale());
    Value epsilon = scalarConstant(rewriter, loc, type.getElementType(),
                                   op.getEpsilon().convertToDouble());
    Value multiplier =
        elementwise(rewriter, loc, channelType,
                    ValueRange{adaptor.getScale(), adaptor.getVariance()},
                    [&](OpBuilder &b, Location l, ValueRange v) -> Value {
                      Value stddev = math::SqrtOp::create(
                          b, l, arith::AddFOp::create(b, l, v[1], epsilon));
                      return arith::DivFOp::create(b, l, v[0], stddev);
                    });
    // (x - mean) * m + bias, not x * m + (bias - mean * m): with batch
    // statistics x is close to a mean that may be large against its
    // spread, and the folded offset would cancel catastrophically.
    // Per-channel values as C x 1 x ... x 1, broadcasting over N and the
    // spatial dimensions.
    Shape channelShape(type.getRank() - 1, 1);
    channelShape[0] = type.getDimSize(1);
    auto perChannel = [&](Value v) {
      return reshapeTo(rewriter, loc, v, channelShape);
    };
    rewriter.replaceOp(
        op,
        elementwise(
            rewriter, loc, type,
            ValueRange{adaptor.getInput(), perChannel(adaptor.getMean()),
                       perChannel(multiplier), perChannel(adaptor.getBias())},
            [&](OpBuilder &b, Location l, ValueRange v) -> Value {
              Value centered = arith::SubFOp::create(b, l, v[0], v[1]);
              return arith::AddFOp::create(
                  b, l, arith::MulFOp::create(b, l, centered, v[2]), v[3]);
            }));
    return success();
  }
};

/// Mean and variance over dimensions axis..rank-1, then scale and bias.
struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType type = tensorTypeOf(x);
    Type elementType = type.getElementType();
    int64_t axis = op.getAxis();
    Shape axes, keptShape(type.getShape());
    for (int64_t d = axis; d < type.getRank(); ++d) {
      axes.push_back(d);
      keptShape[d] = 1;
    }
    auto meanOf = [&](Value v) {
      return reshapeTo(rewriter, loc, meanOver(rewriter, loc, v, axes),
                       keptShape);
    };
    Value mean = meanOf(x);
    Value centered =
        elementwise(rewriter, loc, type, ValueRange{x, mean},
                    [](OpBuilder &b, Location l, ValueRange v) -> Value {
                      return arith::SubFOp::create(b, l, v[0], v[1]);
                    });
    Value squares =
        elementwise(rewriter, loc, type, centered,
                    [](OpBuilder &b, Location l, ValueRange v) -> Value {
                      return arith::MulFOp::create(b, l, v[0], v[0]);
                    });
    Value variance = meanOf(squares);
    Value epsilon = scalarConstant(rewriter, loc, elementType,
                                   op.getEpsilon().convertToDouble());
    SmallVector<Value> operands{centered, variance, adaptor.getScale()};
    if (adaptor.getBias())
      operands.push_back(adaptor.getBias());
    rewriter.replaceOp(
        op, elementwise(
                rewriter, loc, type, operands,
                [&](OpBuilder &b, Location l, ValueRange v) -> Value {
                  Value stddev = math::SqrtOp::create(
                      b, l, arith::AddFOp::create(b, l, v[1], epsilon));
                  Value y = arith::MulFOp::create(
                      b, l, arith::DivFOp::create(b, l, v[0], stddev), v[2]);
                  return v.size() > 3
                             ? Value(arith::AddFOp::create(b, l, y, v[3]))
                             : y;
                }));
    return success();
  }
};

/// On one device the batch is this device's examples: the partial values
/// are the sums (--parallax-distribute has rewritten a distributed step's).
struct BatchSumLowering : OpConversionPattern<BatchSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInputs());
    return success();
  }
};

} // namespace

void mlir::parallax::populateParallaxReductionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ReduceLowering, SoftmaxLowering<SoftmaxOp, false>,
               SoftmaxLowering<LogSoftmaxOp, true>, BatchNormLowering,
               LayerNormLowering, BatchSumLowering>(patterns.getContext());
  populateSegmentReductionPatterns(patterns);
}
