//===- ParallaxOps.h - Parallax operations ----------------------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_IR_PARALLAXOPS_H
#define PARALLAX_DIALECT_PARALLAX_IR_PARALLAXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "parallax/Dialect/Parallax/IR/ParallaxInterfaces.h.inc"

namespace mlir::parallax {

/// The values of model variables, ordering reads and writes of variables.
struct VariableResource : public SideEffects::Resource::Base<VariableResource> {
  StringRef getName() final { return "parallax::Variable"; }
};

/// The communicator shared by all collectives of a worker: collectives must
/// execute in program order on every worker, so none may be reordered with
/// another or erased.
struct CommunicationResource
    : public SideEffects::Resource::Base<CommunicationResource> {
  StringRef getName() final { return "parallax::Communication"; }
};

/// Returns true if `op` may take part in a collective: it, or an op nested in
/// it, has an effect on the CommunicationResource, or its effects are unknown
/// (a call, say). Transformations must not reorder collectives across it.
bool mayCommunicate(Operation *op);

} // namespace mlir::parallax

#define GET_OP_CLASSES
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h.inc"

#define GET_OP_CLASSES
#include "parallax/Dialect/Parallax/IR/ParallaxComputeOps.h.inc"

namespace mlir::parallax {

/// The transposed convolution of `input` (N x M x D1..Dk) with a convolution
/// filter `filter` (M x C/groups x K1..Kk), to N x C x `outSpatial`: the
/// adjoint of a convolution with these strides, dilations and leading
/// pads. Built as the input dilated by the strides, padded (or cropped) to
/// a full correlation, convolved with the filter flipped in space and with
/// each group's channels swapped. A convolution's input gradient, and ONNX
/// ConvTranspose (whose weight is such a filter).
Value buildTransposedConvolution(OpBuilder &builder, Location loc,
                                 Value input, Value filter, Value bias,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations,
                                 ArrayRef<int64_t> leadingPads,
                                 ArrayRef<int64_t> outSpatial, int64_t groups);

} // namespace mlir::parallax

#endif // PARALLAX_DIALECT_PARALLAX_IR_PARALLAXOPS_H
