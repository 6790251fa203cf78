//===- RuntimeABI.cpp - The runtime's entry points, for the compiler ------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RuntimeABI.h"

#include "parallax/Runtime/Runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

#include <vector>

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::abi;

namespace {

/// What a parameter or result of RuntimeABI.def is.
enum Kind : uint8_t {
  None,
  Str,
  Argv,
  Hyper,
  Ptr,
  I32,
  I64,
  F32,
  F64,
#define PARALLAX_ABI_MEMREF_KIND(suffix, ...) MemRef_##suffix,
  PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_ABI_MEMREF_KIND)
#undef PARALLAX_ABI_MEMREF_KIND
};

/// A parameter: its kind, and for memrefs whether the runtime keeps the
/// pointer past the call (RT_RETAINED_MEMREF).
struct Parameter {
  Parameter(Kind kind, bool retained = false)
      : kind(kind), retained(retained) {}
  Kind kind;
  bool retained;
};

struct Entry {
  const char *symbol;
  Kind result;
  std::vector<Parameter> parameters;
};

#define PARALLAX_ABI_UNPAREN(...) __VA_ARGS__
const std::vector<Entry> &entries() {
  static const std::vector<Entry> table = {
#define RT_RESULT_VOID None
#define RT_RESULT_I32 I32
#define RT_RESULT_I64 I64
#define RT_RESULT_F64 F64
#define RT_NONE
#define RT_STR(n) Str
#define RT_ARGV(n) Argv
#define RT_HYPER(n) Hyper
#define RT_PTR(n) Ptr
#define RT_I32(n) I32
#define RT_I64(n) I64
#define RT_F32(n) F32
#define RT_F64(n) F64
#define RT_MEMREF(T, n) MemRef_##T
#define RT_RETAINED_MEMREF(T, n) Parameter(MemRef_##T, /*retained=*/true)
#define PARALLAX_RT_FUNCTION(name, result, parameters)                         \
  {"parallax_rt_" #name, result,                                               \
   std::vector<Parameter>{PARALLAX_ABI_UNPAREN parameters}},
#include "parallax/Runtime/RuntimeABI.def"
#include "parallax/Runtime/RuntimeABIEnd.def"
  };
  return table;
}

/// The element type of a dtype suffix of PARALLAX_RT_FOR_EACH_DTYPE.
Type elementType(StringRef suffix, MLIRContext *context) {
  Builder b(context);
  return llvm::StringSwitch<Type>(suffix)
      .Case("f32", b.getF32Type())
      .Case("f64", b.getF64Type())
      .Case("f16", b.getF16Type())
      .Case("i64", b.getI64Type())
      .Case("i32", b.getI32Type())
      .Case("i16", b.getI16Type())
      .Case("i8", b.getI8Type())
      .Case("i1", b.getI1Type())
      .Default(Type());
}

Type typeOf(Kind kind, MLIRContext *context) {
  Builder b(context);
  switch (kind) {
  case None:
    return Type();
  case Str:
  case Argv:
  case Hyper:
  case Ptr:
    return LLVM::LLVMPointerType::get(context);
  case I32:
    return b.getI32Type();
  case I64:
    return b.getI64Type();
  case F32:
    return b.getF32Type();
  case F64:
    return b.getF64Type();
#define PARALLAX_ABI_MEMREF_TYPE(suffix, ...)                                  \
  case MemRef_##suffix:                                                        \
    return UnrankedMemRefType::get(elementType(#suffix, context), 0);
    PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_ABI_MEMREF_TYPE)
#undef PARALLAX_ABI_MEMREF_TYPE
  }
  llvm_unreachable("every kind has a type");
}

} // namespace

StringRef abi::symbol(Function function) {
  return entries()[static_cast<unsigned>(function)].symbol;
}

FunctionType abi::type(Function function, MLIRContext *context) {
  const Entry &entry = entries()[static_cast<unsigned>(function)];
  SmallVector<Type> parameters;
  for (Parameter parameter : entry.parameters)
    parameters.push_back(typeOf(parameter.kind, context));
  SmallVector<Type> results;
  if (entry.result != None)
    results.push_back(typeOf(entry.result, context));
  return FunctionType::get(context, parameters, results);
}

bool abi::retainsArgument(Function function, unsigned index) {
  const Entry &entry = entries()[static_cast<unsigned>(function)];
  return index < entry.parameters.size() && entry.parameters[index].retained;
}

bool abi::queuesOnStream(Function function) {
  switch (function) {
  case Function::cuda_matmul_f32:
  case Function::cuda_conv2d_f32:
  case Function::cuda_conv2d_filter_grad_f32:
  case Function::cuda_conv2d_input_grad_f32:
  case Function::cuda_conv3d_f32:
  case Function::cuda_conv3d_filter_grad_f32:
  case Function::cuda_conv3d_input_grad_f32:
  // A GPU program's AllReduce reaches the gradients and results only by
  // copies on the program's stream (a host bucket's copy waits for it).
  case Function::allreduce_add_f32:
  case Function::allreduce_start:
  case Function::allreduce_wait:
    return true;
  default:
    return false;
  }
}

bool abi::answersWithoutMemory(Function function) {
  switch (function) {
  case Function::workers:
  case Function::current_step:
  case Function::random_seed:
    return true;
  default:
    return false;
  }
}

bool abi::answersTheSameEachStep(Function function) {
  return function == Function::workers || function == Function::random_seed;
}

bool abi::copiesOperandsOnDevice(Function function) {
  switch (function) {
  case Function::allreduce_add_f32:
  case Function::register_variable:
#define PARALLAX_ABI_COPIED(suffix, ...)                                       \
  case Function::register_input_##suffix:                                      \
  case Function::read_input_##suffix:                                          \
  case Function::write_output_##suffix:
    PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_ABI_COPIED)
#undef PARALLAX_ABI_COPIED
    return true;
  default:
    return false;
  }
}

std::optional<Function> abi::bySymbol(StringRef name) {
  for (unsigned i = 0; i < entries().size(); ++i)
    if (symbol(static_cast<Function>(i)) == name)
      return static_cast<Function>(i);
  return std::nullopt;
}

#define PARALLAX_ABI_FAMILY(lookup, prefix)                                    \
  std::optional<Function> abi::lookup(Type element) {                          \
    PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_ABI_FAMILY_CASE_##prefix)              \
    return std::nullopt;                                                       \
  }
#define PARALLAX_ABI_CASE(prefix, suffix)                                      \
  if (element == elementType(#suffix, element.getContext()))                   \
    return Function::prefix##_##suffix;
#define PARALLAX_ABI_FAMILY_CASE_read_input(suffix, ...)                       \
  PARALLAX_ABI_CASE(read_input, suffix)
#define PARALLAX_ABI_FAMILY_CASE_write_output(suffix, ...)                     \
  PARALLAX_ABI_CASE(write_output, suffix)
#define PARALLAX_ABI_FAMILY_CASE_register_input(suffix, ...)                   \
  PARALLAX_ABI_CASE(register_input, suffix)
#define PARALLAX_ABI_FAMILY_CASE_allgather(suffix, ...)                        \
  PARALLAX_ABI_CASE(allgather, suffix)
#define PARALLAX_ABI_FAMILY_CASE_broadcast(suffix, ...)                        \
  PARALLAX_ABI_CASE(broadcast, suffix)
PARALLAX_ABI_FAMILY(readInput, read_input)
PARALLAX_ABI_FAMILY(writeOutput, write_output)
PARALLAX_ABI_FAMILY(registerInput, register_input)
PARALLAX_ABI_FAMILY(allGather, allgather)
PARALLAX_ABI_FAMILY(broadcast, broadcast)

Function abi::optimizer(OptimizerKind kind, bool push, bool sparse) {
#define PARALLAX_ABI_RULE(rule)                                                \
  return push ? (sparse ? Function::push_##rule##_sparse_f32                   \
                        : Function::push_##rule##_f32)                         \
              : (sparse ? Function::update_##rule##_sparse_f32                 \
                        : Function::update_##rule##_f32);
  switch (kind) {
  case OptimizerKind::SGD:
    PARALLAX_ABI_RULE(sgd)
  case OptimizerKind::Momentum:
    PARALLAX_ABI_RULE(momentum)
  case OptimizerKind::Adagrad:
    PARALLAX_ABI_RULE(adagrad)
  case OptimizerKind::Adam:
    PARALLAX_ABI_RULE(adam)
  case OptimizerKind::AdamW:
    PARALLAX_ABI_RULE(adamw)
  }
#undef PARALLAX_ABI_RULE
  llvm_unreachable("every optimizer rule has entry points");
}
