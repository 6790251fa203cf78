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

def ParallaxInlineVariables : Pass<"parallax-inline-variables",
                                  "::mlir::ModuleOp"> {
  let summary = "Replace reads of never-assigned variables by their values";
  let description = [{
    For inference, where nothing updates the model's variables: every
    `parallax.read` of a variable that has an initial value and is never
    the target of `parallax.assign` or `parallax.push` becomes an
    `arith.constant` of that value (a resource blob stays a resource
    blob), and variables no longer referenced are erased.

    Precondition: none. Postcondition: only variables without an initial
    value or that are written remain.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // PARALLAX_TRANSFORMS_PASSES_TD
