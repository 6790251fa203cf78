//===- RuntimeABI.h - The runtime's entry points, for the compiler -*- C++ -*-//
//
// Part of the Parallax project.
//
// The compiler's view of include/parallax/Runtime/RuntimeABI.def: one
// enumerator per entry point, its symbol and its MLIR function type.
// Lowerings declare and call runtime functions only through here
// (RuntimeCalls.h: callRuntime), so a callee's name and signature come
// from the one list the runtime is declared from.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PARALLAXTORUNTIME_RUNTIMEABI_H
#define PARALLAX_CONVERSION_PARALLAXTORUNTIME_RUNTIMEABI_H

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"
#include "parallax/Runtime/Runtime.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace mlir::parallax::abi {

/// Every entry point of the runtime.
enum class Function : unsigned {
#define PARALLAX_RT_FUNCTION(name, result, parameters) name,
#include "parallax/Runtime/RuntimeABI.def"
};

/// The C symbol of `function` ("parallax_rt_...").
StringRef symbol(Function function);

/// The MLIR type of `function`: strings and argv as !llvm.ptr, memrefs as
/// memref<*xT>, numbers as themselves.
FunctionType type(Function function, MLIRContext *context);

/// Whether `function` keeps the pointer of memref parameter `index` past
/// the call (RT_RETAINED_MEMREF): the buffer must live until the runtime
/// is done with it, not just until the call returns.
bool retainsArgument(Function function, unsigned index);

/// Whether a --target cuda program's call of `function` only queues work
/// on the program's stream and returns (cuBLAS's products, cuDNN's
/// convolutions, the AllReduce's copies and NCCL's reduction), or waits
/// for the stream itself before the host reads what the stream wrote (an
/// AllReduce through host memory): the host need not wait for the stream
/// before it, and the stream orders what reads its results.
bool queuesOnStream(Function function);

/// Whether `function` only answers a question about the run (the number
/// of workers, the update's number, the seed), reading and writing no
/// buffer: the host need not wait for the stream before calling it. Its
/// answer may change from step to step (it is not stream work).
bool answersWithoutMemory(Function function);

/// Whether `function` answers without memory (above), with the same answer
/// at every step of a run (the number of workers, the seed): a CUDA graph
/// captured at one step may replay what the host computed from it.
bool answersTheSameEachStep(Function function);

/// Whether a --target cuda program's runtime reaches the buffers it hands
/// `function` only by copies through the driver and device collectives,
/// never by host loads and stores, then or later (the AllReduce's
/// gradients and results; registered variables and training inputs,
/// which checkpoints and the data loader copy; an inference program's
/// inputs and outputs): they may be device memory.
bool copiesOperandsOnDevice(Function function);

/// The entry point whose symbol is `name`, if one is.
std::optional<Function> bySymbol(StringRef name);

/// The typed families, by element type (std::nullopt: no .npy dtype).
std::optional<Function> readInput(Type element);
std::optional<Function> writeOutput(Type element);
std::optional<Function> registerInput(Type element);
std::optional<Function> allGather(Type element);
std::optional<Function> broadcast(Type element);

/// The update (push = false) or push of an optimizer rule, dense or
/// row-sparse.
Function optimizer(OptimizerKind kind, bool push, bool sparse);

} // namespace mlir::parallax::abi

#endif // PARALLAX_CONVERSION_PARALLAXTORUNTIME_RUNTIMEABI_H
