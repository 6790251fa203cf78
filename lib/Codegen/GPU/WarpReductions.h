//===- WarpReductions.h - Which reductions a warp shares out ----*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Codegen/GPU.
//
// --parallax-gpu-map-to-launches gives a reduction a warp per output where
// the lanes read consecutive elements; --parallax-gpu-split-reductions
// leaves the rows such a warp reduces in few steps to it. Both ask here,
// and both combine partials with the reduction's own combiner.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_CODEGEN_GPU_WARPREDUCTIONS_H
#define PARALLAX_LIB_CODEGEN_GPU_WARPREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::parallax {

/// Lanes of a warp.
constexpr int64_t kWarpSize = 32;

/// How a warp reduces each output of an op: its one combiner (an
/// `arith.addf`, `maximumf`...) and the combiner's neutral element, each
/// lane's start.
struct WarpReduction {
  Operation *combiner;
  TypedAttr neutral;
  /// Points reduced into each output.
  int64_t reduced;
};

/// The one combiner of `op`'s reduction (its `arith.addf`, `maximumf`...)
/// when it is a binary op with a neutral element, else null.
Operation *neutralCombiner(linalg::GenericOp op);

/// `combiner` applied to `lhs` and `rhs` at `builder`'s insertion point,
/// with its attributes (fastmath flags).
Value combine(OpBuilder &builder, Location loc, Operation *combiner, Value lhs,
              Value rhs);

/// The warp reduction of `op` (tensors or buffers): one output, one
/// 32-bit float or integer combiner with a neutral element, static reduced
/// loops, and every input the reduced loops index read along its last
/// dimension by the last reduced loop (with the parallel loops put first,
/// the innermost: lanes on consecutive points read consecutive elements).
/// A column sum, whose last reduced loop reads across rows, has none.
std::optional<WarpReduction> warpReductionOf(linalg::GenericOp op);

} // namespace mlir::parallax

#endif // PARALLAX_LIB_CODEGEN_GPU_WARPREDUCTIONS_H
