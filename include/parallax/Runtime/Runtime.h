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
// to check for errors. The header is C as well as C++ (test/Tools/
// runtime-header.test compiles it as C99).
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_RUNTIME_RUNTIME_H
#define PARALLAX_RUNTIME_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Parses the program's command line (`--inputs DIR --outputs DIR
/// [--repeat N]`); prints usage and exits on anything else.
void parallax_rt_init(int32_t argc, char **argv);

/// How many times the program runs the model (--repeat, default 1): the
/// runs after the first show its warm time, as benchmarks of other
/// frameworks measure it.
int64_t parallax_rt_repeat_count();

/// parallax_rt_read_input_T fills the memref<...xT> with `DIR/<name>.npy`
/// from --inputs, checking its dtype and shape; parallax_rt_write_output_T
/// writes the memref to `DIR/<name>.npy` in --outputs, atomically (a
/// temporary file renamed into place). T is f32, f64, f16, i64, i32, i16,
/// i8 or i1 (numpy float32, float64, float16, int64, int32, int16, int8,
/// bool).
/// The element types of .npy I/O: X(suffix, numpy dtype descr, numpy
/// dtype name).
#define PARALLAX_RT_FOR_EACH_DTYPE(X)                                          \
  X(f32, "<f4", "float32")                                                     \
  X(f64, "<f8", "float64")                                                     \
  X(i64, "<i8", "int64")                                                       \
  X(i32, "<i4", "int32")                                                       \
  X(i1, "|b1", "bool")                                                         \
  X(f16, "<f2", "float16")                                                     \
  X(i16, "<i2", "int16")                                                       \
  X(i8, "|i1", "int8")

#define PARALLAX_RT_IO_DECL(suffix, ...)                                       \
  void parallax_rt_read_input_##suffix(const char *name, int64_t rank,         \
                                       void *descriptor);                      \
  void parallax_rt_write_output_##suffix(const char *name, int64_t rank,       \
                                         void *descriptor);
PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_RT_IO_DECL)
#undef PARALLAX_RT_IO_DECL

/// Declares that integer graph input `name` (indices, class labels) must
/// hold values in [low, high), or `ignored` when `hasIgnored`; `use` says
/// what the values index ("the indices of node 'emb' into 'table' (1000
/// rows)"). Inference programs check --inputs files, training programs
/// every example of --data before the first step; each bad value is an
/// error naming the file, the example, the value and the range. Called
/// before the input is read or registered; ranges of several uses add up.
void parallax_rt_declare_input_range(const char *name, int64_t low,
                                     int64_t high, int32_t hasIgnored,
                                     int64_t ignored, const char *use);

/// Limits the range `name` declared last to a strided region of the
/// input: along `dimension`, the elements offset + k * stride for
/// 0 <= k < size (dimension 0 counts within a batch). Only elements in
/// the region are checked (a column of ids that indexes one table).
void parallax_rt_declare_input_region(const char *name, int64_t dimension,
                                      int64_t offset, int64_t size,
                                      int64_t stride);

/// Generated code calls this when an index it computed is outside
/// [low, high) (`where` names the node and what it indexes); ends the
/// program (the job) with that message.
void parallax_rt_index_out_of_range(const char *where, int64_t value,
                                    int64_t low, int64_t high);

/// C += A @ B for f32 memrefs of rank 2, or rank 3 (a batch), whose last
/// dimension has unit stride (C), or either of the last two (A and B: a
/// unit stride before the last reads a transposed view): the lowering of
/// linalg.matmul and linalg.batch_matmul, through OpenBLAS's cblas_sgemm.
void parallax_rt_matmul_f32(int64_t rankA, void *a, int64_t rankB, void *b,
                            int64_t rankC, void *c);

//===----------------------------------------------------------------------===//
// Training programs (lib/Runtime/Training.cpp)
//===----------------------------------------------------------------------===//

/// Parses `--data DIR [--steps S] [--metrics FILE] [--metrics-all-ranks]
/// [--save DIR] [--save-every K] [--restore DIR] [--log-every K]`; prints
/// usage and exits on anything else. Joins the MPI job when an MPI
/// launcher started the program (from then on every error aborts the
/// whole job, naming this rank).
void parallax_rt_train_init(int32_t argc, char **argv);

/// The number of workers the program was compiled for (0: one worker, no
/// distribution; -1: any number); a different MPI world size is an error.
void parallax_rt_set_workers(int64_t workers);

/// Registers a variable's storage (a trainable variable, or optimizer
/// state when `isState`) for checkpoints, under its name; `partitions` > 0
/// for a parameter-server variable (or its state), served from server
/// `firstServer` on, whose rows are gathered from their servers before a
/// checkpoint is written.
void parallax_rt_register_variable(const char *name, int32_t isState,
                                   int64_t partitions, int64_t firstServer,
                                   int64_t rank, void *descriptor);

/// parallax_rt_register_input_T registers the memref<...xT> buffer of graph
/// input `name`: each step fills it with the step's examples from
/// `DIR/<name>.npy`. The buffer's leading dimension is the batch. T as for
/// parallax_rt_read_input_T.
#define PARALLAX_RT_REGISTER_DECL(suffix, ...)                                 \
  void parallax_rt_register_input_##suffix(const char *name, int64_t rank,     \
                                           void *descriptor);
PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_RT_REGISTER_DECL)
#undef PARALLAX_RT_REGISTER_DECL

/// Checks the data (dtypes, shapes, enough examples for the steps),
/// restores `--restore`, opens `--metrics`; returns the first step to run
/// (0, or the restored checkpoint's step).
int64_t parallax_rt_begin();

/// The step to stop before (`--steps`, or every full batch of the data).
int64_t parallax_rt_end_step();

/// Fills every registered input with the examples of `step`.
void parallax_rt_load_batch(int64_t step);

/// The 1-based number of the update being applied (Adam's bias correction,
/// Adagrad's learning-rate decay).
int64_t parallax_rt_current_step();

/// Records the finished step: metrics line, progress line on stderr every
/// `--log-every` steps, checkpoint every `--save-every` steps.
void parallax_rt_step_end(int64_t step, float loss);

/// Writes the final checkpoint (`--save`); returns the exit status.
int32_t parallax_rt_finish();

/// In-place optimizer updates, one pair per rule of #parallax.optimizer:
/// parallax_rt_update_<rule>_f32(name, variable, state..., gradient,
/// lr, momentum, beta1, beta2, epsilon, weight_decay, lr_decay, nesterov)
/// and parallax_rt_update_<rule>_sparse_f32 with (indices, rows) in place
/// of the gradient (repeated rows are summed, only those rows change).
/// Rules: sgd (no state), momentum (momentum_buffer), adagrad (sum), adam
/// and adamw (exp_avg, exp_avg_sq). Declared by generated code only.

/// parallax_rt_push_<rule>[_sparse]_f32(name, partitions, firstServer,
/// variable, state..., gradient | indices + rows, hyper-parameters): the
/// gradient of a parameter-server variable goes to the servers of its
/// partitions, which average it over the workers and apply the rule to their
/// rows. Declared by generated code only.

//===----------------------------------------------------------------------===//
// Collectives (lib/Runtime/Collectives.cpp, lib/Runtime/ParameterStore.cpp)
//===----------------------------------------------------------------------===//

/// Adds a gradient to AllReduce bucket `bucket` (copied at once); `out`
/// receives the reduced values at the bucket's wait. `name` is what the
/// traffic is counted under.
void parallax_rt_allreduce_add_f32(int64_t bucket, const char *name,
                                   int64_t rankIn, void *in, int64_t rankOut,
                                   void *out);
/// Starts the bucket's reduction and returns; `reduction` is
/// #parallax.reduction's value: 0 sum, 1 mean, 2 max, 3 min.
void parallax_rt_allreduce_start(int64_t bucket, int32_t reduction);
/// Waits for the bucket's reduction and fills the results.
void parallax_rt_allreduce_wait(int64_t bucket);

/// parallax_rt_allgather_T(name, in, out): out = every worker's `in`
/// concatenated along dimension 0 in rank order.
/// parallax_rt_broadcast_T(in, out, root): out = worker root's `in`.
#define PARALLAX_RT_COLLECTIVE_DECL(suffix, ...)                               \
  void parallax_rt_allgather_##suffix(const char *name, int64_t rankIn,        \
                                      void *in, int64_t rankOut, void *out);   \
  void parallax_rt_broadcast_##suffix(                                         \
      int64_t rankIn, void *in, int64_t rankOut, void *out, int64_t root);
PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_RT_COLLECTIVE_DECL)
#undef PARALLAX_RT_COLLECTIVE_DECL

/// out[i] = row ids[i] of parameter-server variable `name` (`partitions`
/// partitions served from `firstServer` on), fetched from their servers.
void parallax_rt_pull_rows_f32(const char *name, int64_t partitions,
                               int64_t firstServer, int64_t rankW,
                               void *variable, int64_t rankI, void *ids,
                               int64_t rankO, void *out);
/// Brings every row of `variable` up to date from its servers.
void parallax_rt_pull_f32(const char *name, int64_t partitions,
                          int64_t firstServer, int64_t rankW, void *variable);

/// Seconds since an arbitrary origin, for timing.
double parallax_rt_now();

/// Prints "WHAT: SECONDS s" on stderr when the environment variable
/// PARALLAX_TIMING is set; programs report the model's run time with it.
void parallax_rt_report_time(const char *what, double start, double end);

#ifdef __cplusplus
}
#endif

#endif // PARALLAX_RUNTIME_RUNTIME_H
