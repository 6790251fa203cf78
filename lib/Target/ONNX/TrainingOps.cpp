//===- TrainingOps.cpp - ONNX ai.onnx.preview.training optimizers ---------===//
//
// Part of the Parallax project.
//
// Adagrad, Momentum and Adam of the ONNX training domain: functional
// updates of several tensors at once (inputs R, T, then one group of
// tensors per role), written out as Parallax elementwise ops with the
// formulas of the ONNX operator specification.
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

namespace {

/// Elementwise arithmetic on the node's values, with float constants of the
/// updated tensors' element type.
struct Arith {
  NodeContext &ctx;
  Type element;

  Value c(double value) { return scalar(ctx, element, value); }
  Value add(Value a, Value b) { return createInferred<AddOp>(ctx, a, b); }
  Value sub(Value a, Value b) { return createInferred<SubOp>(ctx, a, b); }
  Value mul(Value a, Value b) { return createInferred<MulOp>(ctx, a, b); }
  Value div(Value a, Value b) { return createInferred<DivOp>(ctx, a, b); }
  Value sqrt(Value a) { return SqrtOp::create(ctx.builder, ctx.loc, a); }
  Value pow(Value a, Value b) { return createInferred<PowOp>(ctx, a, b); }
  /// where(T > 0, ifPositive, otherwise): ONNX's "first step" rule.
  Value ifStarted(Value t, Value ifPositive, Value otherwise) {
    Value zero =
        scalar(ctx, cast<RankedTensorType>(t.getType()).getElementType(), 0);
    Value started = createInferred<GreaterOp>(ctx, t, zero);
    return createInferred<WhereOp>(ctx, started, ifPositive, otherwise);
  }
};

/// Sets output `i` when the node has it (trailing outputs are optional).
void setIfPresent(NodeContext &ctx, unsigned i, Value value) {
  if (i < ctx.numOutputs())
    ctx.setOutput(i, value);
}

/// Checks the input count (2 + groups * n) and the element types; returns n.
FailureOr<unsigned> groupCount(NodeContext &ctx, unsigned groups,
                               Type &element) {
  unsigned tensors = ctx.numInputs() - 2;
  if (ctx.numInputs() < 2 + groups || tensors % groups ||
      ctx.numOutputs() > tensors)
    return ctx.emitError() << "expects R, T and " << groups
                           << " groups of equally many tensors, got "
                           << ctx.numInputs() << " inputs";
  element = ctx.inputType(2).getElementType();
  if (!isa<FloatType>(element))
    return ctx.emitError() << "updates float tensors, got " << element;
  return tensors / groups;
}

LogicalResult convertAdagrad(NodeContext &ctx) {
  Type element;
  FailureOr<unsigned> n = groupCount(ctx, 3, element);
  if (failed(n))
    return failure();
  Arith a{ctx, element};
  float decay = ctx.attrFloat("decay_factor", 0.0f);
  float epsilon = ctx.attrFloat("epsilon", 1e-6f);
  float norm = ctx.attrFloat("norm_coefficient", 0.0f);
  Value t = castTo(ctx, ctx.input(1), element);
  Value r = a.div(castTo(ctx, ctx.input(0), element),
                  a.add(a.c(1.0), a.mul(t, a.c(decay))));
  for (unsigned i = 0; i < *n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + *n + i),
          h = ctx.input(2 + 2 * *n + i);
    Value regularized = a.add(a.mul(a.c(norm), x), g);
    Value hNew = a.add(h, a.mul(regularized, regularized));
    Value adaptive = a.add(a.sqrt(hNew), a.c(epsilon));
    setIfPresent(ctx, i, a.sub(x, a.div(a.mul(r, regularized), adaptive)));
    setIfPresent(ctx, *n + i, hNew);
  }
  return success();
}

LogicalResult convertMomentum(NodeContext &ctx) {
  Type element;
  FailureOr<unsigned> n = groupCount(ctx, 3, element);
  if (failed(n))
    return failure();
  Arith a{ctx, element};
  float alpha = ctx.attrFloat("alpha", 0.0f);
  float beta = ctx.attrFloat("beta", 0.0f);
  float norm = ctx.attrFloat("norm_coefficient", 0.0f);
  std::string mode = ctx.attrString("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return ctx.emitError() << "mode must be 'standard' or 'nesterov', got '"
                           << mode << "'";
  Value r = castTo(ctx, ctx.input(0), element);
  Value betaAdjusted = a.ifStarted(ctx.input(1), a.c(beta), a.c(1.0));
  for (unsigned i = 0; i < *n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + *n + i),
          v = ctx.input(2 + 2 * *n + i);
    Value regularized = a.add(a.mul(a.c(norm), x), g);
    Value vNew = a.add(a.mul(a.c(alpha), v), a.mul(betaAdjusted, regularized));
    Value step =
        mode == "standard" ? vNew : a.add(regularized, a.mul(a.c(alpha), vNew));
    setIfPresent(ctx, i, a.sub(x, a.mul(r, step)));
    setIfPresent(ctx, *n + i, vNew);
  }
  return success();
}

LogicalResult convertAdam(NodeContext &ctx) {
  Type element;
  FailureOr<unsigned> n = groupCount(ctx, 4, element);
  if (failed(n))
    return failure();
  Arith a{ctx, element};
  float alpha = ctx.attrFloat("alpha", 0.9f);
  float beta = ctx.attrFloat("beta", 0.999f);
  float epsilon = ctx.attrFloat("epsilon", 1e-6f);
  float norm = ctx.attrFloat("norm_coefficient", 0.0f);
  float normPost = ctx.attrFloat("norm_coefficient_post", 0.0f);
  Value r = castTo(ctx, ctx.input(0), element);
  Value t = castTo(ctx, ctx.input(1), element);
  // R * sqrt(1 - beta^T) / (1 - alpha^T) once T > 0.
  Value corrected =
      a.div(a.mul(r, a.sqrt(a.sub(a.c(1.0), a.pow(a.c(beta), t)))),
            a.sub(a.c(1.0), a.pow(a.c(alpha), t)));
  Value rAdjusted = a.ifStarted(ctx.input(1), corrected, r);
  for (unsigned i = 0; i < *n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + *n + i),
          v = ctx.input(2 + 2 * *n + i), h = ctx.input(2 + 3 * *n + i);
    Value regularized = a.add(a.mul(a.c(norm), x), g);
    Value vNew =
        a.add(a.mul(a.c(alpha), v), a.mul(a.c(1.0 - alpha), regularized));
    Value hNew = a.add(a.mul(a.c(beta), h),
                       a.mul(a.c(1.0 - beta), a.mul(regularized, regularized)));
    Value denominator = a.add(a.sqrt(hNew), a.c(epsilon));
    Value xNew = a.sub(x, a.mul(rAdjusted, a.div(vNew, denominator)));
    setIfPresent(ctx, i, a.mul(a.c(1.0 - normPost), xNew));
    setIfPresent(ctx, *n + i, vNew);
    setIfPresent(ctx, 2 * *n + i, hNew);
  }
  return success();
}

} // namespace

Converter onnx_import::lookupTrainingConverter(StringRef opType) {
  if (opType == "Adagrad")
    return convertAdagrad;
  if (opType == "Momentum")
    return convertMomentum;
  if (opType == "Adam")
    return convertAdam;
  return nullptr;
}
