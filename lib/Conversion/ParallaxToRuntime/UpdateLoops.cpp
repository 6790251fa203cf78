//===- UpdateLoops.cpp - Optimizer updates as generated loops -------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/UpdateLoops.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// A rule's hyper-parameters as f32 constants and its step-dependent
/// factors, emitted once before the loop; `apply` emits one element's
/// update inside it.
struct UpdateRule {
  OptimizerKind kind;
  bool nesterov;
  Value lr, decay, one, momentum, beta1, beta2, epsilon;
  /// Adagrad's decayed rate (lr otherwise); Adam's lr / (1 - beta1^t) and
  /// sqrt(1 - beta2^t).
  Value rate, stepSize, rootCorrection2;

  UpdateRule(OpBuilder &b, ModuleOp module, Location loc, OptimizerAttr config)
      : kind(config.getKind()), nesterov(config.getNesterov()) {
    auto constant = [&](const APFloat &value) -> Value {
      return arith::ConstantOp::create(
          b, loc,
          b.getF32FloatAttr(static_cast<float>(value.convertToDouble())));
    };
    lr = constant(config.getLr());
    decay = constant(config.getWeightDecay());
    one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
    momentum = constant(config.getMomentum());
    beta1 = constant(config.getBeta1());
    beta2 = constant(config.getBeta2());
    epsilon = constant(config.getEpsilon());
    rate = lr;
    if (kind != OptimizerKind::Adagrad && kind != OptimizerKind::Adam &&
        kind != OptimizerKind::AdamW)
      return;
    Value step = callRuntime(b, module, loc, abi::Function::current_step, {})
                     .getResult(0);
    Value t = arith::SIToFPOp::create(b, loc, b.getF32Type(), step);
    if (kind == OptimizerKind::Adagrad) {
      Value decayed =
          arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, t, one),
                                constant(config.getLrDecay()));
      rate = arith::DivFOp::create(b, loc, lr,
                                   arith::AddFOp::create(b, loc, one, decayed));
      return;
    }
    auto correction = [&](const APFloat &beta) {
      return arith::SubFOp::create(
          b, loc, one, math::PowFOp::create(b, loc, constant(beta), t));
    };
    stepSize = arith::DivFOp::create(b, loc, lr, correction(config.getBeta1()));
    rootCorrection2 =
        math::SqrtOp::create(b, loc, correction(config.getBeta2()));
  }

  /// The new weight and state of one element with gradient `g`, weight `w`
  /// and state `state` (the rule's order).
  SmallVector<Value> apply(OpBuilder &b, Location loc, Value g, Value w,
                           ValueRange state) const {
    auto add = [&](Value x, Value y) {
      return arith::AddFOp::create(b, loc, x, y).getResult();
    };
    auto sub = [&](Value x, Value y) {
      return arith::SubFOp::create(b, loc, x, y).getResult();
    };
    auto mul = [&](Value x, Value y) {
      return arith::MulFOp::create(b, loc, x, y).getResult();
    };
    auto div = [&](Value x, Value y) {
      return arith::DivFOp::create(b, loc, x, y).getResult();
    };
    auto sqrt = [&](Value x) {
      return math::SqrtOp::create(b, loc, x).getResult();
    };
    switch (kind) {
    case OptimizerKind::SGD:
      return {sub(w, mul(lr, add(g, mul(decay, w))))};
    case OptimizerKind::Momentum: {
      Value grad = add(g, mul(decay, w));
      Value v = add(mul(momentum, state[0]), grad);
      Value direction = nesterov ? add(grad, mul(momentum, v)) : v;
      return {sub(w, mul(lr, direction)), v};
    }
    case OptimizerKind::Adagrad: {
      Value grad = add(g, mul(decay, w));
      Value sum = add(state[0], mul(grad, grad));
      return {sub(w, div(mul(rate, grad), add(sqrt(sum), epsilon))), sum};
    }
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW: {
      Value grad = g;
      if (kind == OptimizerKind::AdamW)
        w = mul(w, sub(one, mul(lr, decay)));
      else
        grad = add(grad, mul(decay, w));
      Value m = add(mul(beta1, state[0]), mul(sub(one, beta1), grad));
      Value v =
          add(mul(beta2, state[1]), mul(mul(sub(one, beta2), grad), grad));
      Value denominator = add(div(sqrt(v), rootCorrection2), epsilon);
      return {sub(w, div(mul(stepSize, m), denominator)), m, v};
    }
    }
    llvm_unreachable("every optimizer kind is handled");
  }
};

} // namespace

void mlir::parallax::emitDenseUpdateLoop(OpBuilder &b, ModuleOp module,
                                         Location loc, OptimizerAttr config,
                                         Value weights, ValueRange state,
                                         Value gradient) {
  auto type = cast<MemRefType>(weights.getType());
  UpdateRule rule(b, module, loc, config);
  SmallVector<Value> outputs{weights};
  outputs.append(state.begin(), state.end());
  SmallVector<AffineMap> maps(1 + outputs.size(),
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, ValueRange{readOnlyView(b, loc, gradient)}, outputs, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(
            nb, nl, rule.apply(nb, nl, args[0], args[1], args.drop_front(2)));
      });
}

void mlir::parallax::emitSparseUpdateLoop(OpBuilder &b, ModuleOp module,
                                          Location loc, StringRef name,
                                          OptimizerAttr config, Value weights,
                                          ValueRange state, Value ids,
                                          Value rows) {
  auto type = cast<MemRefType>(weights.getType());
  UpdateRule rule(b, module, loc, config);
  Value idBuffer = readOnlyView(b, loc, ids);
  Value rowBuffer = readOnlyView(b, loc, rows);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value oneIndex = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = b.createOrFold<memref::DimOp>(loc, idBuffer, zero);
  auto indexBuffer = [&](Value size) -> Value {
    SmallVector<Value> dynamic;
    int64_t extent = ShapedType::kDynamic;
    if (std::optional<int64_t> known = getConstantIntValue(size))
      extent = *known;
    else
      dynamic.push_back(size);
    return memref::AllocOp::create(b, loc,
                                   MemRefType::get({extent}, b.getI64Type()),
                                   dynamic, b.getI64IntegerAttr(64));
  };
  Value order = indexBuffer(count);
  Value starts =
      indexBuffer(b.createOrFold<arith::AddIOp>(loc, count, oneIndex));
  Value targets = indexBuffer(count);
  Value distinct =
      callRuntime(
          b, module, loc, abi::Function::row_segments,
          {runtimeString(b, module, loc, name),
           arith::ConstantOp::create(b, loc,
                                     b.getI64IntegerAttr(type.getDimSize(0))),
           unrankedMemRef(b, loc, idBuffer), unrankedMemRef(b, loc, order),
           unrankedMemRef(b, loc, starts), unrankedMemRef(b, loc, targets)})
          .getResult(0);
  // One point per distinct row and element of a row.
  SmallVector<Value> lower(type.getRank(), zero),
      steps(type.getRank(), oneIndex);
  SmallVector<Value> upper{
      arith::IndexCastOp::create(b, loc, b.getIndexType(), distinct)};
  for (int64_t d = 1; d < type.getRank(); ++d)
    upper.push_back(arith::ConstantIndexOp::create(b, loc, type.getDimSize(d)));
  scf::ParallelOp::create(
      b, loc, lower, upper, steps,
      [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        Value segment = ivs.front();
        auto loadIndex = [&](Value buffer, Value at) -> Value {
          return arith::IndexCastOp::create(
              nb, nl, nb.getIndexType(),
              memref::LoadOp::create(nb, nl, buffer, at));
        };
        auto gradientRow = [&](OpBuilder &lb, Location ll, Value position) {
          SmallVector<Value> at{arith::IndexCastOp::create(
              lb, ll, lb.getIndexType(),
              memref::LoadOp::create(lb, ll, order, position))};
          at.append(ivs.begin() + 1, ivs.end());
          return memref::LoadOp::create(lb, ll, rowBuffer, at).getResult();
        };
        Value first = loadIndex(starts, segment);
        Value end =
            loadIndex(starts, arith::AddIOp::create(nb, nl, segment, oneIndex));
        // The first row, then the others in order: the runtime's sums.
        Value g =
            scf::ForOp::create(
                nb, nl, arith::AddIOp::create(nb, nl, first, oneIndex), end,
                oneIndex, ValueRange{gradientRow(nb, nl, first)},
                [&](OpBuilder &lb, Location ll, Value position,
                    ValueRange sum) {
                  scf::YieldOp::create(
                      lb, ll,
                      ValueRange{arith::AddFOp::create(
                          lb, ll, sum.front(), gradientRow(lb, ll, position))});
                })
                .getResult(0);
        SmallVector<Value> at{loadIndex(targets, segment)};
        at.append(ivs.begin() + 1, ivs.end());
        Value w = memref::LoadOp::create(nb, nl, weights, at);
        SmallVector<Value> current;
        for (Value buffer : state)
          current.push_back(memref::LoadOp::create(nb, nl, buffer, at));
        SmallVector<Value> updated = rule.apply(nb, nl, g, w, current);
        memref::StoreOp::create(nb, nl, updated.front(), weights, at);
        for (auto [value, buffer] :
             llvm::zip_equal(ArrayRef(updated).drop_front(), state))
          memref::StoreOp::create(nb, nl, value, buffer, at);
      });
}
