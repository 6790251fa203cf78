//===- DenseUpdates.h - Optimizer updates as generated loops ----*- C++ -*-===//
//
// Part of the Parallax project.
//
// A dense `parallax.update` as one linalg.generic over the variable, its
// optimizer state and the gradient, instead of a runtime call: the GPU
// targets run it as a kernel, so variables and their state never leave the
// device for the update. The rules and their float arithmetic are the
// runtime's (lib/Runtime/Optimizers.cpp), with PyTorch's semantics.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PARALLAXTORUNTIME_DENSEUPDATES_H
#define PARALLAX_CONVERSION_PARALLAXTORUNTIME_DENSEUPDATES_H

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::parallax {

/// Emits the update of `weights` (an f32 memref) and its `state` (memrefs
/// of the same shape, in the rule's order) by the gradient tensor
/// `gradient`, in place. Step-dependent factors (Adagrad's decayed rate,
/// Adam's bias corrections) are computed from the runtime's step number.
void emitDenseUpdateLoop(OpBuilder &builder, ModuleOp module, Location loc,
                         OptimizerAttr config, Value weights, ValueRange state,
                         Value gradient);

} // namespace mlir::parallax

#endif // PARALLAX_CONVERSION_PARALLAXTORUNTIME_DENSEUPDATES_H
