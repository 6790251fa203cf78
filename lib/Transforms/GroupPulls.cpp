//===- GroupPulls.cpp - Pulls of rows together, for one exchange ----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGROUPPULLS
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

bool isRowPull(Operation *op) {
  auto pull = dyn_cast<PullOp>(op);
  return pull && pull.getIndices();
}

/// An op no pull moves above: it may write memory (a variable the pull
/// reads, say) or communicate. Reads of variables and other pulls of rows
/// are not.
bool isPullBarrier(Operation *op) {
  return !isRowPull(op) && !isa<ReadOp>(op) && !isMemoryEffectFree(op);
}

/// The ops of `block` after `boundary` (null: from the block's start) that
/// `pull`'s ids are computed from, in block order; empty when one of them
/// has effects (it cannot move).
SmallVector<Operation *> idsComputation(Block &block, Operation *boundary,
                                        PullOp pull, bool &movable) {
  movable = true;
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist{pull.getIndices()};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def)
      continue;
    Operation *op = block.findAncestorOpInBlock(*def);
    if (!op || (boundary && !boundary->isBeforeInBlock(op)) ||
        !slice.insert(op))
      continue;
    if (!isMemoryEffectFree(op)) {
      movable = false;
      return {};
    }
    // Values a nested op uses from this block count too.
    op->walk([&](Operation *nested) {
      llvm::append_range(worklist, nested->getOperands());
    });
  }
  SmallVector<Operation *> ordered = slice.takeVector();
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Groups the pulls of rows of `block` into runs: each pull goes to the
/// end of the current run (pulls since the last barrier), and the pure
/// ops computing its ids move before the run's first pull; where they
/// cannot (an op with effects computes them), the pull starts a new run
/// after its ids.
void groupPullsIn(Block &block) {
  // The last barrier (null: the block's start) and the current run.
  Operation *barrier = nullptr, *runFirst = nullptr, *runLast = nullptr;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (!isRowPull(&op)) {
      if (isPullBarrier(&op)) {
        barrier = &op;
        runFirst = runLast = nullptr;
      }
      continue;
    }
    auto pull = cast<PullOp>(op);
    bool movable = false;
    SmallVector<Operation *> ids =
        idsComputation(block, runFirst ? runFirst : barrier, pull, movable);
    if (runFirst && movable) {
      for (Operation *computation : ids)
        computation->moveBefore(runFirst);
      op.moveAfter(runLast);
      runLast = &op;
      continue;
    }
    // A new run, as high as the ids allow.
    Operation *after = barrier;
    if (Operation *def = pull.getIndices().getDefiningOp())
      if (Operation *inBlock = block.findAncestorOpInBlock(*def))
        if (!after || after->isBeforeInBlock(inBlock))
          after = inBlock;
    if (after)
      op.moveAfter(after);
    else if (&op != &block.front())
      op.moveBefore(&block.front());
    runFirst = runLast = &op;
  }
}

struct ParallaxGroupPullsPass
    : parallax::impl::ParallaxGroupPullsBase<ParallaxGroupPullsPass> {
  void runOnOperation() override {
    getOperation()->walk([](Block *block) { groupPullsIn(*block); });
  }
};

} // namespace
