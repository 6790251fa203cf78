//===- Runtime.h - The C ABI that compiled Parallax programs call ---------===//
//
// Part of the Parallax project.
//
// Generated code calls these functions; they are plain C symbols so the
// compiler can declare them as `func.func private`. Memrefs arrive in MLIR's
// unranked calling convention: a rank and a pointer to a strided memref
// descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
// Every failure prints a message naming the file, the expected and the
// found dtype or shape, and exits with status 1: generated code never has
// to check for errors.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_RUNTIME_RUNTIME_H
#define PARALLAX_RUNTIME_RUNTIME_H

#include <cstdint>

extern "C" {

/// Parses the program's command line (`--inputs DIR --outputs DIR`);
/// prints usage and exits on anything else.
void parallax_rt_init(int32_t argc, char **argv);

/// parallax_rt_read_input_T fills the memref<...xT> with `DIR/<name>.npy`
/// from --inputs, checking its dtype and shape; parallax_rt_write_output_T
/// writes the memref to `DIR/<name>.npy` in --outputs, atomically (a
/// temporary file renamed into place). T is f32, f64, f16, i64, i32, i16,
/// i8 or i1 (numpy float32, float64, float16, int64, int32, int16, int8,
/// bool).
#define PARALLAX_RT_IO_DECL(suffix)                                           \
  void parallax_rt_read_input_##suffix(const char *name, int64_t rank,       \
                                       void *descriptor);                     \
  void parallax_rt_write_output_##suffix(const char *name, int64_t rank,     \
                                         void *descriptor);
PARALLAX_RT_IO_DECL(f32)
PARALLAX_RT_IO_DECL(f64)
PARALLAX_RT_IO_DECL(i64)
PARALLAX_RT_IO_DECL(i32)
PARALLAX_RT_IO_DECL(i1)
PARALLAX_RT_IO_DECL(f16)
PARALLAX_RT_IO_DECL(i16)
PARALLAX_RT_IO_DECL(i8)
#undef PARALLAX_RT_IO_DECL

/// C += A @ B for f32 memrefs of rank 2, or rank 3 (a batch), whose last
/// dimension has unit stride: the lowering of linalg.matmul and
/// linalg.batch_matmul, through OpenBLAS's cblas_sgemm.
void parallax_rt_matmul_f32(int64_t rankA, void *a, int64_t rankB, void *b,
                            int64_t rankC, void *c);

/// Seconds since an arbitrary origin, for timing.
double parallax_rt_now();

/// Prints "WHAT: SECONDS s" on stderr when the environment variable
/// PARALLAX_TIMING is set; programs report the model's run time with it.
void parallax_rt_report_time(const char *what, double start, double end);
}

#endif // PARALLAX_RUNTIME_RUNTIME_H
