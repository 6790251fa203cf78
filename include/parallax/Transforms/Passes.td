//===- Passes.td - Parallax transformation passes ----------*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_TRANSFORMS_PASSES_TD
#define PARALLAX_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ParallaxBucketAllReduce : Pass<"parallax-bucket-allreduce"> {
  let summary = "Merge small allreduces into size-bounded buckets";
  let description = [{
    Every collective pays a fixed latency, so many small gradient
    allreduces are slower than a few large ones (Horovod's tensor fusion,
    PyTorch DDP's buckets). This pass merges runs of `parallax.allreduce`
    ops in one block that use the same reduction into variadic allreduces
    of at most `bucket-bytes` bytes each.

    A run may contain ops other than allreduces, but it ends at any other
    collective (push, pull, allgather, broadcast, an async allreduce) and at
    any use of a pending allreduce's result, since the merged op is placed
    where the run's last allreduce was and must dominate those uses. A
    tensor larger than the bucket is reduced on its own.

    Precondition: none. Postcondition: the set of reduced tensors and their
    results are unchanged; within a block the relative order of collectives
    is preserved, so every worker still issues them in the same order.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"25 << 20",
           "Largest bucket in bytes (default 25 MiB, as PyTorch DDP)">,
  ];
}

def ParallaxAsyncAllReduce : Pass<"parallax-async-allreduce"> {
  let summary = "Split allreduces into start/wait to overlap communication";
  let description = [{
    Rewrites each `parallax.allreduce` into a `parallax.allreduce_start` at
    the same place and a `parallax.allreduce_wait` sunk to just before the
    first operation in the block that uses one of its results (or before
    the block's terminator), so that the compute in between overlaps the
    communication: in a backward pass, the gradient of layer k is reduced
    while the gradients of layers k-1...1 are computed.

    Other Parallax collectives (push, pull, allgather, broadcast, starts) may
    sit between a start and its wait: every worker still issues all
    collectives in program order, and MPI and NCCL allow blocking
    collectives while a nonblocking one is in flight. A wait never moves
    past another `allreduce_wait` (waits complete in issue order) nor past
    an op whose effects are unknown, such as a call.

    Precondition: none. Postcondition: no `parallax.allreduce` remains in the
    processed blocks; every start has exactly one wait in its block.
  }];
}

def ParallaxGroupPulls : Pass<"parallax-group-pulls"> {
  let summary = "Move pulls of rows together so that they share one exchange";
  let description = [{
    A pull of rows from parameter servers costs three rounds of
    communication (counts, ids, rows), however few rows it asks for, and
    pulls that follow each other are fetched together in those three
    rounds (`--convert-parallax-variables` lowers each run of them to
    queued requests and one completion). A model with several embedding
    tables pulls each where its lookup was, with compute in between (the
    slice of the input that holds the table's ids, say). This pass groups
    the pulls of each block into runs: a `parallax.pull` with indices
    moves up to the end of the current run (the pulls since the last op
    that may write memory or communicate: a push, an update, another
    collective, a call), and the side-effect-free ops its indices are
    computed from move before the run's first pull. Where an op with
    effects computes the indices, the pull starts a new run just after
    them.

    Precondition: none. Postcondition: every pull reads the same ids and
    the same variable values as before; pulls keep their order, and no
    pull crosses another collective or an op that may write memory.
  }];
}

def ParallaxLocalWhenAlone : Pass<"parallax-local-when-alone",
                                 "::mlir::ModuleOp"> {
  let summary = "At one worker, read and update parameter-server variables "
                "in place instead of through the parameter store";
  let description = [{
    A program whose world is read at run time (`parallax.world` of 0: what
    `parallax-compile` builds without `--workers`) keeps its sparse tables
    on parameter servers, and run as one worker its runtime would still
    serve them through the parameter store: each step's pulled rows
    copied and each push applied by the host. On the GPU targets that
    moves the touched rows of every table between host and device memory
    at each step. This pass makes each run of consecutive `parallax.pull`s
    and of consecutive `parallax.push`es an `scf.if` on
    `parallax.workers == 1`:
    - one worker: a pull of rows is a `parallax.gather` on axis 0 of the
      variable's `parallax.read` (the same rows, with the gather's index
      checks), a pull of the whole variable is its read, and a push is a
      `parallax.update` by the same rule with the same state (lazy for a
      row-sparse gradient: repeated rows summed, then each row updated
      once), so the table stays in the memory the step's kernels use;
    - several workers: the pulls and pushes as they were, so a run of
      pulls is still one exchange.
    A push without an optimizer is left as it is.

    Precondition: after `--parallax-group-pulls` and
    `--parallax-optimizer`. Postcondition: in a module whose world is read
    at run time, every pull, and every push with an optimizer, is in the
    else branch of such an `scf.if`; other modules are unchanged.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def ParallaxInlineVariables : Pass<"parallax-inline-variables",
                                  "::mlir::ModuleOp"> {
  let summary = "Replace reads of never-assigned variables by their values";
  let description = [{
    For frozen variables, and for inference, where nothing updates the
    model's variables: every `parallax.read` of a variable that has an
    initial value and is never the target of `parallax.assign`,
    `parallax.apply_gradient`, `parallax.update` or `parallax.push` becomes an
    `arith.constant` of that value (a resource blob stays a resource
    blob), and variables no longer referenced are erased.

    Precondition: none. Postcondition: only variables without an initial
    value or that are written remain.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ParallaxAutodiff : Pass<"parallax-autodiff", "::mlir::ModuleOp"> {
  let summary = "Turn the forward function into a training step (reverse-mode AD)";
  let description = [{
    Differentiates the loss returned by `function` with respect to every
    trainable variable it reads, by reverse-mode automatic differentiation
    over the op's `GradientOpInterface` rules, and rewrites the function
    into `@train_step`: the forward computation, then the backward
    computation, then one `parallax.apply_gradient` per trainable variable
    (in declaration order), returning only the loss.

    The loss is the result named `loss` by its `parallax.name` (the ONNX
    graph output), or the only scalar float result when `loss` is empty.
    Values of non-float type (shapes, indices, masks) carry no gradient:
    comparisons, integer and boolean ops are constants for the derivative.

    Gradients of a `parallax.gather` on axis 0 are row-sparse: when such a
    gather reads a variable, the variable's gradient is a
    `!parallax.row_sparse` value (indices and rows), never a dense scatter.
    Several sparse contributions to one value are concatenated (still
    sparse); a sparse and a dense contribution add up densely (a tied
    embedding, read by a gather and a matmul, gets a dense gradient).

    Precondition: `function` has one block, no region-holding ops, and
    reads variables with `parallax.read`. Postcondition: `@train_step`
    exists and returns the loss; a trainable variable the loss does not
    depend on gets no `apply_gradient` and a warning naming it.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "The function computing the loss">,
    Option<"loss", "loss", "std::string", /*default=*/"\"\"",
           "The name (parallax.name) of the result to minimise; empty: the "
           "only scalar float result">,
    Option<"returnGradients", "return-gradients", "bool", /*default=*/"false",
           "Return each trainable variable's dense gradient as a result "
           "named d_<variable> (zero when the loss does not depend on it) "
           "instead of emitting apply_gradient (for testing and debugging)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ParallaxDeclareIndexRanges : Pass<"parallax-declare-index-ranges",
                                      "::mlir::ModuleOp"> {
  let summary = "Record the valid range of every graph input used as indices";
  let description = [{
    Finds the function arguments (graph inputs) whose values index
    something, following them through ops that pass on every element
    (reshape, transpose, expand, tile, concat, integer widening casts) and
    through slices taken of the input itself (then only the sliced region
    of the input is constrained: a column of a table of ids), and
    lists on each argument a `#parallax.index_range` per use in
    `parallax.index_ranges`:

    * the indices of a `parallax.gather` of a dimension of size n:
      `[-n, n)` (ONNX counts negative indices from the end);
    * the labels of a classification loss over C classes: `[0, C)`, or
      the loss's `ignore_index`.

    The generated entry points check the data of such an input against
    its ranges before anything runs, so a bad id is reported with the file,
    the example and the value. Generated kernels check every index as
    well (an index computed inside the graph has no input to check), so
    this pass only moves the error earlier and makes it precise.

    Precondition: none. Postcondition: every such argument has
    `parallax.index_ranges`; the IR is otherwise unchanged.
  }];
}

def ParallaxSparsityAnalysis : Pass<"parallax-sparsity-analysis",
                                    "::mlir::ModuleOp"> {
  let summary = "Annotate trained variables with their gradient kind and sparsity";
  let description = [{
    Reads the gradient autodiff produced for each trained variable (the
    operand of its `parallax.apply_gradient`, or of `parallax.update`) and
    sets the variable's `sparsity` attribute:

    * a `!parallax.row_sparse<tensor<V x ...>, rows = K>` gradient is
      `sparse`: one global step of N workers touches at most
      `min(V, N * K)` rows (K indices per worker; repeated ids only lower
      the count), so `alpha <= min(1, N * K / V)` is the static bound;
    * any other gradient is `dense`, with alpha 1.

    N is `workers`, or the module's `parallax.world` when `workers` is 0,
    or 1. The bound is an upper bound, and heavy-tailed id distributions
    touch fewer unique rows: with `profile-data=DIR` (`parallax-compile
    --profile-data`) alpha is measured instead, as the mean number of
    unique rows a global step of N workers looks up in the sample data
    (`<graph input>.npy`, the training-data layout;
    include/parallax/Analysis/ProfileSparsity.h).

    Precondition: autodiff has run (at least one gradient). Postcondition:
    every variable with a gradient has `sparsity`.
  }];
  let options = [
    Option<"workers", "workers", "int64_t", /*default=*/"0",
           "Workers of one global step (0: the module's parallax.world, or 1)">,
    Option<"profileData", "profile-data", "std::string", /*default=*/"\"\"",
           "Measure alpha on the sample data in this directory">,
  ];
}

def ParallaxDistribute : Pass<"parallax-distribute", "::mlir::ModuleOp"> {
  let summary = "Rewrite the training step for N data-parallel workers";
  let description = [{
    Plans every trained variable with the cost model
    (include/parallax/Analysis/Plan.h, docs/cost-model.md) for `workers`
    workers on `cluster`, records the decision as the variable's
    `distribution` and the module's `parallax.world`, and rewrites how its
    gradient is applied:

    * `allreduce`: the (dense) gradient is averaged with
      `parallax.allreduce mean`, placed right where the gradient is
      computed; then the allreduces are fused into buckets of at most
      `bucket-bytes` and split into a start where the bucket's last gradient
      is computed and a wait before its update by the passes that follow it
      in the pipeline (`--parallax-bucket-allreduce`,
      `--parallax-async-allreduce`), so communication overlaps the rest of
      the backward pass. A row-sparse gradient is densified first
      (strategy `allreduce`).
    * `allgather` (replicated, row-sparse): every worker's indices and
      rows are gathered (`parallax.allgather`), the rows divided by the
      number of workers, and every replica applies the same sparse update.
    * `ps`: the gradient is pushed to the servers owning the variable's
      partitions (`parallax.push`), which average and apply the optimizer;
      each gather of the variable becomes a `parallax.pull` of just the
      rows it reads (other reads pull the whole variable).

    `strategy` = `hybrid` takes the cheapest placement per variable (dense
    gradients: AllReduce); `allreduce` / `ps` force one for all, for
    ablations.

    For one worker (`workers=1`) nothing is exchanged: `hybrid` gives
    row-sparse gradients `allgather` (the worker updates its rows in
    place, no parameter store), and no collective is added (an AllReduce
    or AllGather of one worker is its input; batch sums are the worker's
    own).

    With `workers-at-run-time` the number of workers is left to the
    program (`mpirun -np N`): the module's world is
    `#parallax.world<workers = 0>`, and the
    placement follows the paper's rule, which does not depend on N: `hybrid`
    puts row-sparse gradients on parameter servers and dense ones on
    AllReduce (never AllGather, whose shapes depend on N). Parameter-server
    partition counts come from the cost model for `workers-at-run-time-servers`
    servers (any count works with any world size).

    Precondition: `--parallax-sparsity-analysis` has annotated the
    variables; gradients are still `parallax.apply_gradient`s.
    Every `parallax.batch_sum` (the batch statistics of training-mode
    BatchNorm, forward and backward) becomes `parallax.allreduce sum` of
    its inputs under the traffic name `batch_statistics`, so N workers
    normalise with the global batch's statistics (synchronised BatchNorm);
    with `local-batch-statistics` it is dropped and each worker uses its
    own examples'. A `batch_sum` with `min_devices` (one value per channel
    on each worker) is an error naming its node unless the sums of at
    least that many workers are reduced: not with local statistics, not
    for fewer workers, nor for `workers-at-run-time`.

    Postcondition: every planned variable has a `distribution`; the
    remaining `apply_gradient`s take averaged gradients; no
    `parallax.batch_sum` is left.
  }];
  let options = [
    Option<"strategy", "strategy", "::mlir::parallax::Strategy",
           /*default=*/"::mlir::parallax::Strategy::Hybrid",
           "How variables are placed", [{::llvm::cl::values(
             clEnumValN(::mlir::parallax::Strategy::Hybrid, "hybrid",
                        "the cheapest placement per variable"),
             clEnumValN(::mlir::parallax::Strategy::AllReduce, "allreduce",
                        "every variable on AllReduce"),
             clEnumValN(::mlir::parallax::Strategy::PS, "ps",
                        "every variable on parameter servers"))}]>,
    Option<"workers", "workers", "int64_t", /*default=*/"0",
           "Workers (0: the module's parallax.world, or the cluster's)">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "machines=M,workers-per-machine=G,bandwidth=B,latency=L,"
           "local-bandwidth=B (default: one worker per machine, 10Gbps, "
           "50us, links within a machine free)">,
    Option<"workersAtRunTime", "workers-at-run-time", "bool",
           /*default=*/"false",
           "Plan for any number of workers, known only when the program "
           "runs">,
    Option<"runTimeServers", "workers-at-run-time-servers", "int64_t",
           /*default=*/"8",
           "With workers-at-run-time: the servers partition counts are "
           "chosen for">,
    Option<"localBatchStatistics", "local-batch-statistics", "bool",
           /*default=*/"false",
           "Each worker's batch statistics from its own examples (DDP's "
           "default BatchNorm) instead of the global batch's">,
  ];
}

def ParallaxPartition : Pass<"parallax-partition", "::mlir::ModuleOp"> {
  let summary = "Choose the partition count of each parameter-server variable";
  let description = [{
    Sets the `partitions` of every variable placed on parameter servers
    (`#parallax.distribution<ps, partitions = P>`). By default it keeps the
    count `--parallax-distribute` recorded from the plan (the one rule,
    `defaultPartitions` in include/parallax/Analysis/Plan.h: one partition
    per machine, the fewest that spreads the variable's traffic over every
    machine, never more than the variable's rows); `servers=S` applies that
    rule for S machines instead. `overrides` sets chosen
    variables' counts (`name=P,...`), e.g. from the runtime's partition
    search. Which server serves which partition is decided when the
    variables are lowered (`--convert-parallax-variables`): variables by
    decreasing size, each from the least loaded server on.

    Precondition: `--parallax-distribute` has placed the variables.
    Postcondition: every PS variable has its partition count; a count
    above the variable's rows, or an override naming a variable that is
    not on servers, is an error.
  }];
  let options = [
    Option<"servers", "servers", "int64_t", /*default=*/"0",
           "Servers the rule partitions for (0: keep the plan's counts)">,
    ListOption<"overrides", "overrides", "std::string",
               "Per-variable partition counts, as name=P">,
  ];
}

def ParallaxOptimizer : Pass<"parallax-optimizer", "::mlir::ModuleOp"> {
  let summary = "Replace apply_gradient by the optimizer's update";
  let description = [{
    Chooses the update rule for every trainable variable: each
    `parallax.apply_gradient @v, %g` becomes
    `parallax.update @v, %g optimizer = #parallax.optimizer<...>`, and the
    optimizer's state tensors become `state` variables named
    `<variable>.<state>` (PyTorch's state names: `momentum_buffer`, `sum`,
    `exp_avg`, `exp_avg_sq`), zero-initialised (Adagrad's `sum` starts at
    `initial-accumulator-value`). A row-sparse gradient gives a lazy,
    row-wise update (see `#parallax.optimizer`). A `parallax.push` (a
    variable on parameter servers) gets the optimizer and its state as
    attributes: its servers apply the update.

    Precondition: none. Postcondition: no `parallax.apply_gradient` remains
    and every push names its optimizer.
  }];
  let options = [
    Option<"optimizer", "optimizer", "::mlir::parallax::OptimizerKind",
           /*default=*/"::mlir::parallax::OptimizerKind::SGD",
           "The update rule", [{::llvm::cl::values(
             clEnumValN(::mlir::parallax::OptimizerKind::SGD, "sgd",
                        "plain SGD"),
             clEnumValN(::mlir::parallax::OptimizerKind::Momentum, "momentum",
                        "SGD with (Nesterov) momentum"),
             clEnumValN(::mlir::parallax::OptimizerKind::Adagrad, "adagrad",
                        "Adagrad"),
             clEnumValN(::mlir::parallax::OptimizerKind::Adam, "adam", "Adam"),
             clEnumValN(::mlir::parallax::OptimizerKind::AdamW, "adamw",
                        "AdamW"))}]>,
    Option<"lr", "lr", "double", /*default=*/"0.01", "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum factor (momentum)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum (momentum)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "First-moment decay (adam, adamw)">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "Second-moment decay (adam, adamw)">,
    Option<"epsilon", "epsilon", "double", /*default=*/"-1.0",
           "Denominator term; negative: PyTorch's default (1e-10 for "
           "adagrad, 1e-8 for adam and adamw)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay; negative: PyTorch's default (0.01 for adamw, "
           "0 otherwise)">,
    Option<"lrDecay", "lr-decay", "double", /*default=*/"0.0",
           "Learning-rate decay (adagrad)">,
    Option<"initialAccumulatorValue", "initial-accumulator-value", "double",
           /*default=*/"0.0", "Initial value of Adagrad's sum">,
  ];
}

#endif // PARALLAX_TRANSFORMS_PASSES_TD
