//===- HostEffects.h - Host ops that touch no memory ------------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Codegen/GPU.
//
// Passes that reorder the host's ops around the stream's work
// (parallax-gpu-stream-ordered-calls, -merge-single-block-launches) may
// move past a kernel or a library call only host ops that touch no
// memory.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_CODEGEN_GPU_HOSTEFFECTS_H
#define PARALLAX_LIB_CODEGEN_GPU_HOSTEFFECTS_H

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::parallax {

/// Whether `op` reads, writes and frees no memory (it may allocate).
inline bool touchesNoMemory(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.hasEffect<MemoryEffects::Allocate>() &&
         !effects.hasEffect<MemoryEffects::Read>() &&
         !effects.hasEffect<MemoryEffects::Write>() &&
         !effects.hasEffect<MemoryEffects::Free>();
}

} // namespace mlir::parallax

#endif // PARALLAX_LIB_CODEGEN_GPU_HOSTEFFECTS_H
