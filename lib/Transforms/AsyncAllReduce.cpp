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

/// Returns the op of `op`'s block before which the wait for `op` goes: the
/// first op that uses one of its results (directly or in a nested region),
/// the first later collective other than an allreduce_start, or the
/// terminator.
Operation *findWaitPoint(AllReduceOp op) {
  Block *block = op->getBlock();
  Operation *firstUser = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (!firstUser || ancestor->isBeforeInBlock(firstUser))
      firstUser = ancestor;
  }
  for (Operation *it = op->getNextNode(); it; it = it->getNextNode()) {
    if (it == firstUser || it->hasTrait<OpTrait::IsTerminator>())
      return it;
    if (!isa<AllReduceStartOp>(it) && mayCommunicate(it))
      return it;
  }
  // A block without a terminator (a graph region): wait at its end.
  return nullptr;
}

struct AsyncAllReducePass
    : public parallax::impl::ParallaxAsyncAllReduceBase<AsyncAllReducePass> {
  void runOnOperation() override {
    SmallVector<AllReduceOp> allReduces;
    getOperation()->walk(
        [&](AllReduceOp op) { allReduces.push_back(op); });
    // Last first: a later allreduce is already a start when an earlier one
    // looks for its wait point, so the earlier wait can move past it.
    for (AllReduceOp op : llvm::reverse(allReduces)) {
      Operation *waitPoint = findWaitPoint(op);
      OpBuilder builder(op);
      auto start = AllReduceStartOp::create(builder, op.getLoc(),
                                            op.getReduction(), op.getInputs());
      if (waitPoint)
        builder.setInsertionPoint(waitPoint);
      else
        builder.setInsertionPointToEnd(op->getBlock());
      auto wait = AllReduceWaitOp::create(
          builder, op.getLoc(), op.getResultTypes(), start.getHandle());
      op.replaceAllUsesWith(wait.getResults());
      op.erase();
    }
  }
};

} // namespace
