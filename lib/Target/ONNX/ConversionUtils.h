//===- ConversionUtils.h - Helpers of the ONNX op converters ----*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_TARGET_ONNX_CONVERSIONUTILS_H
#define PARALLAX_LIB_TARGET_ONNX_CONVERSIONUTILS_H

#include "Importer.h"

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::parallax::onnx_import {

/// Builds `OpT` through its (resultTypes, args...) builder, inferring the
/// result types first: an inference failure is reported on the node (with
/// the op's own explanation) rather than aborting as the inferring builders
/// do. Like createOrFold, the op folds where it can.
template <typename OpT, typename... Args>
Value createInferred(NodeContext &ctx, Args &&...args) {
  OperationState state(ctx.loc, OpT::getOperationName());
  MLIRContext *context = ctx.builder.getContext();
  OpT::build(ctx.builder, state, TypeRange{NoneType::get(context)},
             std::forward<Args>(args)...);
  state.types.clear();
  SmallVector<Type> types;
  std::string reason;
  LogicalResult inferred = failure();
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
      reason = diag.str();
      return success();
    });
    inferred =
        OpT::inferReturnTypes(context, state.location, state.operands,
                              state.attributes.getDictionary(context),
                              state.getRawProperties(), state.regions, types);
  }
  if (failed(inferred)) {
    ctx.emitError() << reason;
    return Value();
  }
  state.addTypes(types);
  Operation *op = ctx.builder.create(state);
  SmallVector<Value, 1> folded;
  if (succeeded(ctx.builder.tryFold(op, folded)) && !folded.empty()) {
    op->erase();
    return folded.front();
  }
  return op->getResult(0);
}

/// A rank-0 constant of `elementType` holding `value`.
inline Value scalar(NodeContext &ctx, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (auto floatType = dyn_cast<FloatType>(elementType))
    attr = DenseElementsAttr::get(
        type, ctx.builder.getFloatAttr(floatType, value).getValue());
  else
    attr = DenseElementsAttr::get(
        type, APInt(elementType.getIntOrFloatBitWidth(),
                    static_cast<int64_t>(value), /*isSigned=*/true));
  return arith::ConstantOp::create(ctx.builder, ctx.loc, cast<TypedAttr>(attr));
}

inline Value castTo(NodeContext &ctx, Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return ctx.builder.createOrFold<CastOp>(ctx.loc, type.clone(elementType),
                                          value);
}

inline Value reshape(NodeContext &ctx, Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return ctx.builder.createOrFold<ReshapeOp>(ctx.loc, type.clone(shape), value);
}

/// Sets output 0 to `value`; fails when `value` is null (already reported).
inline LogicalResult result(NodeContext &ctx, Value value) {
  if (!value)
    return failure();
  ctx.setOutput(0, value);
  return success();
}

/// The input, weight and optional bias of Conv and ConvTranspose; nullopt
/// when one could not be read (already reported).
struct ConvolutionOperands {
  Value input, weight, bias;
};
inline std::optional<ConvolutionOperands>
convolutionOperands(NodeContext &ctx) {
  Value x = ctx.input(0), w = ctx.input(1);
  Value bias = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (!x || !w || (ctx.hasInput(2) && !bias))
    return std::nullopt;
  return ConvolutionOperands{x, w, bias};
}

/// Converters defined outside OpConversions.cpp.
LogicalResult convertLSTM(NodeContext &ctx);
LogicalResult convertGRU(NodeContext &ctx);
LogicalResult convertConvTranspose(NodeContext &ctx);
LogicalResult convertResize(NodeContext &ctx);

} // namespace mlir::parallax::onnx_import

#endif // PARALLAX_LIB_TARGET_ONNX_CONVERSIONUTILS_H
