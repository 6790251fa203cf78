//===- DenseUpdates.cpp - Optimizer updates as generated loops ------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/DenseUpdates.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::parallax;

void mlir::parallax::emitDenseUpdateLoop(OpBuilder &b, ModuleOp module,
                                         Location loc, OptimizerAttr config,
                                         Value weights, ValueRange state,
                                         Value gradient) {
  auto type = cast<MemRefType>(weights.getType());
  Type f32 = b.getF32Type();
  auto constant = [&](const APFloat &value) -> Value {
    return arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(value.convertToDouble())));
  };
  auto number = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  Value lr = constant(config.getLr());
  Value decay = constant(config.getWeightDecay());
  Value one = number(1.0);
  OptimizerKind kind = config.getKind();
  // The factors of the runtime's kernels that depend on the step number t.
  Value rate = lr, stepSize, rootCorrection2;
  if (kind == OptimizerKind::Adagrad || kind == OptimizerKind::Adam ||
      kind == OptimizerKind::AdamW) {
    Value step = callRuntime(b, module, loc, abi::Function::current_step, {})
                     .getResult(0);
    Value t = arith::SIToFPOp::create(b, loc, f32, step);
    if (kind == OptimizerKind::Adagrad) {
      Value decayed =
          arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, t, one),
                                constant(config.getLrDecay()));
      rate = arith::DivFOp::create(b, loc, lr,
                                   arith::AddFOp::create(b, loc, one, decayed));
    } else {
      auto correction = [&](const APFloat &beta) {
        return arith::SubFOp::create(
            b, loc, one, math::PowFOp::create(b, loc, constant(beta), t));
      };
      stepSize =
          arith::DivFOp::create(b, loc, lr, correction(config.getBeta1()));
      rootCorrection2 =
          math::SqrtOp::create(b, loc, correction(config.getBeta2()));
    }
  }
  Value gradientBuffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), f32), gradient,
      /*read_only=*/true);
  SmallVector<Value> outputs{weights};
  outputs.append(state.begin(), state.end());
  SmallVector<AffineMap> maps(1 + outputs.size(),
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  Value momentum = constant(config.getMomentum());
  Value beta1 = constant(config.getBeta1()),
        beta2 = constant(config.getBeta2());
  Value epsilon = constant(config.getEpsilon());
  bool nesterov = config.getNesterov();
  linalg::GenericOp::create(
      b, loc, ValueRange{gradientBuffer}, outputs, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value g = args[0], w = args[1];
        auto add = [&](Value x, Value y) {
          return arith::AddFOp::create(nb, nl, x, y).getResult();
        };
        auto sub = [&](Value x, Value y) {
          return arith::SubFOp::create(nb, nl, x, y).getResult();
        };
        auto mul = [&](Value x, Value y) {
          return arith::MulFOp::create(nb, nl, x, y).getResult();
        };
        auto div = [&](Value x, Value y) {
          return arith::DivFOp::create(nb, nl, x, y).getResult();
        };
        auto sqrt = [&](Value x) {
          return math::SqrtOp::create(nb, nl, x).getResult();
        };
        SmallVector<Value> results;
        switch (kind) {
        case OptimizerKind::SGD:
          results = {sub(w, mul(lr, add(g, mul(decay, w))))};
          break;
        case OptimizerKind::Momentum: {
          Value grad = add(g, mul(decay, w));
          Value v = add(mul(momentum, args[2]), grad);
          Value direction = nesterov ? add(grad, mul(momentum, v)) : v;
          results = {sub(w, mul(lr, direction)), v};
          break;
        }
        case OptimizerKind::Adagrad: {
          Value grad = add(g, mul(decay, w));
          Value sum = add(args[2], mul(grad, grad));
          results = {sub(w, div(mul(rate, grad), add(sqrt(sum), epsilon))),
                     sum};
          break;
        }
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW: {
          Value grad = g;
          if (kind == OptimizerKind::AdamW)
            w = mul(w, sub(one, mul(lr, decay)));
          else
            grad = add(grad, mul(decay, w));
          Value m = add(mul(beta1, args[2]), mul(sub(one, beta1), grad));
          Value v =
              add(mul(beta2, args[3]), mul(mul(sub(one, beta2), grad), grad));
          Value denominator = add(div(sqrt(v), rootCorrection2), epsilon);
          results = {sub(w, div(mul(stepSize, m), denominator)), m, v};
          break;
        }
        }
        linalg::YieldOp::create(nb, nl, results);
      });
}
