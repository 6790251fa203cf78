//===- UpdateLoops.h - Optimizer updates as generated loops -----*- C++ -*-===//
//
// Part of the Parallax project.
//
// A `parallax.update` as generated loops over the variable, its optimizer
// state and the gradient, instead of a runtime call: the GPU targets run
// them as kernels, so variables and their state never leave the device for
// the update. The rules and their float arithmetic are the runtime's
// (lib/Runtime/Optimizers.cpp), with PyTorch's semantics.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PARALLAXTORUNTIME_UPDATELOOPS_H
#define PARALLAX_CONVERSION_PARALLAXTORUNTIME_UPDATELOOPS_H

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::parallax {

/// Emits the update of `weights` (an f32 memref) and its `state` (memrefs
/// of the same shape, in the rule's order) by the gradient tensor
/// `gradient`, in place: one linalg.generic over the variable.
/// Step-dependent factors (Adagrad's decayed rate, Adam's bias corrections)
/// are computed from the runtime's step number.
void emitDenseUpdateLoop(OpBuilder &builder, ModuleOp module, Location loc,
                         OptimizerAttr config, Value weights, ValueRange state,
                         Value gradient);

/// Emits the lazy update of `weights` (variable `name`) and its `state` by
/// the row-sparse gradient `ids` (tensor<K x i64>) and `rows`
/// (tensor<K x ... x f32>), in place: parallax_rt_row_segments sorts the
/// ids by row on the host (checking them), then one scf.parallel over the
/// distinct rows and a row's elements sums each row's gradient rows in the
/// runtime's order and applies the rule once, so only those rows change
/// and every distinct row is written by one point.
void emitSparseUpdateLoop(OpBuilder &builder, ModuleOp module, Location loc,
                          StringRef name, OptimizerAttr config, Value weights,
                          ValueRange state, Value ids, Value rows);

} // namespace mlir::parallax

#endif // PARALLAX_CONVERSION_PARALLAXTORUNTIME_UPDATELOOPS_H
