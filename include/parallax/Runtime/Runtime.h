//===- Runtime.h - The C ABI that compiled Parallax programs call ---------===//
//
// Part of the Parallax project.
//
// Declares every entry point of the runtime from its one list,
// RuntimeABI.def, which documents each: plain C symbols (this header is C
// as well as C++; test/Tools/runtime-header.test compiles it as C99) that
// the compiler declares as `func.func private` from the same list. A
// memref parameter `x` is passed as `int64_t xRank, void *x`: MLIR's
// unranked convention, a rank and a pointer to a strided descriptor; the
// hyper-parameters of an optimizer as a pointer to ParallaxHyperParameters.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_RUNTIME_RUNTIME_H
#define PARALLAX_RUNTIME_RUNTIME_H

#include <stdint.h>

/// The element types of .npy I/O and of the typed entry points:
/// X(suffix, numpy dtype descr, numpy dtype name).
#define PARALLAX_RT_FOR_EACH_DTYPE(X)                                          \
  X(f32, "<f4", "float32")                                                     \
  X(f64, "<f8", "float64")                                                     \
  X(i64, "<i8", "int64")                                                       \
  X(i32, "<i4", "int32")                                                       \
  X(i1, "|b1", "bool")                                                         \
  X(f16, "<f2", "float16")                                                     \
  X(i16, "<i2", "int16")                                                       \
  X(i8, "|i1", "int8")

/// parallax_rt_set_workers' sentinels: a step that was not distributed
/// (one worker), and one distributed for any number of workers (read from
/// the MPI world at run time). Any other value is the one world size the
/// program was planned for.
enum {
  PARALLAX_RT_WORKERS_ONE = 0,
  PARALLAX_RT_WORKERS_ANY = -1,
};

/// parallax_rt_allreduce_start's reductions (#parallax.reduction's
/// values, checked by the compiler).
enum {
  PARALLAX_RT_REDUCE_SUM = 0,
  PARALLAX_RT_REDUCE_MEAN = 1,
  PARALLAX_RT_REDUCE_MAX = 2,
  PARALLAX_RT_REDUCE_MIN = 3,
};

/// An optimizer's hyper-parameters (#parallax.optimizer), which every
/// update and push takes by pointer (RT_HYPER): the compiler emits one
/// constant per optimizer configuration. As many doubles as fields, in this
/// order, so the compiler lays it out as an array of 8 f64.
typedef struct ParallaxHyperParameters {
  double lr, momentum, beta1, beta2, epsilon, weight_decay, lr_decay;
  double nesterov; /* 0 or 1 */
} ParallaxHyperParameters;

#ifdef __cplusplus
extern "C" {
#endif

#define RT_RESULT_VOID void
#define RT_RESULT_I32 int32_t
#define RT_RESULT_I64 int64_t
#define RT_RESULT_F64 double
#define RT_NONE void
#define RT_STR(n) const char *n
#define RT_ARGV(n) char **n
#define RT_I32(n) int32_t n
#define RT_I64(n) int64_t n
#define RT_F32(n) float n
#define RT_F64(n) double n
#define RT_MEMREF(T, n) int64_t n##Rank, void *n
#define RT_RETAINED_MEMREF(T, n) RT_MEMREF(T, n)
#define RT_HYPER(n) const ParallaxHyperParameters *n
#define RT_PTR(n) void *n
#define PARALLAX_RT_FUNCTION(name, result, parameters)                         \
  result parallax_rt_##name parameters;
#include "parallax/Runtime/RuntimeABI.def"
#include "parallax/Runtime/RuntimeABIEnd.def"

#ifdef __cplusplus
}
#endif

#endif // PARALLAX_RUNTIME_RUNTIME_H
