//===- Losses.cpp - Gradients of the classification losses ----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::gradients;

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
