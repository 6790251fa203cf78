//===- Passes.td - Parallax lowering passes ----------------*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PASSES_TD
#define PARALLAX_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertParallaxToLinalg : Pass<"convert-parallax-to-linalg"> {
  let summary = "Lower Parallax compute ops to linalg, tensor, arith and math";
  let description = [{
    Rewrites every Parallax compute op on tensors into upstream ops on
    tensors: elementwise ops (numpy broadcasting expressed in the indexing
    maps) become `linalg.generic`, so chains of them fuse with upstream
    elementwise fusion; `matmul` and `gemm` become `linalg.matmul` /
    `linalg.batch_matmul` (batch dimensions broadcast and collapsed);
    `transpose` becomes `linalg.transpose`; `reshape` a collapse and an
    expand; `slice` a strided `tensor.extract_slice` (reversed by a generic
    for negative strides); `concat` `tensor.insert_slice`s; constant `pad`
    `tensor.pad`; `gather`, `tile`, reflect/edge `pad`, reductions, softmax,
    normalisations, convolution (grouped, dilated, N-d), pooling and the
    classification losses become `linalg.generic`s.

    Every index a kernel reads memory with (gather indices, class labels)
    is checked: a bad one calls `parallax_rt_index_out_of_range` (declared
    in the enclosing module), which ends the program naming the node.

    A `parallax.batch_sum` left here sums one device's values (a
    distributed step's are collectives by now): one with `min_devices`
    above 1 is an error naming its node.

    Precondition: static shapes (as the importer guarantees), ops inside a
    module. Postcondition: no compute op remains. Variables, row-sparse values and
    collectives are left for the runtime lowering. Convolutions and matrix
    products are plain loop nests at this point; making them fast (tiling,
    vectorization or BLAS calls) is a separate step.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ConvertParallaxVariables : Pass<"convert-parallax-variables",
                                    "::mlir::ModuleOp"> {
  let summary = "Variables to memref globals, optimizer updates to runtime calls";
  let description = [{
    Lowers the stateful part of a training step, on tensors, before
    bufferization:

    * `parallax.variable` becomes a mutable, 64-byte aligned
      `memref.global` of the same name holding the initial value, marked
      `parallax.variable = "trainable"`, `"state"` or `"statistics"` so the
      program's entry point can register it with the runtime (checkpoints);
    * `parallax.read` becomes `memref.get_global` and a `restrict`
      `bufferization.to_tensor`: a view of the variable, never a copy;
    * `parallax.assign` becomes a copy of the value into the global (the
      step's last writes, after every read of the variable);
    * `parallax.random_uniform` becomes one linalg.generic computing
      Philox4x32-10 of each element's counter, with the seed and the first
      example's position from the runtime (`parallax_rt_random_seed`,
      `parallax_rt_first_example`);
    * `parallax.update` becomes a call of the runtime's in-place update
      `parallax_rt_update_<optimizer>[_sparse]_f32`, with the gradient's
      buffer (read-only) or, for a row-sparse gradient, its index and row
      buffers; the runtime sums repeated rows and updates only those rows
      (with `updates-as-loops`, generated loops do the same, for targets
      that run them as kernels);
    * `parallax.push` becomes `parallax_rt_push_<optimizer>[_sparse]_f32`
      with the variable's partitions and first server (its
      `parallax.shards`, chosen here: variables by decreasing size, each
      from the least loaded server on): the servers average the gradient
      and apply the optimizer to their rows (the runtime queues sparse
      pushes: one `parallax_rt_push_send` after the last sparse push of
      each block sends them all in one exchange, which proceeds beside the
      rest of the step; the next pull or the step's end waits for it);
      `parallax.pull` of rows becomes `parallax_rt_pull_rows_request_f32`
      into a fresh buffer, and one `parallax_rt_pull_rows_complete` follows
      each run of such requests (pulls with only their buffers, ids and
      constants between them), so that the run's rows come in one exchange;
      the views of the buffers follow it. A pull of the whole variable
      becomes `parallax_rt_pull_f32` into its global;
    * `parallax.row_sparse.to_dense` becomes a zero tensor and a loop
      adding each row at its index.

    Variables become globals first; the rest are conversion patterns under
    a 1:N type conversion: a row-sparse value is its indices and rows
    wherever it flows (function signatures, calls, returns and scf regions
    included). What the runtime cannot do (an f64 update, a push without
    optimizer, a pull of a variable not on servers) is diagnosed before
    anything is rewritten.

    Precondition: updates come after every use of the values read from the
    variables they update (autodiff puts them at the end of the step).
    Postcondition: no variable, read, update, push, pull or row-sparse op
    remains.
  }];
  let options = [
    Option<"updatesAsLoops", "updates-as-loops", "bool",
           /*default=*/"false",
           "An update of an f32 variable is generated loops instead of a "
           "runtime call (the GPU targets: the update runs as a kernel): a "
           "dense one a linalg.generic over the variable, its state and the "
           "gradient; a row-sparse one parallax_rt_row_segments, then an "
           "scf.parallel over the distinct rows that sums each one's "
           "gradient rows and updates it once">,
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ConvertParallaxCollectives : Pass<"convert-parallax-collectives",
                                      "::mlir::ModuleOp"> {
  let summary = "AllReduce, AllGather and Broadcast to runtime calls";
  let description = [{
    Lowers the dense collectives of a distributed training step, on
    tensors, before bufferization, to the runtime's MPI calls
    (docs/distributed.md):

    * `parallax.allreduce_start` becomes, per input, a fresh result buffer
      and `parallax_rt_allreduce_add_f32(bucket, name, input, result)`
      (the runtime packs the input into the bucket's message at once),
      then `parallax_rt_allreduce_start(bucket, mean)`; each start is one
      bucket, numbered in module order. Under a 1:N type conversion the
      `!parallax.allreduce_handle` becomes the bucket number and the result
      buffers, and `parallax.allreduce_wait` becomes
      `parallax_rt_allreduce_wait(bucket)` and views of those buffers.
      A synchronous `parallax.allreduce` is a start followed by its wait;
    * `parallax.allgather` and `parallax.broadcast` become
      `parallax_rt_allgather_<T>` and `parallax_rt_broadcast_<T>` into a
      fresh buffer;
    * `parallax.workers` becomes `parallax_rt_workers()`.

    Traffic is accounted under the names of the collectives' `for` lists
    (the variables `--parallax-distribute` wrote there), or `allreduce` and
    `allgather` where they have none.

    Precondition: collectives have static shapes; AllReduce is of f32
    tensors. What the runtime cannot do is diagnosed before any rewrite.
    Postcondition: no AllReduce, AllGather or Broadcast remains (push and
    pull are lowered with the variables).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def ParallaxGenerateInferenceMain : Pass<"parallax-generate-inference-main",
                                        "::mlir::ModuleOp"> {
  let summary = "Add a C `main` that runs the model on .npy files";
  let description = [{
    Adds `func.func @main(i32, !llvm.ptr) -> i32`, the entry point of an
    inference program run as `PROGRAM --inputs DIR --outputs DIR`: it
    parses the command line, reads one `.npy` per argument of `function`
    (named by its `parallax.name` attribute) into a fresh buffer, calls the
    function, and writes one `.npy` per result, through the runtime's
    `parallax_rt_*` C functions, which check dtypes and shapes and report
    every problem with the file name. The call is timed; the runtime
    prints the time when `PARALLAX_TIMING` is set. With `--repeat N` the
    program calls the function N times (an `scf.for` over the first N-1
    calls, whose results are dropped) and writes the last call's results,
    so benchmarks see warm runs. The `parallax.name` attributes move
    into `main` (they are removed from `function`). Buffers are not freed
    here: run the buffer-deallocation pipeline afterwards.

    Precondition: the module is bufferized; `function` takes and returns
    statically shaped memrefs with identity layouts of f32, f64, f16, i64,
    i32, i16, i8 or i1. Postcondition: the module has a `main` and the runtime
    declarations it calls.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "The function the program runs">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def ParallaxGenerateTrainingMain : Pass<"parallax-generate-training-main",
                                       "::mlir::ModuleOp"> {
  let summary = "Add a C `main` that runs the training loop";
  let description = [{
    Adds `func.func @main(i32, !llvm.ptr) -> i32`, the entry point of a
    training program run as `PROGRAM --data DIR [--steps S] ...`
    (docs/training.md): it parses the command line, registers every
    variable global (`parallax.variable` attribute) with the runtime for
    checkpoints, allocates one buffer per argument of `function` and
    registers it as the graph input named by its `parallax.name`, then
    loops over the steps: load the step's batch into the buffers, call
    `function`, report its loss (result 0) to the runtime. The runtime
    restores `--restore`, writes metrics, progress and checkpoints.

    Precondition: the module is bufferized; `function` takes statically
    shaped memrefs with identity layouts whose leading dimension is the
    batch, and returns the loss as `memref<f32>` first. Postcondition: the
    module has a `main` and the runtime declarations it calls.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"train_step\"",
           "The training-step function">,
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

#endif // PARALLAX_CONVERSION_PASSES_TD
