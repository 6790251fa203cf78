//===- HostEffects.h - What the host's ops do to memory ---------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Codegen/GPU.
//
// Passes that reorder the host's ops around the stream's work
// (parallax-gpu-stream-ordered-calls, -merge-single-block-launches) may
// move past a kernel or a library call only host ops that touch no
// memory; they and parallax-gpu-device-memory ask the runtime's ABI what
// a call of the runtime does with its operands.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_CODEGEN_GPU_HOSTEFFECTS_H
#define PARALLAX_LIB_CODEGEN_GPU_HOSTEFFECTS_H

#include "parallax/Conversion/ParallaxToRuntime/RuntimeABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

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

/// The runtime's entry point `op` calls, if it is a call of one.
inline std::optional<abi::Function> calledRuntimeFunction(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  return call ? abi::bySymbol(call.getCallee()) : std::nullopt;
}

} // namespace mlir::parallax

#endif // PARALLAX_LIB_CODEGEN_GPU_HOSTEFFECTS_H
