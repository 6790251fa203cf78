//===- OpConversions.cpp - ONNX operators to Parallax ops -----------------===//
//
// Part of the Parallax project.
//
// One converter per ONNX operator of the default domain. Converters read
// attributes and inputs through NodeContext, normalise ONNX's conventions
// (negative axes, defaults, opset differences) and build Parallax ops whose
// result types are inferred; a failed inference becomes an error on the node
// instead of an abort.
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

namespace {

using Shape = SmallVector<int64_t>;

/// Reports that output `i` is read, which this importer cannot produce.
LogicalResult rejectUsedOutput(NodeContext &ctx, unsigned i, StringRef what) {
  if (!ctx.outputUsed(i))
    return success();
  return ctx.emitError() << "output " << i << " (" << what
                         << ") is used, which is not supported";
}

std::optional<Shape> normalizedAxes(NodeContext &ctx, ArrayRef<int64_t> axes,
                                    int64_t rank) {
  Shape result;
  for (int64_t axis : axes) {
    int64_t a = ctx.normalizeAxis(axis, rank);
    if (a < 0)
      return std::nullopt;
    result.push_back(a);
  }
  llvm::sort(result);
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT> LogicalResult convertUnary(NodeContext &ctx) {
  Value x = ctx.input(0);
  return result(ctx, x ? ctx.builder.createOrFold<OpT>(ctx.loc, x) : x);
}

template <typename OpT> LogicalResult convertBinary(NodeContext &ctx) {
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  if (!lhs || !rhs)
    return failure();
  return result(ctx, createInferred<OpT>(ctx, lhs, rhs));
}

LogicalResult convertDiv(NodeContext &ctx) {
  // An integer division by a constant zero would trap at run time.
  if (const Const *divisor = ctx.constInput(1);
      divisor && !divisor->isFloat() && llvm::is_contained(divisor->ints, 0))
    return ctx.emitError() << "integer division by zero";
  return convertBinary<DivOp>(ctx);
}

LogicalResult convertPow(NodeContext &ctx) {
  Value base = ctx.input(0), exponent = ctx.input(1);
  if (!base || !exponent)
    return failure();
  Type baseType = cast<RankedTensorType>(base.getType()).getElementType();
  Type exponentType =
      cast<RankedTensorType>(exponent.getType()).getElementType();
  // parallax.pow is floating-point; integer bases are computed in the
  // exponent's float type (or f64) and converted back, as ONNX specifies
  // the result in the base's type.
  Type computeType = isa<FloatType>(baseType)       ? baseType
                     : isa<FloatType>(exponentType) ? exponentType
                                                    : ctx.builder.getF64Type();
  Value power = createInferred<PowOp>(ctx, castTo(ctx, base, computeType),
                                      castTo(ctx, exponent, computeType));
  return result(ctx, power ? castTo(ctx, power, baseType) : power);
}

/// Sum, Mean, Max, Min: variadic, folded left to right.
template <typename OpT, bool isMean = false>
LogicalResult convertVariadic(NodeContext &ctx) {
  Value acc = ctx.input(0);
  for (unsigned i = 1; acc && i < ctx.numInputs(); ++i) {
    Value next = ctx.input(i);
    acc = next ? createInferred<OpT>(ctx, acc, next) : next;
  }
  if (acc && isMean && ctx.numInputs() > 1) {
    Type elementType = cast<RankedTensorType>(acc.getType()).getElementType();
    acc = createInferred<DivOp>(ctx, acc,
                                scalar(ctx, elementType, ctx.numInputs()));
  }
  return result(ctx, acc);
}

LogicalResult convertLeakyRelu(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  Value alpha = scalar(ctx, elementType, ctx.attrFloat("alpha", 0.01f));
  Value zero = scalar(ctx, elementType, 0);
  Value positive = createInferred<GreaterEqualOp>(ctx, x, zero);
  Value scaled = createInferred<MulOp>(ctx, x, alpha);
  return result(ctx, createInferred<WhereOp>(ctx, positive, x, scaled));
}

LogicalResult convertWhere(NodeContext &ctx) {
  Value c = ctx.input(0), a = ctx.input(1), b = ctx.input(2);
  if (!c || !a || !b)
    return failure();
  return result(ctx, createInferred<WhereOp>(ctx, c, a, b));
}

LogicalResult convertCast(NodeContext &ctx) {
  Value x = ctx.input(0);
  std::optional<int64_t> to = ctx.attrIntOpt("to");
  if (!x || !to)
    return x ? ctx.emitError() << "requires attribute 'to'" : failure();
  Type elementType = ctx.importerElementType(*to);
  if (!elementType)
    return ctx.emitError() << "casting to ONNX data type " << *to
                           << " is not supported";
  return result(ctx, castTo(ctx, x, elementType));
}

LogicalResult convertClip(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  std::optional<double> min, max;
  // The bounds are inputs (models before opset 11 were converted at
  // import): constant bounds become attributes, run-time bounds a max/min
  // with the (scalar) bound tensor.
  Value clipped = x;
  for (auto [index, bound] : {std::pair(1u, &min), std::pair(2u, &max)}) {
    if (!ctx.hasInput(index))
      continue;
    if (const Const *c = ctx.constInput(index)) {
      if (c->size() != 1)
        return ctx.emitError() << "bounds must be scalars";
      *bound = c->at(0);
      continue;
    }
    Value limit = ctx.input(index);
    if (!limit)
      return failure();
    clipped = index == 1 ? createInferred<MaxOp>(ctx, clipped, limit)
                         : createInferred<MinOp>(ctx, clipped, limit);
    if (!clipped)
      return failure();
  }
  if (!min && !max && clipped != x)
    return result(ctx, clipped);
  auto f64 = [&](std::optional<double> v) {
    return v ? ctx.builder.getF64FloatAttr(*v) : FloatAttr();
  };
  return result(ctx, ClipOp::create(ctx.builder, ctx.loc, type, clipped,
                                    f64(min), f64(max)));
}

/// clip(alpha * x + beta, 0, 1): HardSigmoid, and HardSwish's gate.
Value hardSigmoid(NodeContext &ctx, Value x, double alpha, double beta) {
  auto type = cast<RankedTensorType>(x.getType());
  Type elementType = type.getElementType();
  // One statement per op: the IR's order does not depend on the order
  // the compiler evaluates arguments in.
  Value scaled = createInferred<MulOp>(ctx, x, scalar(ctx, elementType, alpha));
  Value affine =
      createInferred<AddOp>(ctx, scaled, scalar(ctx, elementType, beta));
  if (!affine)
    return Value();
  return ClipOp::create(ctx.builder, ctx.loc, type, affine,
                        ctx.builder.getF64FloatAttr(0.0),
                        ctx.builder.getF64FloatAttr(1.0));
}

LogicalResult convertHardSigmoid(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  return result(ctx, hardSigmoid(ctx, x, ctx.attrFloat("alpha", 0.2f),
                                 ctx.attrFloat("beta", 0.5f)));
}

/// x * HardSigmoid(x) with alpha 1/6 and beta 1/2 (PyTorch's hardswish;
/// its gradient, (2x + 3) / 6 inside (-3, 3), follows by the product rule).
LogicalResult convertHardSwish(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  Value gate = hardSigmoid(ctx, x, 1.0 / 6.0, 0.5);
  if (!gate)
    return failure();
  return result(ctx, createInferred<MulOp>(ctx, x, gate));
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult convertMatMul(NodeContext &ctx) {
  return convertBinary<MatMulOp>(ctx);
}

LogicalResult convertGemm(NodeContext &ctx) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  Value c = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (ctx.hasInput(2) && !c)
    return failure();
  Builder &builder = ctx.builder;
  auto flag = [&](StringRef name) {
    return ctx.attrInt(name, 0) ? builder.getUnitAttr() : UnitAttr();
  };
  return result(ctx, createInferred<GemmOp>(
                         ctx, a, b, c, flag("transA"), flag("transB"),
                         builder.getF32FloatAttr(ctx.attrFloat("alpha", 1.0f)),
                         builder.getF32FloatAttr(ctx.attrFloat("beta", 1.0f))));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult convertGather(NodeContext &ctx) {
  Value data = ctx.input(0);
  RankedTensorType indicesType = ctx.inputType(1);
  if (!data || !indicesType)
    return failure();
  auto dataType = cast<RankedTensorType>(data.getType());
  int64_t axis = ctx.normalizeAxis(ctx.attrInt("axis", 0), dataType.getRank());
  if (axis < 0)
    return failure();
  Value indices;
  if (const Const *c = ctx.constInput(1)) {
    // Constant indices are checked and made non-negative here.
    int64_t dim = dataType.getDimSize(axis);
    std::vector<int64_t> normalized;
    for (int64_t index : c->ints) {
      if (index < -dim || index >= dim)
        return ctx.emitError() << "index " << index << " is out of range for "
                               << "axis " << axis << " of size " << dim;
      normalized.push_back(index < 0 ? index + dim : index);
    }
    Const adjusted = Const::ofInts(ctx.builder.getI64Type(), c->shape,
                                   std::move(normalized));
    indices =
        arith::ConstantOp::create(ctx.builder, ctx.loc, adjusted.toAttr());
  } else {
    indices = ctx.input(1);
  }
  return result(ctx, createInferred<GatherOp>(ctx, data, indices,
                                              static_cast<uint64_t>(axis)));
}

template <std::optional<Shape> (*computeShape)(NodeContext &,
                                               ArrayRef<int64_t>)>
LogicalResult convertReshapeLike(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  std::optional<Shape> shape =
      computeShape(ctx, cast<RankedTensorType>(x.getType()).getShape());
  return result(ctx, shape ? reshape(ctx, x, *shape) : Value());
}

LogicalResult convertExpand(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  std::optional<Shape> shape = expandShape(ctx, type.getShape());
  if (!shape)
    return failure();
  if (*shape == type.getShape())
    return result(ctx, x);
  return result(
      ctx, ctx.builder.createOrFold<ExpandOp>(ctx.loc, type.clone(*shape), x));
}

LogicalResult convertTranspose(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  Shape perm;
  if (std::optional<Shape> attr = ctx.attrInts("perm")) {
    perm = *attr;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  return result(ctx, createInferred<TransposeOp>(ctx, x, perm));
}

LogicalResult convertConcat(NodeContext &ctx) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  if (inputs.empty())
    return ctx.emitError() << "requires at least one input";
  int64_t rank = cast<RankedTensorType>(inputs[0].getType()).getRank();
  std::optional<int64_t> axisAttr = ctx.attrIntOpt("axis");
  if (!axisAttr)
    return ctx.emitError() << "requires attribute 'axis'";
  int64_t axis = ctx.normalizeAxis(*axisAttr, rank);
  if (axis < 0)
    return failure();
  return result(ctx, createInferred<ConcatOp>(ctx, ValueRange(inputs),
                                              static_cast<uint64_t>(axis)));
}

LogicalResult convertSlice(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  std::optional<SliceParams> params =
      sliceParams(ctx, cast<RankedTensorType>(x.getType()).getShape());
  if (!params)
    return failure();
  return result(ctx, createInferred<SliceOp>(ctx, x, params->offsets,
                                             params->sizes, params->strides));
}

LogicalResult convertSplit(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t axis = ctx.normalizeAxis(ctx.attrInt("axis", 0), type.getRank());
  if (axis < 0)
    return failure();
  int64_t dim = type.getDimSize(axis);
  Shape sizes;
  if (ctx.opset >= 13 && ctx.hasInput(1)) {
    const Const *c = ctx.requireConstInput(1, "split");
    if (!c)
      return failure();
    sizes.assign(c->ints.begin(), c->ints.end());
  } else if (std::optional<Shape> attr = ctx.attrInts("split")) {
    sizes = *attr;
  } else {
    int64_t parts = ctx.numOutputs();
    if (parts == 0 || dim % parts != 0)
      return ctx.emitError() << "cannot split dimension " << axis << " of size "
                             << dim << " into " << parts << " equal parts";
    sizes.assign(parts, dim / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != ctx.numOutputs())
    return ctx.emitError() << "has " << ctx.numOutputs()
                           << " outputs but split sizes for " << sizes.size();
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s;
  if (total != dim || llvm::any_of(sizes, [](int64_t s) { return s < 0; }))
    return ctx.emitError() << "split sizes do not add up to dimension " << axis
                           << " (" << dim << ")";
  Shape offsets(type.getRank(), 0), strides(type.getRank(), 1);
  Shape shape(type.getShape());
  for (auto [i, size] : llvm::enumerate(sizes)) {
    shape[axis] = size;
    Value part = createInferred<SliceOp>(ctx, x, offsets, shape, strides);
    if (!part)
      return failure();
    ctx.setOutput(i, part);
    offsets[axis] += size;
  }
  return success();
}

LogicalResult convertTile(NodeContext &ctx) {
  Value x = ctx.input(0);
  const Const *repeats = x ? ctx.requireConstInput(1, "repeats") : nullptr;
  if (!repeats)
    return failure();
  return result(ctx, createInferred<TileOp>(ctx, x, repeats->ints));
}

LogicalResult convertPad(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  // Pads and the value are inputs (models before opset 11 were converted
  // at import).
  Shape pads;
  double value = 0;
  const Const *c = ctx.requireConstInput(1, "pads");
  if (!c)
    return failure();
  pads.assign(c->ints.begin(), c->ints.end());
  if (ctx.hasInput(2)) {
    const Const *v = ctx.requireConstInput(2, "constant_value");
    if (!v)
      return failure();
    value = v->size() ? v->at(0) : 0;
  }
  if (ctx.hasInput(3))
    return ctx.emitError() << "the 'axes' input is not supported";
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return ctx.emitError() << "needs " << 2 * rank << " pads, got "
                           << pads.size();
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return ctx.emitError() << "negative pads (cropping) are not supported";
  std::string modeName = ctx.attrString("mode", "constant");
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode)
    return ctx.emitError() << "unknown mode '" << modeName << "'";
  Builder &builder = ctx.builder;
  return result(
      ctx, createInferred<PadOp>(
               ctx, PadModeAttr::get(builder.getContext(), *mode), x,
               builder.getDenseI64ArrayAttr(ArrayRef(pads).take_front(rank)),
               builder.getDenseI64ArrayAttr(ArrayRef(pads).drop_front(rank)),
               builder.getF64FloatAttr(value)));
}

//===----------------------------------------------------------------------===//
// Reductions and normalisation
//===----------------------------------------------------------------------===//

template <ReduceKind kind> LogicalResult convertReduce(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  Shape axes;
  bool axesAsInput = ctx.opset >= 13 && ctx.node.op_type() == "ReduceSum";
  if (axesAsInput && ctx.hasInput(1)) {
    const Const *c = ctx.requireConstInput(1, "axes");
    if (!c)
      return failure();
    axes.assign(c->ints.begin(), c->ints.end());
  } else if (!axesAsInput) {
    axes = ctx.attrInts("axes").value_or(Shape());
  }
  if (axes.empty()) {
    if (ctx.attrInt("noop_with_empty_axes", 0))
      return result(ctx, x);
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  std::optional<Shape> normalized = normalizedAxes(ctx, axes, rank);
  if (!normalized)
    return failure();
  return result(ctx, createInferred<ReduceOp>(ctx, kind, x, *normalized,
                                              ctx.attrInt("keepdims", 1) != 0));
}

LogicalResult convertGlobalPool(NodeContext &ctx, ReduceKind kind) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (rank < 3)
    return ctx.emitError() << "input must be N x C x D1..";
  Shape axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  return result(ctx, createInferred<ReduceOp>(ctx, kind, x, axes, true));
}

LogicalResult convertGlobalAveragePool(NodeContext &ctx) {
  return convertGlobalPool(ctx, ReduceKind::Mean);
}

LogicalResult convertGlobalMaxPool(NodeContext &ctx) {
  return convertGlobalPool(ctx, ReduceKind::Max);
}

template <typename OpT> LogicalResult convertSoftmax(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (ctx.opset >= 13) {
    int64_t axis = ctx.normalizeAxis(ctx.attrInt("axis", -1), rank);
    if (axis < 0)
      return failure();
    return result(ctx, OpT::create(ctx.builder, ctx.loc, x, axis));
  }
  // Before opset 13 the input is coerced to 2-D at `axis`.
  int64_t axis = ctx.normalizeAxis(ctx.attrInt("axis", 1), rank);
  if (axis < 0)
    return failure();
  Shape flat{ShapedType::getNumElements(type.getShape().take_front(axis)),
             ShapedType::getNumElements(type.getShape().drop_front(axis))};
  Value y = OpT::create(ctx.builder, ctx.loc, reshape(ctx, x, flat), 1);
  return result(ctx, reshape(ctx, y, type.getShape()));
}

/// BatchNormalization with training_mode = 1: normalised with the batch's
/// statistics, which `parallax.batch_sum` makes the global batch's once
/// the step is distributed. Running statistics that are initializers
/// (inputs 3 and 4, as exporters write them) become `statistics` variables
/// assigned at the end of the step; otherwise the node only computes its
/// outputs, as ONNX defines it.
LogicalResult convertTrainingBatchNormalization(NodeContext &ctx) {
  Value x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2),
        runningMean = ctx.input(3), runningVariance = ctx.input(4);
  if (!x || !scale || !bias || !runningMean || !runningVariance)
    return failure();
  VariableOp running[2] = {ctx.inputVariable(3), ctx.inputVariable(4)};
  bool stateful = running[0] && running[1];
  if (stateful)
    for (VariableOp variable : running) {
      variable.setTrainable(false);
      variable.setStatistics(true);
    }
  auto type = cast<RankedTensorType>(x.getType());
  Type element = type.getElementType();
  if (type.getRank() < 2)
    return ctx.emitError() << "input must be N x C x ..., got " << type;
  int64_t channels = type.getDimSize(1);
  if (type.getNumElements() == 0)
    return ctx.emitError() << "training mode needs values to normalise, got "
                              "input "
                           << type;
  int64_t perChannel = type.getNumElements() / channels;
  Shape axes, broadcast(type.getRank(), 1);
  broadcast[1] = channels;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != 1)
      axes.push_back(d);
  auto add = [&](Value a, Value b) { return createInferred<AddOp>(ctx, a, b); };
  auto sub = [&](Value a, Value b) { return createInferred<SubOp>(ctx, a, b); };
  auto mul = [&](Value a, Value b) { return createInferred<MulOp>(ctx, a, b); };
  auto div = [&](Value a, Value b) { return createInferred<DivOp>(ctx, a, b); };
  auto sum = [&](Value v) {
    return createInferred<ReduceOp>(ctx, ReduceKind::Sum, v, axes, false);
  };

  // One pass over x, shifted by the running mean (a variable, so the same
  // on every worker, and close to the batch mean once training has begun:
  // the difference of moments loses little): the sums and the example
  // count travel together, one message per layer when distributed.
  Value shift =
      stateful
          ? runningMean
          : arith::ConstantOp::create(ctx.builder, ctx.loc,
                                      cast<TypedAttr>(ctx.builder.getZeroAttr(
                                          runningMean.getType())));
  Value centered = sub(x, reshape(ctx, shift, broadcast));
  Value count = arith::ConstantOp::create(
      ctx.builder, ctx.loc,
      DenseElementsAttr::get(
          RankedTensorType::get({1}, element),
          ctx.builder.getFloatAttr(element, double(perChannel)).getValue()));
  // One value per channel here: only the sums of two or more devices
  // (synchronised statistics) have a variance; the passes that decide
  // how the batch is split check that it is.
  auto totals = BatchSumOp::create(
      ctx.builder, ctx.loc,
      ValueRange{sum(centered), sum(mul(centered, centered)), count},
      perChannel < 2 ? ctx.builder.getI64IntegerAttr(2) : IntegerAttr());
  Value n = totals.getResult(2);
  Value shiftedMean = div(totals.getResult(0), n);
  Value meanOfSquares = div(totals.getResult(1), n);
  Value variance = createInferred<MaxOp>(
      ctx, sub(meanOfSquares, mul(shiftedMean, shiftedMean)),
      scalar(ctx, element, 0.0));
  Value mean = add(shift, shiftedMean);
  Value y = BatchNormOp::create(
      ctx.builder, ctx.loc, type, x, scale, bias, mean, variance,
      ctx.builder.getF32FloatAttr(ctx.attrFloat("epsilon", 1e-5f)));

  // running = running * momentum + batch * (1 - momentum). ONNX updates the
  // running variance with the population variance, PyTorch (whose export
  // keeps its own semantics) with the unbiased one.
  double momentum = ctx.attrFloat("momentum", 0.9f);
  Value keep = scalar(ctx, element, momentum);
  Value take = scalar(ctx, element, 1.0 - momentum);
  Value batchVariance = variance;
  if (ctx.exportedByPyTorch())
    batchVariance = mul(variance, div(n, sub(n, scalar(ctx, element, 1.0))));
  // One statement per op: the IR's order does not depend on the order
  // the compiler evaluates arguments in.
  Value keptMean = mul(runningMean, keep);
  Value newMean = add(keptMean, mul(mean, take));
  Value keptVariance = mul(runningVariance, keep);
  Value newVariance = add(keptVariance, mul(batchVariance, take));
  if (stateful) {
    ctx.assignAfterGraph(running[0], newMean);
    ctx.assignAfterGraph(running[1], newVariance);
  }
  ctx.setOutput(0, y);
  if (ctx.numOutputs() > 1)
    ctx.setOutput(1, newMean);
  if (ctx.numOutputs() > 2)
    ctx.setOutput(2, newVariance);
  return success();
}

LogicalResult convertBatchNormalization(NodeContext &ctx) {
  int64_t training = ctx.attrInt("training_mode", 0);
  if (training != 0 && training != 1)
    return ctx.emitError() << "training_mode must be 0 or 1, got " << training;
  if (training)
    return convertTrainingBatchNormalization(ctx);
  for (unsigned i = 1; i < ctx.numOutputs(); ++i)
    if (failed(rejectUsedOutput(ctx, i, "running statistics")))
      return failure();
  SmallVector<Value> operands;
  for (unsigned i = 0; i < 5; ++i) {
    Value v = ctx.input(i);
    if (!v)
      return failure();
    operands.push_back(v);
  }
  return result(
      ctx, BatchNormOp::create(
               ctx.builder, ctx.loc, operands[0].getType(), operands[0],
               operands[1], operands[2], operands[3], operands[4],
               ctx.builder.getF32FloatAttr(ctx.attrFloat("epsilon", 1e-5f))));
}

LogicalResult convertLayerNormalization(NodeContext &ctx) {
  if (failed(rejectUsedOutput(ctx, 1, "mean")) ||
      failed(rejectUsedOutput(ctx, 2, "inverse standard deviation")))
    return failure();
  Value x = ctx.input(0), scale = ctx.input(1);
  if (!x || !scale)
    return failure();
  Value bias = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (ctx.hasInput(2) && !bias)
    return failure();
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  int64_t axis = ctx.normalizeAxis(ctx.attrInt("axis", -1), rank);
  if (axis < 0)
    return failure();
  return result(
      ctx, LayerNormOp::create(
               ctx.builder, ctx.loc, x.getType(), x, scale, bias,
               ctx.builder.getI64IntegerAttr(axis),
               ctx.builder.getF32FloatAttr(ctx.attrFloat("epsilon", 1e-5f))));
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Resolves ONNX's pads/auto_pad into explicit leading-then-trailing pads.
std::optional<Shape> resolvePads(NodeContext &ctx, ArrayRef<int64_t> spatial,
                                 ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations) {
  int64_t k = spatial.size();
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    Shape pads = ctx.attrInts("pads").value_or(Shape(2 * k, 0));
    if (static_cast<int64_t>(pads.size()) != 2 * k) {
      ctx.emitError() << "needs " << 2 * k << " pads, got " << pads.size();
      return std::nullopt;
    }
    return pads;
  }
  if (autoPad == "VALID")
    return Shape(2 * k, 0);
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    ctx.emitError() << "unknown auto_pad '" << autoPad << "'";
    return std::nullopt;
  }
  Shape pads(2 * k, 0);
  for (int64_t d = 0; d < k; ++d) {
    int64_t out = llvm::divideCeil(spatial[d], strides[d]);
    int64_t total =
        std::max<int64_t>((out - 1) * strides[d] +
                              (kernel[d] - 1) * dilations[d] + 1 - spatial[d],
                          0);
    int64_t small = total / 2, large = total - small;
    pads[d] = autoPad == "SAME_UPPER" ? small : large;
    pads[d + k] = autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

LogicalResult convertConv(NodeContext &ctx) {
  std::optional<ConvolutionOperands> operands = convolutionOperands(ctx);
  if (!operands)
    return failure();
  auto [x, w, bias] = *operands;
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  if (xType.getRank() < 3 || wType.getRank() != xType.getRank())
    return ctx.emitError() << "input " << xType << " and weight " << wType
                           << " must be N x C x D1.. and M x C/g x K1..";
  int64_t k = xType.getRank() - 2;
  Shape kernel = ctx.attrInts("kernel_shape")
                     .value_or(Shape(wType.getShape().drop_front(2)));
  Shape strides = ctx.attrInts("strides").value_or(Shape(k, 1));
  Shape dilations = ctx.attrInts("dilations").value_or(Shape(k, 1));
  if (static_cast<int64_t>(kernel.size()) != k ||
      kernel != wType.getShape().drop_front(2))
    return ctx.emitError() << "kernel_shape does not match the weight "
                           << wType;
  if (static_cast<int64_t>(strides.size()) != k ||
      static_cast<int64_t>(dilations.size()) != k)
    return ctx.emitError() << "strides and dilations need " << k << " entries";
  std::optional<Shape> pads = resolvePads(ctx, xType.getShape().drop_front(2),
                                          kernel, strides, dilations);
  if (!pads)
    return failure();
  return result(ctx,
                createInferred<ConvOp>(ctx, x, w, bias, strides, *pads,
                                       dilations, ctx.attrInt("group", 1)));
}

template <PoolKind kind> LogicalResult convertPool(NodeContext &ctx) {
  if (failed(rejectUsedOutput(ctx, 1, "indices")))
    return failure();
  Value x = ctx.input(0);
  if (!x)
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() < 3)
    return ctx.emitError() << "input must be N x C x D1..";
  int64_t k = type.getRank() - 2;
  std::optional<Shape> kernel = ctx.attrInts("kernel_shape");
  if (!kernel || static_cast<int64_t>(kernel->size()) != k)
    return ctx.emitError() << "requires kernel_shape with " << k << " entries";
  Shape strides = ctx.attrInts("strides").value_or(Shape(k, 1));
  Shape dilations = ctx.attrInts("dilations").value_or(Shape(k, 1));
  if (llvm::any_of(dilations, [](int64_t d) { return d != 1; }))
    return ctx.emitError() << "dilated pooling is not supported";
  if (ctx.attrInt("storage_order", 0) != 0)
    return ctx.emitError() << "column-major storage_order is not supported";
  if (static_cast<int64_t>(strides.size()) != k)
    return ctx.emitError() << "strides need " << k << " entries";
  std::optional<Shape> pads = resolvePads(ctx, type.getShape().drop_front(2),
                                          *kernel, strides, dilations);
  if (!pads)
    return failure();
  return result(
      ctx, createInferred<PoolOp>(ctx, kind, x, *kernel, strides, *pads,
                                  ctx.attrInt("ceil_mode", 0) != 0,
                                  ctx.attrInt("count_include_pad", 0) != 0));
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

template <typename OpT> LogicalResult convertLoss(NodeContext &ctx) {
  Value input = ctx.input(0), labels = ctx.input(1);
  if (!input || !labels)
    return failure();
  Value weights = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (ctx.hasInput(2) && !weights)
    return failure();
  std::string name = ctx.attrString("reduction", "mean");
  std::optional<LossReduction> reduction = symbolizeLossReduction(name);
  if (!reduction)
    return ctx.emitError() << "unknown reduction '" << name << "'";
  IntegerAttr ignoreIndex;
  if (std::optional<int64_t> index = ctx.attrIntOpt("ignore_index"))
    ignoreIndex = ctx.builder.getI64IntegerAttr(*index);
  if (ctx.outputUsed(1)) {
    // SoftmaxCrossEntropyLoss's optional log_prob output.
    if (!std::is_same_v<OpT, SoftmaxCrossEntropyOp>)
      return ctx.emitError() << "has no output 1";
    ctx.setOutput(1, LogSoftmaxOp::create(ctx.builder, ctx.loc, input, 1));
  }
  return result(ctx, createInferred<OpT>(ctx, *reduction, input, labels,
                                         weights, ignoreIndex));
}

//===----------------------------------------------------------------------===//
// Identity-like and compile-time-only operators
//===----------------------------------------------------------------------===//

LogicalResult convertIdentity(NodeContext &ctx) {
  return result(ctx, ctx.input(0));
}

/// Dropout in training mode: the mask is a counter-based draw
/// (parallax.random_uniform), so it is the same on any number of workers
/// and after a restore, and the backward pass multiplies by the same mask.
LogicalResult convertTrainingDropout(NodeContext &ctx, Value x, double ratio) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() == 0)
    return ctx.emitError() << "training mode needs a batch dimension, got "
                           << type;
  // Attention weights hold a batch and its heads merged in dimension 0
  // (example-major): every row of an example is keyed by that example.
  int64_t rows = 1;
  if (std::optional<int64_t> batch = ctx.batchSize();
      batch && *batch > 0 && type.getDimSize(0) % *batch == 0)
    rows = type.getDimSize(0) / *batch;
  Value uniform = RandomUniformOp::create(
      ctx.builder, ctx.loc, type.clone(ctx.builder.getF32Type()),
      ctx.randomSeed(), ctx.attrInt("seed", 0), ctx.newRandomStream(), rows);
  Value keep = createInferred<GreaterEqualOp>(
      ctx, uniform, scalar(ctx, ctx.builder.getF32Type(), ratio));
  Type element = type.getElementType();
  // x * (keep ? 1 / (1 - ratio) : 0): the factor carries no gradient.
  Value factor = createInferred<WhereOp>(
      ctx, keep, scalar(ctx, element, 1.0 / (1.0 - ratio)),
      scalar(ctx, element, 0.0));
  if (ctx.outputUsed(1))
    ctx.setOutput(1, keep);
  return result(ctx, createInferred<MulOp>(ctx, x, factor));
}

LogicalResult convertDropout(NodeContext &ctx) {
  bool training = false;
  double ratio = 0.5; // ONNX's default
  if (ctx.hasInput(2)) {
    const Const *mode = ctx.requireConstInput(2, "training_mode");
    if (!mode)
      return failure();
    training = mode->size() && mode->ints[0];
  }
  if (training && ctx.hasInput(1)) {
    const Const *r = ctx.requireConstInput(1, "ratio");
    if (!r)
      return failure();
    if (r->size() != 1)
      return ctx.emitError() << "ratio must be a scalar";
    ratio = r->at(0);
  }
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (training && !(ratio >= 0 && ratio < 1))
    return ctx.emitError() << "ratio must be in [0, 1), got " << ratio;
  // Training with ratio 0 drops nothing: the identity, exactly.
  if (training && ratio > 0)
    return convertTrainingDropout(ctx, x, ratio);
  // Nothing is dropped: the mask, where read, is all true.
  if (ctx.outputUsed(1)) {
    auto maskType =
        cast<RankedTensorType>(x.getType()).clone(ctx.builder.getI1Type());
    ctx.setOutput(
        1, arith::ConstantOp::create(ctx.builder, ctx.loc,
                                     DenseElementsAttr::get(maskType, true)));
  }
  return result(ctx, x);
}

/// Shape, Size, Constant, ConstantOfShape, Range always fold; they reach a
/// converter only when an input is not known at compile time.
LogicalResult convertCompileTimeOnly(NodeContext &ctx) {
  return ctx.emitError() << "inputs computed at run time are not supported: "
                            "they must be constants or computable from "
                            "tensor shapes (bind symbolic dimensions with "
                            "--batch-size or --bind)";
}

} // namespace

Converter onnx_import::lookupConverter(StringRef opType) {
  static const llvm::StringMap<Converter> converters = {
      // Elementwise.
      {"Neg", convertUnary<NegOp>},
      {"Abs", convertUnary<AbsOp>},
      {"Sign", convertUnary<SignOp>},
      {"Relu", convertUnary<ReluOp>},
      {"Exp", convertUnary<ExpOp>},
      {"Log", convertUnary<LogOp>},
      {"Sqrt", convertUnary<SqrtOp>},
      {"Reciprocal", convertUnary<ReciprocalOp>},
      {"Sigmoid", convertUnary<SigmoidOp>},
      {"Tanh", convertUnary<TanhOp>},
      {"Erf", convertUnary<ErfOp>},
      {"Floor", convertUnary<FloorOp>},
      {"Ceil", convertUnary<CeilOp>},
      {"Sin", convertUnary<SinOp>},
      {"Cos", convertUnary<CosOp>},
      {"Not", convertUnary<NotOp>},
      {"LeakyRelu", convertLeakyRelu},
      {"Add", convertBinary<AddOp>},
      {"Sub", convertBinary<SubOp>},
      {"Mul", convertBinary<MulOp>},
      {"Div", convertDiv},
      {"Pow", convertPow},
      {"And", convertBinary<AndOp>},
      {"Or", convertBinary<OrOp>},
      {"Xor", convertBinary<XorOp>},
      {"Equal", convertBinary<EqualOp>},
      {"Less", convertBinary<LessOp>},
      {"LessOrEqual", convertBinary<LessEqualOp>},
      {"Greater", convertBinary<GreaterOp>},
      {"GreaterOrEqual", convertBinary<GreaterEqualOp>},
      {"Sum", convertVariadic<AddOp>},
      {"Mean", convertVariadic<AddOp, true>},
      {"Max", convertVariadic<MaxOp>},
      {"Min", convertVariadic<MinOp>},
      {"Where", convertWhere},
      {"Cast", convertCast},
      {"Clip", convertClip},
      {"HardSigmoid", convertHardSigmoid},
      {"HardSwish", convertHardSwish},
      // Linear algebra.
      {"MatMul", convertMatMul},
      {"Gemm", convertGemm},
      // Data movement.
      {"Gather", convertGather},
      {"Reshape", convertReshapeLike<reshapeShape>},
      {"Flatten", convertReshapeLike<flattenShape>},
      {"Squeeze", convertReshapeLike<squeezeShape>},
      {"Unsqueeze", convertReshapeLike<unsqueezeShape>},
      {"Expand", convertExpand},
      {"Transpose", convertTranspose},
      {"Concat", convertConcat},
      {"Slice", convertSlice},
      {"Split", convertSplit},
      {"Tile", convertTile},
      {"Pad", convertPad},
      // Reductions and normalisation.
      {"ReduceSum", convertReduce<ReduceKind::Sum>},
      {"ReduceMean", convertReduce<ReduceKind::Mean>},
      {"ReduceMax", convertReduce<ReduceKind::Max>},
      {"ReduceMin", convertReduce<ReduceKind::Min>},
      {"ReduceProd", convertReduce<ReduceKind::Prod>},
      {"Softmax", convertSoftmax<SoftmaxOp>},
      {"LogSoftmax", convertSoftmax<LogSoftmaxOp>},
      {"BatchNormalization", convertBatchNormalization},
      {"LayerNormalization", convertLayerNormalization},
      // Convolution and pooling.
      {"Conv", convertConv},
      {"ConvTranspose", convertConvTranspose},
      {"Resize", convertResize},
      {"MaxPool", convertPool<PoolKind::Max>},
      {"AveragePool", convertPool<PoolKind::Average>},
      {"GlobalAveragePool", convertGlobalAveragePool},
      {"GlobalMaxPool", convertGlobalMaxPool},
      // Recurrent (unrolled over the static sequence length).
      {"LSTM", convertLSTM},
      {"GRU", convertGRU},
      // Losses.
      {"SoftmaxCrossEntropyLoss", convertLoss<SoftmaxCrossEntropyOp>},
      {"NegativeLogLikelihoodLoss", convertLoss<NegativeLogLikelihoodOp>},
      // Identity-like and compile-time only.
      {"Identity", convertIdentity},
      {"Dropout", convertDropout},
      {"Constant", convertCompileTimeOnly},
      {"Shape", convertCompileTimeOnly},
      {"Size", convertCompileTimeOnly},
      {"ConstantOfShape", convertCompileTimeOnly},
      {"Range", convertCompileTimeOnly},
  };
  auto it = converters.find(opType);
  return it == converters.end() ? nullptr : it->second;
}
