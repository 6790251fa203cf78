//===- Reductions.cpp - Gradients of reductions and normalisations --------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::gradients;

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

LogicalResult BatchSumOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                         SmallVectorImpl<Value> &out) {
  // The adjoint of a sum over the batch's slices is that sum again, of the
  // gradients. Constant inputs (an example count) need none, and zero
  // gradients stay zero: neither is sent.
  auto needed = [&](unsigned i) {
    return !matchPattern(getInputs()[i], m_Constant()) &&
           !matchPattern(grads[i], m_AnyZeroFloat());
  };
  SmallVector<Value> sent;
  for (unsigned i = 0; i < grads.size(); ++i)
    if (needed(i))
      sent.push_back(grads[i]);
  ValueRange summed;
  if (!sent.empty())
    summed = BatchSumOp::create(builder, getLoc(), sent).getResults();
  unsigned next = 0;
  for (unsigned i = 0; i < grads.size(); ++i)
    out.push_back(needed(i) ? summed[next++] : Value());
  return success();
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

LogicalResult SegmentReduceOp::buildGradients(OpBuilder &builder,
                                              ValueRange grads,
                                              SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                out.push_back(SegmentReduceGradOp::create(
                    g.b, g.loc, getKind(), dy, getData(), getBounds()));
                out.push_back(Value());
                return success();
              });
}
