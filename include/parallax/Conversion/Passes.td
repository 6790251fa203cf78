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
      `parallax.variable = "trainable"` or `"state"` so the program's entry
      point can register it with the runtime (checkpoints);
    * `parallax.read` becomes `memref.get_global` and a `restrict`
      `bufferization.to_tensor`: a view of the variable, never a copy;
    * `parallax.update` becomes a call of the runtime's in-place update
      `parallax_rt_update_<optimizer>[_sparse]_f32`, with the gradient's
      buffer (read-only) or, for a row-sparse gradient, its index and row
      buffers; the runtime sums repeated rows and updates only those rows;
    * `parallax.row_sparse.to_dense` becomes a zero tensor and a loop
      adding each row at its index.

    Precondition: every row-sparse value is built by
    `parallax.row_sparse.pack` (as autodiff and canonicalization leave
    them); updates come after every use of the values read from the
    variables they update (autodiff puts them at the end of the step).
    Postcondition: no variable, read, update or row-sparse op remains.
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
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
      bucket, numbered in module order. `parallax.allreduce_wait` becomes
      `parallax_rt_allreduce_wait(bucket)` and views of the result buffers.
      A synchronous `parallax.allreduce` is a start followed by its wait;
    * `parallax.allgather` and `parallax.broadcast` become
      `parallax_rt_allgather_<T>` and `parallax_rt_broadcast_<T>` into a
      fresh buffer.

    Traffic is accounted under the variable whose update or push consumes
    the result (or the collective's name when none does).

    Precondition: collectives have static shapes; AllReduce is of f32
    tensors with `sum` or `mean`. Postcondition: no collective op remains.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def ParallaxFuseElementwise : Pass<"parallax-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg ops into elementwise consumers only";
  let description = [{
    Upstream elementwise fusion restricted to consumers that are themselves
    elementwise `linalg.generic`s: chains of elementwise ops become one loop
    nest, while matrix products stay `linalg.matmul` /
    `linalg.batch_matmul` (upstream fusion would fold a transposing or
    broadcasting producer into them, turning them into generics that can
    no longer go to BLAS). A producer is fused only into its single user.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ParallaxCollapseLoopDims : Pass<"parallax-collapse-loop-dims"> {
  let summary = "Merge adjacent linalg.generic loops that are contiguous in "
                "every operand";
  let description = [{
    Gives LLVM long innermost loops to vectorize. A convolution's tensors
    have short innermost dimensions (16 pixels of a row): an elementwise op
    over 64x8x16x16 or a per-channel sum over (n, h, w) would otherwise run
    an inner loop of 16 iterations (a reduction ending in a horizontal sum
    every 16 elements) inside three outer loops. First upstream's
    unit-extent folding drops the size-1 dimensions of broadcast operands
    (a per-channel `8x1x1` read as `(d1, 0, 0)` becomes `8` read as
    `(d1)`); then every maximal run of adjacent loops with one iterator
    type that each indexing map reads as a contiguous sequence (or not at
    all) is merged with upstream's `populateCollapseDimensions`, operands
    reshaped with `tensor.collapse_shape`/`expand_shape` (views after
    bufferization).

    Precondition: linalg on tensors (before bufferization). Ops whose maps
    are not projected permutations (convolution windows, im2col gathers),
    bodies that use `linalg.index`, and ops reading a `tensor.extract_slice`
    (a strided view once bufferized, which a reshape would copy) are left
    as they are.
    Postcondition: no `linalg.generic` on tensors has two adjacent loops
    of one iterator type that every operand reads contiguously.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ParallaxReassociateReductions : Pass<"parallax-reassociate-reductions"> {
  let summary = "Allow float sums and products of linalg reductions to be "
                "reassociated";
  let description = [{
    Marks the op that combines a reduction's accumulator (the `arith.addf`
    or `arith.mulf` of the accumulator block argument, whose result is
    yielded for it) in every `linalg.generic` with a reduction loop with
    `fastmath<reassoc>`. Without it LLVM must add in source order, one
    element per floating-point add latency, and cannot vectorize the loop
    (a per-channel sum over 131,072 elements ran scalar); with it the sum
    is split into vector lanes added at the end, as PyTorch and BLAS do.
    Results differ from the sequential sum by rounding only. Nothing else
    in the body is changed.

    Precondition: linalg ops (on tensors or buffers). Postcondition: every
    float sum or product reduction combiner carries `reassoc`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ParallaxApproximateMath : Pass<"parallax-approximate-math"> {
  let summary = "Inline f32 polynomial approximations of exp, log, tanh, erf";
  let description = [{
    Rewrites f32 `math.exp`, `math.expm1`, `math.log`, `math.log1p`,
    `math.tanh` and `math.erf` into MLIR's polynomial approximations
    (upstream `populateMathPolynomialApproximationPatterns`, the Cephes and
    Eigen approximations, accurate to a few ulp): plain arithmetic that
    LLVM vectorizes, where calls into libm stay scalar. The approximations'
    `math.fma` becomes the LLVM intrinsic (libm's `fmaf` would be a call).
    Other types and functions are left for libm.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def ParallaxLinalgToBlas : Pass<"parallax-linalg-to-blas",
                               "::mlir::ModuleOp"> {
  let summary = "Run f32 matrix products through the runtime's BLAS call";
  let description = [{
    Replaces `linalg.matmul` and `linalg.batch_matmul` on f32 memrefs whose
    rows are contiguous (unit stride along the last dimension) by a call to
    `parallax_rt_matmul_f32`, which runs OpenBLAS's `cblas_sgemm` (C += A B,
    as linalg accumulates into its output). Other products stay loops.
    An operand that is a fresh buffer filled only by a `linalg.transpose`
    of the last two dimensions (a Gemm's `transB`, a weight gradient's
    `dY^T`) is passed as a `memref.transpose` view of the source instead,
    which `cblas_sgemm` reads transposed: the copy disappears, unless
    something may write the source between the transpose and the product.

    Precondition: the module is bufferized. Postcondition: the programs
    built from it link OpenBLAS (parallax-compile does).
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
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
