//===- Passes.td - Parallax GPU code generation passes -----*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// The GPU room: passes that turn the bufferized step (linalg on buffers)
// into kernel launches, keep run-time checks inside kernels, put the
// program's buffers where kernels reach them, and, for `--target
// cuda-sim`, run the same launches as host loops. The GPU pipeline
// (lib/Pipelines) runs them after the target-independent front half;
// upstream outlining, NVVM conversion and `gpu-module-to-binary` follow.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CODEGEN_GPU_PASSES
#define PARALLAX_CODEGEN_GPU_PASSES

include "mlir/Pass/PassBase.td"

def ParallaxGPULibraryConvolutions
    : Pass<"parallax-gpu-library-convolutions", "::mlir::ModuleOp"> {
  let summary = "Run convolutions and their gradients as cuDNN calls";
  let description = [{
    On the GPU a convolution lowered as on the CPU is an im2col kernel (the
    input copied once per filter tap), a cuBLAS product and, for its
    gradients, a col2im kernel or a transposed convolution of a dilated,
    padded copy: passes over memory that cuDNN's convolutions do not
    make. This pass rewrites each `parallax.conv`, `parallax.conv_filter_grad`
    and `parallax.conv_input_grad` of f32 tensors of static shape and
    rank 4 (NCHW) or 3 (NCW: as a 2-d convolution of unit height, its
    operands and result reshaped to [N, C, 1, W], as PyTorch runs a 1-d
    convolution on cuDNN) into a call of the runtime's
    `parallax_rt_cuda_conv2d_f32`, `..._filter_grad_f32` or
    `..._input_grad_f32` (cuDNN's forward, backward-filter and
    backward-data convolutions), or, without `cudnn` (--target cuda-sim),
    of their CPU equivalents `parallax_rt_conv2d_*`; those of rank 5
    (NCDHW) alike into the `conv3d` calls. Each call is a
    `parallax.library_call` into a `tensor.empty` (one-shot bufferization
    makes it the call, on the operands' buffers):
    - a forward convolution's bias is added by one `linalg.generic` into
      that result (a kernel like any other);
    - a filter gradient of a zero-padded input (autodiff pads the input
      for it) reads the unpadded input with cuDNN's pads instead, when
      the padding is of the spatial dimensions only: no padded copy.
    - the input gradient autodiff writes for an unstrided convolution, a
      transposed convolution (a unit-stride convolution of dY zero-padded
      by dilation (K - 1) - pad, with the filter flipped by a slice and
      each group's channels swapped by a reshape, a transpose and a
      reshape), is cuDNN's backward data of the filter itself with the
      forward pad: the padded copy of dY and the filter's copies go; a
      strided grouped convolution's dY, dilated by autodiff (per
      dimension a unit dimension inserted, zero-padded, merged and
      sliced), is read undilated with the strides as cuDNN's.
    cuDNN pads both ends alike; a convolution whose trailing pads give
    another output size than its leading ones would (asymmetric pads that
    change the output) stays as it is, for the linalg lowering, as do
    dynamic shapes and other element types.

    Precondition: Parallax compute ops on tensors (before
    --convert-parallax-to-linalg). Postcondition: no rewritten op remains;
    the program links the CUDA runtime, which loads cuDNN (libcudnn.so.9),
    or for cuda-sim the CPU runtime. Other passes may run between this one
    and bufferization (the call is a pure op on tensors until then).
  }];
  let options = [
    Option<"cudnn", "cudnn", "bool", /*default=*/"true",
           "Call cuDNN (--target cuda); false: the runtime's CPU "
           "convolutions (--target cuda-sim)">,
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ParallaxGPUSplitReductions : Pass<"parallax-gpu-split-reductions"> {
  let summary = "Split long reductions over few outputs into two kernels";
  let description = [{
    A kernel runs one thread per output point, its reduction a loop in
    that thread: a loss over a 100,000-word vocabulary for 320 tokens
    would run 320 threads, each summing 100,000 values, and a batch
    norm's gradient over N, H and W one thread per channel, each summing
    N x H x W values (2 ms on an H200 for 8 channels of 128 x 16 x 16,
    where a split takes microseconds). Reductions of at least
    `min-reduction` elements over fewer than `target-threads` outputs are
    split into an op computing partials in parallel and one combining
    them:
    - a `linalg.generic` with several reduced loops and a combiner with a
      neutral element (`arith.addf`, `maximumf`...) has its outer reduced
      loops made parallel, from the outermost, while the partials stay
      within `target-threads`; the innermost stays reduced, so each
      thread of the first op sums consecutive elements; the partials,
      shaped [init..., promoted loops...], start at the neutral element;
    - an op with one reduced loop is split with upstream
      `linalg::splitReduction`: a first op reduces `ratio` interleaved
      slices in parallel (thread `kk` of an output sums elements
      `k * ratio + kk`, so neighbouring threads read neighbouring
      elements), a second combines the `ratio` partials. `ratio` is the
      largest divisor of the reduced size up to `target-threads` /
      outputs that leaves each thread at least 16 elements.
    Where the combining op is itself long over few outputs, it is split
    again (at most 4 rounds). An op with one reduced loop of at most
    `warp-rows` elements (2048: 64 per lane) that
    `--parallax-gpu-map-to-launches`
    gives a warp per output (its inputs read along the reduced loop, a
    32-bit combiner with a neutral element: a split's partials, a norm's
    rows of 512) is left whole: the warp takes it in one kernel instead
    of two. So is one of at least `min-block-reduction` elements that
    map-to-launches gives a block of `block-threads` threads per output,
    where the split would run no more threads per output than the block
    (the rows of a loss over a vocabulary for 320 tokens, a batch norm's
    sums for 64 channels over 128 x 8 x 8): one kernel instead of two, as
    parallel, with no more elements per thread; a combining op such a
    block takes ends the rounds. Results differ from
    the sequential sum by rounding only (the
    same reassociation a GPU library's reduction makes).

    Precondition: linalg on tensors. Ops whose combiner is not
    recognised, with dynamic sizes, or (for one reduced loop) no divisor,
    are left as they are.
  }];
  let options = [
    Option<"minReduction", "min-reduction", "int64_t", /*default=*/"512",
           "Split reductions of at least this many elements">,
    Option<"targetThreads", "target-threads", "int64_t", /*default=*/"32768",
           "Aim for this many threads (outputs x ratio)">,
    Option<"warpRows", "warp-rows", "int64_t", /*default=*/"2048",
           "Leave single-loop reductions of at most this many elements "
           "that a warp per output takes whole (0: split them too)">,
    Option<"minBlockReduction", "min-block-reduction", "int64_t",
           /*default=*/"4096",
           "Fewest elements per output for which map-to-launches gives a "
           "block per output (its option of that name)">,
    Option<"blockThreads", "block-threads", "int64_t", /*default=*/"256",
           "Threads of those blocks (map-to-launches' threads-per-block; "
           "0: split such reductions too)">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ParallaxGPUMapToLaunches
    : Pass<"parallax-gpu-map-to-launches", "::mlir::func::FuncOp"> {
  let summary = "Turn linalg ops on buffers into gpu.launch kernels, one "
                "thread per point of their parallel loops";
  let description = [{
    Every `linalg` op and `memref.copy` of a host function other than the
    program's `main` becomes one kernel:
    - its parallel loops are put first (a named op with a reduction before
      a parallel loop, such as `linalg.reduce` over rows, becomes a
      generic for that), then the op is lowered to an `scf.parallel` over
      its parallel loops with `scf.for` loops for its reductions inside
      (upstream `linalgOpToParallelLoops`);
    - the parallel loops are linearised into one index space of
      `N = prod(ceildiv(ub - lb, step))` points, and a `gpu.launch` of
      `ceildiv(N, threads-per-block)` blocks of `threads-per-block`
      threads runs one point per thread (`affine.delinearize_index` gives
      the loop indices back; threads past `N` do nothing);
    - a reduction of at least `min-warp-reduction` points per output
      whose inputs are read along their last dimension by the innermost
      reduced loop (a softmax's or a norm's rows, a loss over a
      vocabulary) gets a warp per output instead: lane `l` combines
      points `l, l + 32, ...` (consecutive lanes on consecutive elements,
      so the loads coalesce) from the combiner's neutral element, five
      `gpu.shuffle xor` steps (offsets 1, 2, 4, 8, 16) combine the 32
      partials, and lane 0 combines the output's old value with the
      total and stores it; `threads-per-block / 32` outputs per block.
      Only a 32-bit float or integer combiner with a neutral element
      (`arith.addf`, `maximumf`...) qualifies; a column sum (the
      innermost loop parallel in memory) keeps a thread per output,
      whose neighbours read neighbouring elements;
    - such a reduction of at least `min-block-reduction` points per
      output gets a block of `threads-per-block` threads per output
      instead (a loss over a vocabulary, a long row that
      `--parallax-gpu-split-reductions` left whole): thread `t` combines
      points `t, t + threads-per-block, ...`, the five shuffles combine
      each warp's partials, lane 0 of each warp leaves its warp's in
      workgroup memory (one element per warp), and after a `gpu.barrier`
      every warp combines the block's warp totals by xor shuffles (lanes
      past the warps start from the neutral element); thread 0 stores;
    - an op without parallel loops (a full reduction to a scalar) runs as
      one thread, or as one warp or block under the rules above.
    The mapping is flat on purpose: it makes every shape (dynamic sizes,
    size-1 and size-3 dimensions) use whole warps, with no per-rank tile
    sizes to choose, and keeps consecutive threads on consecutive
    elements of the innermost loop, so loads and stores coalesce.

    Precondition: bufferized IR (linalg on memrefs). Postcondition: no
    `linalg` op, `memref.copy` or `scf.parallel` is left in the host
    functions the pass ran on; each is a `gpu.launch` whose body uses only
    its block and thread indices and values defined above it, and whose
    only exchanges between threads are the shuffles of warp reductions
    and, in block reductions, one workgroup buffer and one barrier, all
    at the top level of its body.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           /*default=*/"256", "Threads of each block (a multiple of 32)">,
    Option<"minWarpReduction", "min-warp-reduction", "int64_t",
           /*default=*/"64",
           "Fewest points reduced into each output for a warp to share "
           "them (0: never)">,
    Option<"minBlockReduction", "min-block-reduction", "int64_t",
           /*default=*/"4096",
           "Fewest points reduced into each output for a block to share "
           "them (0: never)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def ParallaxGPUMergeSingleBlockLaunches
    : Pass<"parallax-gpu-merge-single-block-launches",
           "::mlir::func::FuncOp"> {
  let summary = "Run consecutive one-block kernels as one, a barrier "
                "between their bodies";
  let description = [{
    Per-channel values (a batch norm's means, variances, running averages
    and their gradients' sums) come as chains of tiny kernels of one
    block each: five to ten launches per normalisation, each costing the
    GPU a launch's latency for a few dozen elements. A run of `gpu.launch`
    ops of one block (a 1x1x1 grid, a 1-d block of constant size), with
    nothing between them that touches memory (only ops without memory
    effects and allocations), becomes one launch at the last one's place:
    the bodies in order, a `gpu.barrier` between each two (within a block
    a barrier makes each body's global writes visible to the next), the
    block as large as the largest, and a body whose block was smaller run
    by its threads only.

    A run stops where the merged kernel's parameters (the values its
    bodies use from the host, a memref's whole descriptor) would pass
    4096 bytes: PTX 8.0 allows 4352. Bodies with shuffles or barriers of
    their own (warp and block reductions), workgroup or private memory
    are left alone, and so are launches with async tokens.

    Precondition: kernels are `gpu.launch` regions on the host, before
    `gpu-async-region` (`parallax-gpu-map-to-launches` made them).
    Postcondition: no two mergeable one-block launches follow each other
    with only such ops between them; every merged body's barriers are at
    the top level of the launch's body (cuda-sim runs them as host loops,
    `parallax-gpu-launches-to-loops`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def ParallaxGPUDeviceChecks : Pass<"parallax-gpu-device-checks"> {
  let summary = "Report failed run-time checks from inside kernels";
  let description = [{
    A check that fails inside a kernel cannot call the runtime (a host
    function). Each call to `parallax_rt_index_out_of_range` inside a
    `gpu.launch` becomes a `gpu.printf` of the same message (the node,
    the value and the range, as the CPU runtime prints it) followed by
    `llvm.intr.trap`: the kernel stops, and the host side reports the
    failed launch and exits with status 1.

    Precondition: the checks' messages are `llvm.mlir.global` strings read
    by `llvm.mlir.addressof`. Postcondition: no `gpu.launch` calls a
    function.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
  ];
}

def ParallaxGPUGlobalsToBuffers
    : Pass<"parallax-gpu-globals-to-buffers", "::mlir::ModuleOp"> {
  let summary = "Keep the program's globals in buffers allocated when it "
                "starts";
  let description = [{
    Every `memref.global` (the variables and their optimizer state, the
    constants) becomes a buffer that the program's `main` allocates
    (`memref.alloc`) right after the runtime has parsed its command line
    (so `--help` and a bad argument are answered before the program
    takes its memory; first thing, if `main` reads a global before),
    filled from the global's initial value if it has one; a pointer slot (`llvm.mlir.global`)
    holds it, and every `memref.get_global` becomes a load of the slot
    viewed as the same memref. Globals without an initial value (the
    variables, whose weights the runtime loads) are deleted.

    With `parallax-gpu-device-memory` after it, the buffers are device
    memory (managed where a host call reaches them): variables, their
    state and the constants live on the GPU for the whole run, the
    kernels and the optimizer's kernels read and write them there, and
    the runtime (initial weights, `--save`, checkpoints) reaches them by
    copies through the driver. It marks the buffer and every view it
    loads from the slot with the slot's name
    (`parallax.global_buffer_slot`), for that pass to see all its uses. For `--target cuda-sim`
    the buffers are host memory, so the same rewriting is exercised by
    the CPU tests.

    Precondition: a module with the program's `main`, after the
    deallocation pipeline. Postcondition: no `memref.get_global` remains.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def ParallaxGPUDeviceMemory
    : Pass<"parallax-gpu-device-memory", "::mlir::ModuleOp"> {
  let summary = "Allocate the host functions' buffers in device memory, or "
                "in managed memory where the host reaches them";
  let description = [{
    `memref.alloc` and `memref.dealloc` of host functions become
    `gpu.alloc` and `gpu.dealloc`. A buffer that only the device reaches
    is device memory: every use, through views and through the
    parameters of the program's functions it is passed to, is in a
    kernel, a runtime call that queues library work on the stream such
    as cuBLAS's products and cuDNN's convolutions, a runtime call that
    reaches its operands only by copies through the driver (the
    AllReduce's; the registration of variables and training inputs, and
    an inference program's inputs and outputs), its deallocation or
    `memref.dim`. A global's buffer
    (`parallax-gpu-globals-to-buffers`) counts the uses of the views
    every function loads from its pointer slot; filled with the global's
    initial value, it is filled on the device (a memset for a splat of
    32-bit elements, the optimizer's zeroed state, whose global is then
    deleted; a copy from the host otherwise). So the variables, their
    optimizer state and the constants are device memory unless a host
    call reaches them (a parameter server's pulls and pushes).

    Any other buffer is `host_shared`: CUDA managed memory, which kernels
    read and write on the device and the runtime's host code (the loss,
    a sparse update's ids, the parameter store) reads and writes after
    the launches it follows have finished. The runtime keeps freed
    blocks of both kinds for the next allocation of the same size and
    kind, so a step allocates nothing from the driver after the first.

    Precondition: the deallocation pipeline has run (every buffer's
    `memref.dealloc` is explicit), kernels are still `gpu.launch`
    regions (not outlined), and the globals are buffers. Postcondition:
    no `memref.alloc` or `memref.dealloc` is left outside kernels; the
    host touches no device buffer; the deallocations are synchronous
    `gpu.dealloc`s and the fills synchronous `gpu.memset`s and
    `gpu.memcpy`s, for `gpu-async-region` to order on the program's
    stream.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
  ];
}

def ParallaxGPUDeclareMemoryNeed
    : Pass<"parallax-gpu-declare-memory-need", "::mlir::ModuleOp"> {
  let summary = "Tell the runtime, first thing, how much GPU memory the "
                "program's buffers take";
  let description = [{
    Counts the bytes the program's `gpu.alloc`s take from the driver:
    `main` is followed in order, into the functions it calls (the
    training step), each loop or branch body once. The runtime keeps
    freed blocks for the next allocation of the same size and kind
    (device or managed), so what it takes is, for each size and kind,
    the most blocks live at once, times the size: the variables, their
    state, the constants and inputs (live for the whole run) and a step's
    buffers at their most. A call of the runtime's
    `parallax_rt_cuda_memory_need` with that count goes before `main`'s
    first allocation: a program that cannot fit stops before it takes
    any memory, saying how much it needs and how much it may use.
    Allocations of dynamic size (bags of varying length) are not
    counted.

    Precondition: `parallax-gpu-device-memory` has run (the buffers are
    synchronous `gpu.alloc`s and `gpu.dealloc`s), in a module with the
    program's `main`. Postcondition: the call comes before every
    `gpu.alloc` of `main`'s entry block.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
  ];
}

def ParallaxGPUStepGraph
    : Pass<"parallax-gpu-step-graph", "::mlir::ModuleOp"> {
  let summary = "Bracket the training step's call for the runtime's CUDA "
                "graph, saying whether the step can be one";
  let description = [{
    Finds `main`'s training step (the call right after the runtime's
    `parallax_rt_load_batch`) and puts a call of
    `parallax_rt_cuda_step_graph_begin(step, obstacle)` before it and of
    `parallax_rt_cuda_step_graph_end()` after it. With
    `PARALLAX_CUDA_GRAPHS=1`, the runtime captures the step's stream work
    once as a CUDA graph and, at each later step, replays it at the end
    call instead of queuing each launch, product and copy.

    That is only right when the step asks for the same work every step,
    which the pass checks: the step (and the functions it calls) may only
    queue work on the stream (`gpu.launch_func`, `gpu.memcpy`,
    `gpu.memset`, the runtime's stream-ordered calls: cuBLAS, cuDNN, the
    AllReduce), allocate and free, and compute on the host without reading
    memory from what is the same at every step: its arguments, constants,
    the buffers' pointers loaded from the globals' slots of
    `parallax-gpu-globals-to-buffers`, and the runtime's answers that hold
    for the whole run (`parallax_rt_workers`, `parallax_rt_random_seed`;
    not the update's number or a batch's first example); it may wait for
    the stream only as its last op, before it returns the loss.
    Otherwise `obstacle` names the first op that breaks this and where it
    is (a wait for the GPU inside the step, as before the host sorts a
    row-sparse update's ids; another runtime call; a host load or store),
    and the runtime runs the step as separate launches, saying why.

    Precondition: `parallax-gpu-stream-ordered-calls` has run (the
    step's waits are where the host needs them). A module without a
    training loop is left unchanged.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
  ];
}

def ParallaxGPUMergeKernelModules
    : Pass<"parallax-gpu-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Put every outlined kernel into one gpu.module";
  let description = [{
    Upstream `gpu-kernel-outlining` makes one `gpu.module` per kernel, and
    `gpu-module-to-binary` runs `ptxas` and `fatbinary` once per module:
    a training step of a few hundred kernels spent two thirds of its
    compile time starting those tools. The kernels are moved into one
    module, `@<function>_kernels` (its first kernel's name), each named
    after the module it came from and the first node its location names
    (`@train_step_kernel_85__features_features_5_BatchNormalization`:
    `--profile` and `compute-sanitizer` report kernels by name), and every
    `gpu.launch_func` is
    redirected; symbols that outlining copied into several modules (a
    declaration, a global) are kept once. The program then loads one
    module at start-up.

    Precondition: outlined kernels, before a target is attached.
    Postcondition: at most one `gpu.module`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def ParallaxGPUUnchainManagedAllocs
    : Pass<"parallax-gpu-unchain-managed-allocs", "::mlir::func::FuncOp"> {
  let summary = "Take managed allocations out of the stream's token chain";
  let description = [{
    After upstream `gpu-async-region` every GPU op is asynchronous, but
    managed memory (`gpu.alloc host_shared`) is not stream-ordered, and
    `gpu-to-llvm` lowers it only in its synchronous form. Each
    `gpu.alloc async [%t] host_shared` becomes the synchronous allocation,
    and its token `%t`: the launches around it stay queued on the stream,
    the host no longer waits for them at every allocation.

    Precondition: `gpu-async-region` has run. Postcondition: no
    asynchronous `host_shared` allocation is left.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def ParallaxGPUStreamOrderedCalls
    : Pass<"parallax-gpu-stream-ordered-calls", "::mlir::func::FuncOp"> {
  let summary = "Queue the runtime's library calls on the stream without "
                "waiting for it";
  let description = [{
    `gpu-async-region` makes the host wait for the stream before every
    call, as a call may read or write device memory on the host. The
    runtime's cuBLAS products, cuDNN convolutions and AllReduce calls
    (`abi::queuesOnStream`) only queue work on the program's stream, so
    the host need not wait for them, and the stream orders the kernels
    after them. Each run of such calls (with ops free of memory effects,
    or that only allocate, between them) joins the stream's token chain:
    the wait before the run is dropped (or, where there was none, a
    token is made with `gpu.wait async`, the program's stream); where the
    next kernels start a new chain right after the run, they continue
    this one instead; otherwise the host waits for the token just after
    the run, before whatever reads or writes memory on the host. A host
    wait followed only by such ops and by the runtime's answers about
    the run (`abi::answersWithoutMemory`: the update's number, the seed,
    the number of workers) before a new chain starts is dropped too: the
    new chain continues the old one.

    Precondition: `gpu-async-region` has run, and every `gpu.wait async`
    without dependencies gives the program's one stream (the runtime's
    `mgpuStreamCreate`). Postcondition: no host wait between the
    kernels before such a call and the call, or between it and the
    kernels after it.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def ParallaxGPULaunchesToLoops
    : Pass<"parallax-gpu-launches-to-loops", "::mlir::func::FuncOp"> {
  let summary = "Run gpu.launch bodies as host loops (--target cuda-sim)";
  let description = [{
    Each `gpu.launch` becomes `scf.for` loops over its grid and its
    blocks, with the body inlined and `gpu.block_id`, `gpu.thread_id`,
    `gpu.grid_dim` and `gpu.block_dim` replaced by the loop indices and
    sizes. The kernels' indexing, guards and math then run on the CPU
    exactly as the launches would run them on the GPU, and the program is
    checked against PyTorch and the ONNX test data without a GPU.

    Threads of this pipeline's kernels exchange values only through the
    xor shuffles of warp reductions and the workgroup memory of block
    reductions (written before a `gpu.barrier`, read after it), at the top
    level of the launch body. The body is cut before each shuffle and
    barrier, and every thread of a block runs one part before any thread
    runs the next (a loop over the block's threads per part, inside the
    loops over blocks); workgroup memory is one host buffer that each
    block uses in turn. A value a later part
    uses is stored per thread between the parts (in a buffer of one
    element per thread; constants are made again), and a shuffle by
    `offset` reads the slot of thread `t ^ offset`: the values the GPU's
    lanes exchange, combined in the same order.

    Precondition: barriers only at the top level of a launch body,
    workgroup memory of static shapes, no private memory, and no shuffles
    other than xor shuffles of width 32 by a constant offset at the top
    level of a body whose blocks are whole warps (an error names the
    launch otherwise); the values kept between the parts are scalars.
    Postcondition: no `gpu.launch` is left.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

#endif // PARALLAX_CODEGEN_GPU_PASSES
