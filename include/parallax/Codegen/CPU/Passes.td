//===- Passes.td - Parallax CPU code generation passes -----*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// Passes that shape linalg for CPUs: loop fusion and merging for LLVM's
// vectorizer, reassociable reductions, inlined math approximations and
// matrix products through BLAS. The CPU pipeline (lib/Pipelines) runs them
// after the target-independent lowering; a GPU target has its own room.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CODEGEN_CPU_PASSES
#define PARALLAX_CODEGEN_CPU_PASSES

include "mlir/Pass/PassBase.td"

def ParallaxFoldBiasIntoProducts : Pass<"parallax-fold-bias-into-products"> {
  let summary = "Start matrix products from their bias instead of zeros";
  let description = [{
    A fully connected layer is `add(matmul(A, B, fill(0)), bias)`: a
    product into zeros, then a pass that reads the product and writes it
    again with the bias added (the bias broadcast along the other
    dimensions; an expand_shape may sit between, as for a layer over a
    batch of sequences). The product now starts from the broadcast bias,
    which BLAS adds to (C = A B + C), and the addition goes: one pass over
    the output less (on the 100,000-word language model, a 128 MB pass a
    step). Each element is still the product's sum plus the bias; for sums
    over K longer than one of BLAS's K blocks the bias joins the first
    block's partial sum, so the last bits may differ.

    Matches `linalg.matmul` and `linalg.batch_matmul` on tensors whose
    zero fill and result have no other use, and an all-parallel f32
    `linalg.generic` adding the product (identity map) and a broadcast
    (projected permutation) into an output it does not read.

    Precondition: linalg on tensors, before elementwise fusion (which
    would merge the addition into its consumers). Postcondition: no such
    addition of a zero-started product remains.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
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

    A `linalg.transpose` whose input is a copy (a `linalg.generic` with one
    input, only parallel loops and a body that yields the input element,
    read through any affine map), directly or through one
    `tensor.expand_shape`, and the copy's only user, becomes one copy that
    reads the copy's input through the composed map. A convolution's input
    gradient flips its filter spatially and then swaps its channels: one
    pass over the filter instead of two (ResNet-18's step moves 959 MB
    instead of 1,049, `PROGRAM --profile`).

    Precondition: linalg on tensors. Postcondition: no elementwise
    `linalg.generic` with a single user that is an elementwise generic
    remains unfused, no transpose reads such a copy; named matrix products
    are unchanged.
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

def ParallaxChannelsInnermost : Pass<"parallax-channels-innermost"> {
  let summary = "Run window ops over small or strided images with the "
                "channels as the innermost, vectorized loop (NHWC)";
  let description = [{
    A depthwise convolution over NCHW tensors vectorizes along an image
    row (`--parallax-hoist-window-reductions`,
    `--parallax-split-short-reductions`). MobileNetV2's rows at 32x32
    inputs are 8, 4, 2 or 1 points long, or read with a stride of 2
    (gathers): its depthwise convolutions and their gradients ran at 2-6
    GFLOP/s, a third of its training step (`--profile`). Along the
    channels (96 to 960) every operand but the output's row is the same
    for a whole vector, as in the NHWC kernels of oneDNN and XNNPACK.

    This pass gives such an op transposed operands in which the channel
    index comes last, and makes the channel loop the innermost one:

    ```
    xt = transpose(x)                // n, h, w, c; a padded input is padded
    ft = transpose(f)                //   after its transpose, not before
    yt = generic(xt, ft) -> (n, h, w, c)    loops (n, h, w, g, kh, kw, c)
    y  = transpose(yt)               // back to n, c, h, w
    ```

    The loops other than the channel loop keep their order within two
    groups, those that index the output and the others (the reductions).
    Where the output is smaller than every input (a filter gradient) the
    reductions go outside, so the output stays in the cache while the
    inputs are read once; otherwise they go inside, and each output
    element is finished in turn. An output that is a `linalg.fill` gets a fill of the
    transposed shape instead of a transpose. Each output element still
    receives the same terms in the same order; where the sum carries
    `reassoc`, LLVM may group them differently than it did along the rows,
    so the last bit may differ, as with any change of vectorization.

    It applies to a `linalg.generic` on tensors with static shapes, an
    iteration space of at least `min-iterations` points (below that, the
    two or three transposes' kernels cost about what the op saves), one
    output read through a projected permutation, and at least one
    reduction loop, whose output's innermost index moves with a loop of
    fewer than `min-inner` iterations or reads an input with a stride
    above one, and that has a parallel loop of at least `min-channels`
    iterations that moves exactly one index of every operand, by one
    (the channel loop; not already the output's innermost index).

    Where the reductions go outside and the first of them is a batch
    (it indexes the first dimension of every input, and only that, and
    not the output) of a sum that carries `reassoc`, the batch is summed
    in up to 8 groups of images, the most that divide it: a parallel loop
    outside the others writes each group's partial sums, and a second op
    adds them to the output. Threads then share out the groups
    (`--parallax-parallelize-kernels`), each reading its images once; the
    groups depend on the shape alone, so results do not depend on the
    thread count.

    Precondition: linalg on tensors, after
    `--parallax-reassociate-reductions` (the batch split reassociates only
    sums that carry `reassoc`), before `--parallax-split-short-reductions`
    (which then leaves these ops alone: their innermost loop is a parallel
    one); `--parallax-hoist-window-reductions` takes contiguous rows of 8
    or more only, which this pass leaves alone. Postcondition: no op
    meeting those conditions remains; each output element is the same sum
    of the same terms (in groups of the batch, where split).
  }];
  let options = [
    Option<"minInner", "min-inner", "int64_t", /*default=*/"8",
           "Output rows shorter than this run along the channels">,
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"16",
           "The least iterations of the channel loop">,
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Smallest iteration space rewritten (as "
           "--parallax-parallelize-kernels' threshold)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ParallaxHoistWindowReductions
    : Pass<"parallax-hoist-window-reductions"> {
  let summary = "Move a small innermost reduction (a convolution's window) "
                "outside the innermost parallel loop, which then vectorizes";
  let description = [{
    A depthwise (grouped) convolution, its input gradient and stride-1
    pooling are `linalg.generic`s whose loops end with the window's
    reductions: `(n, c, h, w, g, kh, kw)`. Lowered in that order, the
    innermost loop is `kw` (3 or 5 iterations, a reduction): LLVM cannot
    vectorize it usefully, and MobileNetV2's step spent half its time in
    these ops at 3 GFLOP/s (`--profile`). This pass reorders such an op's
    loops to `(n, c, h, g, kh, kw, w)`: the innermost loop is the parallel
    `w`, along which the input and output are contiguous and the filter is
    constant, an axpy that vectorizes. Each output element still receives
    the window's terms in the same order, so results are unchanged, bit for
    bit.

    It applies to a `linalg.generic` (on tensors or buffers) whose
    innermost loops are reductions of at most `max-window` points together,
    preceded by a parallel loop of at least `min-inner` iterations along
    which every operand moves only its innermost index, by one (so not to
    strided windows, nor to row sums, whose rows are not contiguous along
    the parallel loop).

    Precondition: none. Postcondition: no `linalg.generic` meeting those
    conditions remains; the ops compute the same values.
  }];
  let options = [
    Option<"minInner", "min-inner", "int64_t", /*default=*/"8",
           "The least iterations of the parallel loop moved innermost">,
    Option<"maxWindow", "max-window", "int64_t", /*default=*/"64",
           "The most points of the reductions moved outside it">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
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

def ParallaxSplitShortReductions
    : Pass<"parallax-split-short-reductions"> {
  let summary = "Sum a short contiguous innermost reduction as a vector of "
                "partial sums, combined at the end";
  let description = [{
    A depthwise convolution's filter gradient sums over the batch and the
    image, `dw[c, kh, kw] += x[n, c, h + kh, w + kw] * dy[n, c, h, w]`
    with loops `(c, kh, kw, n, h, w)`: its innermost loop is a reduction of
    a few iterations (an image row), which LLVM vectorizes with a
    horizontal sum for every row: MobileNetV2's ran at 1-2 GFLOP/s
    (`--profile`). This pass makes that loop parallel into partial sums,
    one per position along it, and adds them at the end:

    ```
    partial[c, kh, kw, w] = sum over (n, h) of x[...] * dy[...]
    dw[c, kh, kw] += sum over w of partial[c, kh, kw, w]
    ```

    The first op's innermost loop is parallel and contiguous: a vector
    multiply-add into partial sums that stay in the L1 cache. The sums are
    reassociated (the ops carry `reassoc`, from
    `--parallax-reassociate-reductions`); the result does not depend on the
    thread count.

    It applies to a `linalg.generic` on tensors with one f32 output whose
    body yields `addf(out, x)` with `reassoc`, whose innermost loop is a
    reduction of `min-inner` to `max-inner` iterations along which every
    operand moves only its innermost index, by one (an input by one or
    two: a stride-2 convolution's input, which LLVM reads with gathers or
    interleaved loads), and whose other
    reduction loops have at least `min-outer` iterations together (a plain
    row sum has none: its vectorized loop already sums the row in vector
    registers), and whose partial sums number at most 4M.

    Rows shorter than `min-inner`, down to `min-window-inner`, are split
    too where an input is read through a window (an index adding two
    loops, as a convolution's `h + kh`) and the other reductions have at
    least `min-window-outer` iterations together: the depthwise filter
    gradients of MobileNetV2's 4x4 and 2x2 stages at batch 32. A batch
    norm's sums over rows that short, and the filter gradients of a batch
    of a few images, are left as they were.

    Precondition: after `--parallax-reassociate-reductions`, before
    bufferization. Postcondition: no op meeting those conditions remains;
    each replaced op's result is its init plus the same terms,
    reassociated.
  }];
  let options = [
    Option<"minInner", "min-inner", "int64_t", /*default=*/"8",
           "The least iterations of the innermost reduction">,
    Option<"minWindowInner", "min-window-inner", "int64_t", /*default=*/"2",
           "The least iterations of the innermost reduction where an input "
           "is read through a window">,
    Option<"minWindowOuter", "min-window-outer", "int64_t", /*default=*/"32",
           "The least iterations of the other reductions together where "
           "the innermost is shorter than min-inner">,
    Option<"maxInner", "max-inner", "int64_t", /*default=*/"64",
           "The most iterations of the innermost reduction">,
    Option<"minOuter", "min-outer", "int64_t", /*default=*/"8",
           "The least iterations of the other reductions together">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ParallaxSplitOuterReductions
    : Pass<"parallax-split-outer-reductions"> {
  let summary = "Sum a column sum's rows in fixed groups that threads can "
                "share, then add the groups' partial sums";
  let description = [{
    A bias gradient sums its output gradient over the batch, a column sum
    whose only reduction loop is outside its parallel loops: `db[j] = sum
    over i of dy[i, j]`. `--parallax-parallelize-kernels` shares out only
    a parallel loop outside the reductions (or one with runs of memory
    within it), so such a sum ran on one thread (the LSTM LM's 320 x
    100,000 bias gradient: 4.2 ms, 11% of the step outside its matrix
    products). Its
    columns cannot be shared out instead: chunks of columns read every row
    in short strided runs, slower on one thread than the whole rows (5.0
    ms in 250 chunks, 6.7 ms in 32).

    This pass splits the reduction loop into `G` groups of consecutive
    rows with upstream `linalg::splitReduction`:

    ```
    partial[g, j] = sum over r of dy[g * R/G + r, j]   (g parallel, outermost)
    db[j] = db[j] + sum over g of partial[g, j]
    ```

    The first op's outermost loop is parallel, and each group reads its
    rows as one run of memory; the second reads `G` rows of partial sums.
    `G` is the most groups up to `max-groups`, of at least 16 rows each,
    that divide the reduction evenly; it depends on the shape alone, so
    the sums do not depend on the thread count. They are reassociated
    (rows summed per group, then the groups), as the ops'
    `fastmath<reassoc>` combiners allow.

    It applies to a `linalg.generic` on tensors with one output, a static
    iteration space of at least `min-iterations` points, one reduction loop
    before all its parallel loops of more than one iteration (and at least
    one of those, with fewer than 16 points inside the first: with more,
    `--parallax-parallelize-kernels` shares it out already, as a batch
    norm's per-channel sums), and a combiner `linalg::splitReduction` knows:
    a sum or product that carries `reassoc`, a maximum or a minimum.

    Precondition: after `--parallax-reassociate-reductions`, before
    bufferization. Postcondition: every such op whose reduction has a
    divisor of at least two groups is split.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Smallest iteration space split (as "
           "--parallax-parallelize-kernels' threshold)">,
    Option<"maxGroups", "max-groups", "int64_t", /*default=*/"16",
           "The most groups of rows">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ParallaxReduceInProducers : Pass<"parallax-reduce-in-producers"> {
  let summary = "Compute a reduction of an elementwise op's result in the "
                "elementwise op's own loop nest, as a second result";
  let description = [{
    A softmax writes `e = exp(x - max)` and then sums each row of `e` in
    a pass of its own over a tensor that was just written: on a language
    model's 320 x 100,000 logits, 3 ms of a 185 ms step. This pass makes
    the sum a second result of the op that writes the tensor:

    ```
    e, s = linalg.generic {iterator_types = [parallel, reduction]}
             ins(x, max) outs(empty, zeros) {
               v = exp(x - max); yield v, s + v }
    ```

    It applies to a `linalg.generic` reduction R on tensors whose loops
    are parallel ones and then reductions (each result element is summed
    by the innermost loops, in a register), with one input, read through
    the identity map, that is the only result of a `linalg.generic` P on
    tensors whose loops are all parallel, whose output map is the
    identity, whose loop ranges are R's, and whose result has other users
    besides R (with R its only user, elementwise fusion applies instead).
    Column sums (a reduction loop outside a parallel one) are left alone:
    fused, their row of partial sums competes for the cache with the
    producer's stream of writes, and the bias gradient of those logits
    took 8.6 ms instead of 3.9 + 3.9 ms as two passes.

    The fused op takes R's iterator types, P's inputs, and P's and R's
    inits; it computes P's value once per point and R's combiner on it, in
    R's loop order: every element of both results gets the same value,
    summed in the same order, as before. R's init, when it is defined
    after P (a `linalg.fill` of a `tensor.empty`), is copied before P.

    Precondition: linalg on tensors, after the passes that reshape single
    ops (`--parallax-split-short-reductions`; they expect one output).
    Postcondition: no reduction meeting those conditions remains; P's
    users read the fused op's first result, R's its second.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ParallaxUnshareFills : Pass<"parallax-unshare-fills"> {
  let summary = "Give every op that accumulates into a filled tensor a fill "
                "of its own";
  let description = [{
    CSE merges identical `tensor.empty` + `linalg.fill` pairs (the zero
    every matrix product or sum of one shape starts from), and one-shot
    bufferization then gives the merged fill one buffer and copies it
    before each op writes into it in place: a full read and write of the
    output per op (ResNet-18's step made 235 such copies, 9% of its time
    in `memmove`). This pass clones the fill, and its `tensor.empty`
    destination, for each use as an op's init, so that each op fills its
    own buffer in place (a `memset`) and no copy is needed. A
    `tensor.insert_slice` into the fill that writes back a part an
    `tensor.extract_slice` of the fill read (an op adding into one part:
    col2im, a max-pool gradient's residue class) keeps the fill, so that
    the part is updated in place rather than copied into a second fill.

    Precondition: linalg on tensors, right before bufferization (a CSE
    would merge the clones again). Postcondition: every `linalg.fill` on
    tensors whose result is used more than once is no op's init, except
    for such slice updates.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
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

    Precondition: none (math ops anywhere). Postcondition: no f32
    `math.exp`, `expm1`, `log`, `log1p`, `tanh` or `erf` remains.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def ParallaxUseRuntimeHelpers : Pass<"parallax-use-runtime-helpers",
                                     "::mlir::ModuleOp"> {
  let summary = "Call the runtime's helpers where MLIR's LLVM lowering calls "
                "its C runner utilities";
  let description = [{
    MLIR's conversion to the LLVM dialect lowers a `memref.copy` between
    non-contiguous memrefs to a call of `memrefCopy`, a function of
    `libmlir_c_runner_utils`. Programs do not link that library, and a
    runtime defining the same symbol would collide with it wherever both
    are loaded; this pass renames the declaration and its calls to the
    runtime's `parallax_rt_memref_copy` (RuntimeABI.def), checking the
    signature against the ABI.

    Precondition: the module is in the LLVM dialect. Postcondition: no
    symbol of MLIR's C runner utilities is declared.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ParallaxShortenBufferLifetimes
    : Pass<"parallax-shorten-buffer-lifetimes", "::mlir::func::FuncOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Upstream's ownership-based deallocation frees a buffer at the end of
    the block that allocates it. A training step is one block, so every
    intermediate buffer of the forward and backward pass stayed allocated
    until the step returned: a ResNet-18 step (batch 32) held 1.85 GB where
    its live buffers never exceed a fraction of that, and each step wrote
    to memory the allocator could not reuse (cache misses, and page faults
    on the first step).

    Like upstream's `optimize-allocation-liveness`, this pass moves the
    `memref.dealloc` of each `memref.alloc` to right after the last op of
    the allocating block that uses the buffer or any view of it
    (`BufferViewFlowAnalysis`, plus every memref an op makes from it, as a
    conservative closure). It leaves a deallocation where it is when the
    buffer may outlive what the IR shows: passed to a runtime parameter
    marked `parallax.retained` (RT_RETAINED_MEMREF: the runtime keeps the
    pointer, e.g. an AllReduce result filled at the bucket's wait or a
    registered input filled each step), yielded or returned by a
    terminator, turned into a pointer or a cast the analysis cannot follow,
    freed more than once, or used outside the allocating block's ops.

    Precondition: deallocations are explicit `memref.dealloc`s (after the
    deallocation pipeline and `convert-bufferization-to-memref`), before the
    conversion to the LLVM dialect. Postcondition: the same program; each
    moved deallocation follows the last use of its buffer.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ParallaxStridedCopiesToLinalg
    : Pass<"parallax-strided-copies-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Copy between strided buffers with a loop nest of the "
                "program's own (linalg.copy)";
  let description = [{
    MLIR's conversion to the LLVM dialect copies a `memref.copy` between
    two contiguous buffers with `llvm.memcpy`, and any other one through a
    runtime function that walks the shapes and strides it reads from the
    descriptors at run time (`parallax_rt_memref_copy`). Bufferization
    writes such copies wherever a tensor lands in part of another: a
    convolution's input into its zero-padded buffer, a gradient into the
    strided places of a dilated one. Their rows are short (a 2x2 or 8x8
    activation copies 8 or 32 bytes a row), so the runtime's walk costs
    far more than the data: ResNet-18's copies into padded buffers ran at
    1-2 GB/s on one thread and did not get faster on two.

    This pass turns each `memref.copy` of static shape whose source or
    target is not one contiguous run into a `linalg.copy`: it then becomes
    a kernel like any other op (`--parallax-outline-kernels`), with the
    shapes and strides constants LLVM unrolls and vectorizes, shared among
    threads where it is large (`--parallax-parallelize-kernels`), and
    profiled as a kernel of the "copy and layout" family. Copies that are
    one run on both sides stay `memref.copy` (`llvm.memcpy`), as do copies
    of dynamic shape (the runtime).

    Precondition: bufferized (memrefs), before `--parallax-outline-kernels`.
    Postcondition: every remaining `memref.copy` is between contiguous
    buffers or has a dynamic shape.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ParallaxOutlineKernels
    : Pass<"parallax-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Give each linalg op on buffers a function of its own";
  let description = [{
    A training step is one function of thousands of loop nests (MobileNetV2:
    a 70,000-line `train_step`), and several of LLVM's loop passes take
    time that grows with the whole function for each loop (IndVarSimplify,
    LoopRotate, the loop vectorizer: 45 of MobileNetV2's 51 s of
    compilation). This pass moves every linalg op on buffers into a
    private function of its own, called where the op was, so LLVM
    optimizes many small functions instead: compile time becomes linear in
    the model, and a profile (`perf report`) names each kernel after the
    ONNX node it comes from (`train_step.k12.generic./conv1/Conv`).

    The kernel's arguments are the values the op uses from outside
    (constants are cloned into it). The pointers of an argument memref
    whose buffer no other argument of the call can reach (a distinct
    `memref.alloc` or `memref.get_global`, followed through views) are
    listed in the kernel's `parallax.noalias_pointers` (positions in the
    LLVM signature, where a memref is its descriptor's fields), which
    `--parallax-mark-noalias-arguments` turns into `llvm.noalias` after the
    conversion to LLVM: LLVM then still knows what it knew from the
    distinct allocations in one function, and vectorizes without run-time
    overlap checks. Kernels are `noinline`: inlined back, they would be the
    one large function again.

    Precondition: bufferized linalg ops (after the deallocation pipeline),
    before `convert-linalg-to-loops`. Postcondition: no function other than
    the kernels contains a linalg op; each kernel holds exactly one.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ParallaxInstrumentProfile
    : Pass<"parallax-instrument-profile", "::mlir::ModuleOp"> {
  let summary = "Bracket every kernel and costly runtime call with profile "
                "sites, and describe each site";
  let description = [{
    Makes `PROGRAM --profile FILE` possible (docs/training.md, "Where the
    step's time goes"). In every function that is not a kernel of
    `--parallax-outline-kernels`, each call of a kernel, each
    `memref.copy` and each call of a runtime entry point that computes or
    communicates (matrix products, optimizer updates, collectives,
    parameter-store pushes and pulls, the batch load) becomes site N:

    ```mlir
    call @parallax_rt_profile_begin(%cN) : (i64) -> ()
    call @train_step.k3.generic./fc/Gemm(...) : (...) -> ()
    call @parallax_rt_profile_end(%cN) : (i64) -> ()
    ```

    and the module gets the constant `parallax_profile_sites`, one line per
    site in site order: `family<TAB>flops<TAB>bytes<TAB>node<TAB>name`.
    The counts are static, for one execution of the site:
    - flops: the op's iteration points times its body's floating-point
      operations (arithmetic, comparisons and math functions count one, an
      FMA two); a matrix product through the runtime `2 M N K`;
    - bytes: the least traffic the site needs: each operand buffer once,
      an output that is also read twice, and at most one element per point
      for each load or store through a captured buffer (gathers,
      scatters); a runtime call the sizes of its buffers;
    - family: named ops by name (convolution, pooling, fill); generic ones
      by what they do: gather and scatter (loads through captured
      buffers), reduction (a reduction loop), im2col and padding (a copy
      through a window), copy and layout (a copy), elementwise (the rest).
    When not profiling, the runtime returns from both calls at once.

    Precondition: after `--parallax-outline-kernels`, before the
    conversion to LLVM. Postcondition: every site is bracketed exactly
    once; kernels themselves are unchanged (a parallelized kernel is timed
    as a whole).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
  ];
}

def ParallaxVectorizeTransposes
    : Pass<"parallax-vectorize-transposes", "::mlir::ModuleOp"> {
  let summary = "Transpose the innermost dimension by 8x8 tiles of "
                "registers";
  let description = [{
    A `linalg.transpose` that moves the innermost dimension (an NCHW
    tensor to NHWC, a matrix's rows to columns) becomes, through
    `convert-linalg-to-loops`, an innermost loop that reads with the
    stride of a whole row: LLVM vectorizes it into gathers, which ran at
    5-14 GB/s on this project's AVX-512 machine (the max pooling
    gradients' NHWC copies, SqueezeNet's and ResNet-18's, and the
    transposes of the filter gradients' products).

    This pass builds such a transpose as loops over 8x8 tiles of the two
    dimensions it exchanges (the output's innermost and the one the
    input's innermost becomes): 8 vector loads of input rows, joined into
    one 64-element vector, one `vector.shuffle` into its transpose (LLVM's
    x86 backend turns these into unpack and permute instructions), and 8
    vector stores of output rows. Every element is
    copied once, unchanged. `--parallax-parallelize-kernels` builds the
    chunks of large transposes the same way (`transposeByTiles`).

    The loops over the other dimensions go outermost; where an exchanged
    dimension is not a multiple of 8, partial tiles follow the whole ones:
    their input rows are read and their output rows written through masks
    of their first lanes (missing rows are zeros, never stored). It applies to transposes on buffers
    of static shape with 32-bit elements whose input and output have
    contiguous innermost dimensions and whose two exchanged dimensions are
    at least 8 long; others are left to `convert-linalg-to-loops`.

    Precondition: bufferized linalg ops, after
    `--parallax-parallelize-kernels`, before `convert-linalg-to-loops`.
    Postcondition: no qualifying `linalg.transpose` remains.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def ParallaxParallelizeKernels
    : Pass<"parallax-parallelize-kernels", "::mlir::ModuleOp"> {
  let summary = "Share the outermost loop of large kernels among threads "
                "(scf.parallel over chunks)";
  let description = [{
    For each kernel of `--parallax-outline-kernels` whose linalg op has a
    static iteration space of at least `min-iterations` points and a
    parallel loop of more than one iteration, the outermost such (the
    shared loop), adds `<kernel>.chunk`: the
    op's loop nest (as `convert-linalg-to-loops` builds it) with the
    shared loop limited to one chunk: `[begin, begin + size)` for a
    `begin` argument, chunks of one static size where the extent has a
    divisor that makes at least 16 of them (LLVM then sees the chunk's trip
    count), else `[begin, end)` for two arguments. The kernel then runs
    `scf.parallel` over (at most 256) fixed chunks of that loop, each
    calling the chunk function; `convert-scf-to-openmp` shares the chunks
    among the worker's OpenMP threads.

    The chunk function is private and `noinline` like the kernel, with the
    same `parallax.noalias_pointers`: LLVM vectorizes it as it did the
    kernel. Inlined into OpenMP's outlined region, its memrefs would be
    values loaded from a closure, and LLVM could not vectorize the loops
    without run-time overlap checks (4x slower generated code).

    Reduction loops outside the shared loop (a batch norm's per-channel
    sums over the N of NCHW) run inside each chunk: the shared loop must
    then index every output (chunks write disjoint elements) and have at
    least 16 points within it (a column sum, whose parallel loop is the
    innermost, is left alone: its chunks would read single elements).

    A reduction loop is never split, and chunks are fixed by the shape,
    so every point runs the same code, and every sum adds in the same
    order, whatever the number of threads: results do not depend on it.
    A transpose that `--parallax-vectorize-transposes` would rewrite gets
    chunks of whole 8x8 tiles where the shared loop is one of the two it
    tiles (unless that one ends in a partial tile: then its chunks are
    plain loops), and its chunk function is that pass's loops.

    Smaller ops, ops without a parallel loop and the column sums above are
    left to `convert-linalg-to-loops`: sharing out a few microseconds of
    work costs more than it saves.

    Precondition: bufferized linalg ops, each in a kernel of its own.
    Postcondition: no kernel holds a linalg op of at least `min-iterations`
    points with a shared loop.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Smallest loop nest (points of its iteration space) shared "
           "among threads">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def ParallaxMarkNoaliasArguments
    : Pass<"parallax-mark-noalias-arguments", "::mlir::ModuleOp"> {
  let summary = "Put llvm.noalias on the kernel arguments "
                "parallax-outline-kernels found unaliased";
  let description = [{
    The conversion of functions to the LLVM dialect expands each memref
    argument into its descriptor's fields and drops the memref's argument
    attributes, `llvm.noalias` included. `--parallax-outline-kernels`
    therefore records the LLVM positions of the pointers no other argument
    reaches in `parallax.noalias_pointers`; this pass, after the conversion,
    sets `llvm.noalias` on them and removes the attribute. A position that
    is not a pointer argument is an error (the two passes disagree on the
    descriptor layout).

    Precondition: the functions are `llvm.func`s. Postcondition: no
    `parallax.noalias_pointers` remains.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ParallaxAllReduceInPlace
    : Pass<"parallax-allreduce-in-place", "::mlir::ModuleOp"> {
  let summary = "Reduce a gradient into its own buffer where nothing reads "
                "it after its AllReduce starts";
  let description = [{
    The lowering of `parallax.allreduce` (`--convert-parallax-collectives`)
    gives each gradient added to a bucket (`parallax_rt_allreduce_add_f32`)
    a fresh buffer for its reduced values. Where nothing uses the
    gradient's buffer after that call (no view of it, no op, no call), the
    reduced values may as well go into it: this pass makes the gradient's
    buffer the result's and drops the fresh one.

    One buffer fewer per dense gradient for as long as the optimizer needs
    it, and at one worker no copy at all: a program planned for any number
    of workers and run alone copied every dense gradient into its result
    at each step (ResNet-18 at batch 32: 45 MB, 2.7-4.6 ms of a 69-73 ms
    step on one thread); the runtime skips the copy of a buffer onto
    itself. With
    several workers the bucket's results are copied into the gradient's
    buffer instead of the fresh one.

    Applies where the gradient's buffer (the root of the memref passed, a
    `memref.alloc`) is in the call's block, has the fresh buffer's type
    through the view passed, and every use of it or of its views comes
    before the call (in that block), none of them a call. The fresh buffer
    must be a `memref.alloc` used by nothing before the call.

    Precondition: bufferized, before the deallocation passes (no
    `memref.dealloc` yet). Postcondition: every such call passes one buffer
    twice.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ParallaxLinalgToBlas : Pass<"parallax-linalg-to-blas",
                               "::mlir::ModuleOp"> {
  let summary = "Run f32 matrix products through the runtime's BLAS call";
  let description = [{
    Replaces `linalg.matmul` and `linalg.batch_matmul` on f32 memrefs whose
    rows are contiguous (unit stride along the last dimension) by a call to
    `parallax_rt_matmul_f32`, which runs the product in tiles on oneDNN's
    `dnnl_sgemm` or OpenBLAS's `cblas_sgemm` (C += A B, as linalg
    accumulates into its output). Other products stay loops.
    An operand that is a fresh buffer filled only by a `linalg.transpose`
    of the last two dimensions (a Gemm's `transB`, a weight gradient's
    `dY^T`) is passed as a `memref.transpose` view of the source instead,
    which the library reads transposed: the copy disappears, unless
    something may write the source between the transpose and the product.
    A runtime call writes only what RuntimeABI.def says: the memrefs
    passed to it and the buffers a runtime call of the same function
    retains (a bucket's results, a pushed variable and its state); so a
    weight's transposes for its forward product and its input gradient
    stay views across the AllReduce calls and products between them
    (ResNet-18 at batch 32: 8 transposes of its 3x3 filters, a fifth of
    its step on one thread). Other calls, and arguments of the function,
    count as written.
    Where bufferization gave the buffer to several values, the last op to
    overwrite it before the product (without reading it) must be that
    transpose, and nothing else may read the buffer before the next op
    that overwrites it (a transpose, or a fill for a later product).

    A 2-D product whose zero-filled output only a transpose into a fresh
    buffer reads (a weight gradient `(X^T dY)^T`) writes that buffer
    directly as `B^T A^T` (both read through transposed views), zero-filled
    where the output was: the transpose, a full pass over the gradient,
    goes.

    A product whose output was filled with zero for it alone (the last op
    before it that touches memory is that fill; only views, arithmetic and
    allocations come between) calls `parallax_rt_matmul_into_f32`, C = A B
    with the libraries' beta = 0, and the fill goes: one pass over C fewer
    (ResNet-18's step at batch 32: 61 of its 180 fills, 1.8 ms on one
    thread; the LM's 100,000-word weight gradient's, 2.8 ms).

    A product whose output was filled for it alone with a rank-1 bias
    broadcast along its rows or its columns (`linalg.generic` copying the
    bias into the whole buffer that the output is or collapses, as
    `--parallax-fold-bias-into-products` leaves a layer's bias; only
    views, arithmetic and allocations come between) calls
    `parallax_rt_matmul_bias_f32`, which writes each tile's bias just
    before the tile's product, while the tile is in cache; the broadcast
    goes: one pass over C fewer (the LM's 128 MB logits). The same sums
    in the same order as the broadcast and the product.

    With `cublas`, the call is `parallax_rt_cuda_matmul_f32` instead,
    which runs cuBLAS's `cublasSgemm` on the GPU (--target cuda; the GPU
    pipeline runs this pass before it maps the remaining linalg ops to
    kernels).

    Precondition: the module is bufferized. Postcondition: the programs
    built from it link the Parallax runtime, which loads oneDNN and
    OpenBLAS with the kernels the CPU's features call for (parallax-compile
    does), or, with
    `cublas`, the CUDA runtime, which loads cuBLAS.
  }];
  let options = [
    Option<"cublas", "cublas", "bool", /*default=*/"false",
           "Call cuBLAS (--target cuda) instead of the CPU's libraries">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

#endif // PARALLAX_CODEGEN_CPU_PASSES
