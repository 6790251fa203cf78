//===- Losses.cpp - Classification losses to linalg -----------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// softmax_cross_entropy and negative_log_likelihood: one loop over the
// labels reading the class with tensor.extract, checked against [0, C).
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::to_linalg;

namespace {

/// loss[n, d...] = -logp[n, label, d...] * w[label] (0 where label is
/// ignore_index), then none / sum / weighted mean.
template <typename OpT, bool fromScores>
struct ClassificationLossLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), labels = adaptor.getLabels();
    RankedTensorType inputType = tensorTypeOf(input);
    Type elementType = inputType.getElementType();
    // From scores, log p[label] = x[label] - logsumexp(x) per example:
    // only the statistics are computed over the classes, never the whole
    // log-softmax.
    Value logSumExp;
    if (fromScores) {
      SoftmaxParts parts = softmaxParts(rewriter, loc, input, 1);
      logSumExp =
          elementwise(rewriter, loc, tensorTypeOf(parts.max),
                      ValueRange{parts.max, parts.sum},
                      [](OpBuilder &b, Location l, ValueRange v) -> Value {
                        return arith::AddFOp::create(
                            b, l, v[0], math::LogOp::create(b, l, v[1]));
                      });
    }
    RankedTensorType labelType = tensorTypeOf(labels);
    auto perExample = RankedTensorType::get(labelType.getShape(), elementType);
    Value weights = adaptor.getWeights();
    std::optional<int64_t> ignore;
    if (IntegerAttr attr = op.getIgnoreIndexAttr())
      ignore = attr.getInt();
    int64_t classes = inputType.getDimSize(1);
    // One loop per label; the class is read with tensor.extract.
    auto computeLoss = [&](bool weightOnly) {
      return linalg::GenericOp::create(
                 rewriter, loc, TypeRange{perExample}, labels,
                 ValueRange{emptyTensor(rewriter, loc, perExample)},
                 SmallVector<AffineMap>{
                     rewriter.getMultiDimIdentityMap(labelType.getRank()),
                     rewriter.getMultiDimIdentityMap(labelType.getRank())},
                 SmallVector<utils::IteratorType>(
                     labelType.getRank(), utils::IteratorType::parallel),
                 [&](OpBuilder &b, Location l, ValueRange v) {
                   Value label = v[0];
                   Value index = arith::IndexCastOp::create(
                       b, l, b.getIndexType(), label);
                   Value zero = scalarConstant(b, l, elementType, 0);
                   Value weight = scalarConstant(b, l, elementType, 1);
                   // A label outside [0, C) that is not ignore_index is an
                   // error, as in PyTorch; ignored labels are clamped for
                   // the read and masked below.
                   Value outside = arith::CmpIOp::create(
                       b, l, arith::CmpIPredicate::uge, index,
                       arith::ConstantIndexOp::create(b, l, classes));
                   if (ignore)
                     outside = arith::AndIOp::create(
                         b, l, outside,
                         arith::CmpIOp::create(
                             b, l, arith::CmpIPredicate::ne, label,
                             scalarConstant(b, l, label.getType(), *ignore)));
                   if (!weightOnly)
                     emitIndexCheck(b, l, op, outside, label, 0, classes,
                                    "class label (" + std::to_string(classes) +
                                        " classes)");
                   Value safe = arith::MinSIOp::create(
                       b, l,
                       arith::MaxSIOp::create(
                           b, l, index,
                           arith::ConstantIndexOp::create(b, l, 0)),
                       arith::ConstantIndexOp::create(b, l, classes - 1));
                   if (weights)
                     weight = tensor::ExtractOp::create(b, l, weights, safe);
                   Value value = weight;
                   if (!weightOnly) {
                     SmallVector<Value> coords{linalg::IndexOp::create(b, l, 0),
                                               safe};
                     for (int64_t d = 1; d < labelType.getRank(); ++d)
                       coords.push_back(linalg::IndexOp::create(b, l, d));
                     Value logp =
                         tensor::ExtractOp::create(b, l, input, coords);
                     if (logSumExp) {
                       coords[1] = arith::ConstantIndexOp::create(b, l, 0);
                       logp = arith::SubFOp::create(
                           b, l, logp,
                           tensor::ExtractOp::create(b, l, logSumExp, coords));
                     }
                     value = arith::NegFOp::create(
                         b, l, arith::MulFOp::create(b, l, logp, weight));
                   }
                   if (ignore) {
                     Value ignored = arith::CmpIOp::create(
                         b, l, arith::CmpIPredicate::eq, label,
                         scalarConstant(b, l, label.getType(), *ignore));
                     value =
                         arith::SelectOp::create(b, l, ignored, zero, value);
                   }
                   linalg::YieldOp::create(b, l, value);
                 })
          .getResult(0);
    };
    Value losses = computeLoss(false);
    if (op.getReduction() == LossReduction::None) {
      rewriter.replaceOp(op, losses);
      return success();
    }
    Shape all;
    for (int64_t d = 0; d < labelType.getRank(); ++d)
      all.push_back(d);
    Value total = reduce(rewriter, loc, losses, all, 0, addOf);
    if (op.getReduction() == LossReduction::Mean) {
      Value count = reduce(rewriter, loc, computeLoss(true), all, 0, addOf);
      total = elementwise(rewriter, loc, tensorTypeOf(total),
                          ValueRange{total, count},
                          [](OpBuilder &b, Location l, ValueRange v) -> Value {
                            return arith::DivFOp::create(b, l, v[0], v[1]);
                          });
    }
    rewriter.replaceOp(op, total);
    return success();
  }
};

} // namespace

void mlir::parallax::populateParallaxLossToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ClassificationLossLowering<SoftmaxCrossEntropyOp, true>,
               ClassificationLossLowering<NegativeLogLikelihoodOp, false>>(
      patterns.getContext());
}
