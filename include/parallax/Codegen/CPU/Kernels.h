//===- Kernels.h - The kernels of --parallax-outline-kernels ----*- C++ -*-===//
//
// Part of the Parallax project. What the passes that run after
// --parallax-outline-kernels know about its kernels.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CODEGEN_CPU_KERNELS_H
#define PARALLAX_CODEGEN_CPU_KERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <string>

namespace mlir::parallax {

/// The linalg op of an outlined kernel, or null when `function` is not
/// one (outlining leaves linalg ops in kernels only).
linalg::LinalgOp kernelOpOf(func::FuncOp function);

/// Points a loop that --parallax-parallelize-kernels shares out inside
/// reductions must have within it, so that each chunk's pass reads runs of
/// memory rather than single elements (a column sum has one: it is left
/// to --parallax-split-outer-reductions).
constexpr int64_t kMinPointsInsideSharedLoop = 16;

/// The most equal parts, up to `most`, that `extent` divides into; 1 where
/// no more than one does. Parts fixed by the shape, never the thread count.
inline int64_t mostEqualParts(int64_t extent, int64_t most) {
  for (int64_t parts = std::min(extent, most); parts > 1; --parts)
    if (extent % parts == 0)
      return parts;
  return 1;
}

/// The edge of the square tiles --parallax-vectorize-transposes moves
/// through registers: 8 rows of 8 32-bit elements (AVX's 256-bit vectors).
constexpr int64_t kTransposeTile = 8;

/// Whether `op` is a transpose that --parallax-vectorize-transposes
/// rewrites: buffers of static shape and 32-bit elements, contiguous
/// innermost dimensions, the innermost one moved, and the two dimensions
/// it exchanges at least a tile long.
bool isTileTransposable(linalg::LinalgOp op);

/// Whether loop `position` of such a transpose is one of the two it steps
/// through by tiles.
bool isTiledTransposeDim(linalg::LinalgOp op, int64_t position);

/// Whether one of those two is not a multiple of a tile (it ends in
/// partial tiles, read and written through masks).
bool hasTransposeRemainder(linalg::LinalgOp op);

/// Builds such a transpose, before `op` (which it leaves in place), as
/// loops over the output's dimensions: the others outermost, in order, and
/// within them the two exchanged ones stepping by a tile over their whole
/// tiles, around vector loads, one shuffle and vector stores; then the
/// partial tiles past them, through masked loads and stores. Returns the
/// loops, by output dimension (a tiled dimension's covers its whole tiles
/// only). Fails where `op` does not qualify.
FailureOr<SmallVector<scf::ForOp>> transposeByTiles(RewriterBase &rewriter,
                                                    linalg::LinalgOp op);

/// A symbol-safe rendering of the ONNX node a location comes from, or "".
std::string nodeNameOf(Location loc);

} // namespace mlir::parallax

#endif // PARALLAX_CODEGEN_CPU_KERNELS_H
