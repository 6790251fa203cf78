//===- AsyncAllReduce.cpp - Overlap allreduces with compute ---------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXASYNCALLREDUCE
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// True for ops a wait must not move past: another wait (waits complete in
/// issue order), an op that may communicate in ways the pass cannot see (a
/// call), and the terminator. Parallax collectives are not barriers: every
/// worker issues them in the same order whether or not a reduction is in
/// flight.
bool isWaitBarrier(Operation &op) {
  if (isa<AllReduceWaitOp>(op) || op.hasTrait<OpTrait::IsTerminator>())
    return true;
  return !isa<ParallaxDialect>(op.getDialect()) && mayCommunicate(&op);
}

/// Splits the allreduces of `block` in one pass over it: O(ops + uses).
void splitAllReducesIn(Block &block) {
  // Positions and, for each position, the first barrier at or after it.
  SmallVector<Operation *> ops;
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : block) {
    position[&op] = ops.size();
    ops.push_back(&op);
  }
  unsigned end = ops.size();
  SmallVector<unsigned> nextBarrier(end + 1, end);
  for (unsigned i = end; i-- > 0;)
    nextBarrier[i] = isWaitBarrier(*ops[i]) ? i : nextBarrier[i + 1];

  SmallVector<AllReduceOp> allReduces;
  for (Operation *op : ops)
    if (auto allReduce = dyn_cast<AllReduceOp>(op))
      allReduces.push_back(allReduce);

  // Last first, so that each wait can be placed before the next one.
  // `replacement` maps an erased allreduce to its start, which takes its
  // place as an insertion point.
  DenseMap<Operation *, Operation *> replacement;
  Operation *nextWait = nullptr;
  unsigned nextWaitPos = end;
  for (AllReduceOp op : llvm::reverse(allReduces)) {
    unsigned pos = position[op];
    unsigned waitPos = nextBarrier[pos + 1];
    for (Operation *user : op->getUsers())
      waitPos = std::min(waitPos, position[block.findAncestorOpInBlock(*user)]);

    OpBuilder builder(op);
    auto start =
        AllReduceStartOp::create(builder, op.getLoc(), op.getReduction(),
                                 op.getInputs(), op.getVariablesAttr());
    if (nextWait && waitPos >= nextWaitPos) {
      builder.setInsertionPoint(nextWait);
      waitPos = nextWaitPos;
    } else if (waitPos < end) {
      Operation *before = ops[waitPos];
      builder.setInsertionPoint(replacement.lookup_or(before, before));
    } else {
      // A block without a terminator (a graph region): wait at its end.
      builder.setInsertionPointToEnd(&block);
    }
    auto wait = AllReduceWaitOp::create(builder, op.getLoc(),
                                        op.getResultTypes(), start.getHandle());
    op.replaceAllUsesWith(wait.getResults());
    replacement[op] = start;
    op.erase();
    nextWait = wait;
    nextWaitPos = waitPos;
  }
}

struct AsyncAllReducePass
    : public parallax::impl::ParallaxAsyncAllReduceBase<AsyncAllReducePass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) {
      if (llvm::any_of(*block, llvm::IsaPred<AllReduceOp>))
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      splitAllReducesIn(*block);
  }
};

} // namespace
