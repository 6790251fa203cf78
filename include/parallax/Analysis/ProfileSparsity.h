//===- ProfileSparsity.h - Measured alpha from sample data ------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_ANALYSIS_PROFILESPARSITY_H
#define PARALLAX_ANALYSIS_PROFILESPARSITY_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::parallax {

/// Replaces the static alpha bound of every sparse variable of the training
/// step with the mean number of unique rows a global step of `workers`
/// workers looks up in the sample data `dataDir` (`<graph input>.npy`, the
/// training-data layout), over every full global step the data holds.
/// The row ids are computed from the data by evaluating the ops between
/// the graph inputs and the gradient's indices (reshape, cast, slice,
/// concat, constants); anything else is an error naming the op.
LogicalResult measureSparsity(ModuleOp module, StringRef dataDir,
                              int64_t workers);

} // namespace mlir::parallax

#endif // PARALLAX_ANALYSIS_PROFILESPARSITY_H
