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

/// A symbol-safe rendering of the ONNX node a location comes from, or "".
std::string nodeNameOf(Location loc);

} // namespace mlir::parallax

#endif // PARALLAX_CODEGEN_CPU_KERNELS_H
