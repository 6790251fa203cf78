//===- StreamOrderedCalls.cpp - Library calls without host waits ----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "HostEffects.h"
#include "parallax/Codegen/GPU/Passes.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUSTREAMORDEREDCALLS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

bool queuesOnStream(Operation *op) {
  std::optional<parallax::abi::Function> function =
      parallax::calledRuntimeFunction(op);
  return function && parallax::abi::queuesOnStream(*function);
}

/// Whether the host may run `op` while the stream works: it touches no
/// memory (or only allocates), or asks the runtime a question about the
/// run (the update's number, the seed).
bool independentOfStream(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() || isa<gpu::WaitOp>(op))
    return false;
  std::optional<parallax::abi::Function> function =
      parallax::calledRuntimeFunction(op);
  return function ? parallax::abi::answersWithoutMemory(*function)
                  : parallax::touchesNoMemory(op);
}

/// A host wait for one token: `gpu.wait [%t]`.
gpu::WaitOp hostWaitFor(Operation *op) {
  auto wait = dyn_cast_or_null<gpu::WaitOp>(op);
  if (!wait || wait.getAsyncToken() || wait.getAsyncDependencies().size() != 1)
    return {};
  return wait;
}

/// When `op` starts a new chain on the program's stream (`gpu.wait async`
/// without dependencies), has that chain continue `token`'s instead.
bool continuesChain(Operation *op, Value token) {
  auto start = dyn_cast_or_null<gpu::WaitOp>(op);
  if (!start || !start.getAsyncToken() || !start.getAsyncDependencies().empty())
    return false;
  start.getAsyncToken().replaceAllUsesWith(token);
  start.erase();
  return true;
}

/// Joins the run of calls starting at `first` to the stream's token chain;
/// returns the op after the run.
Operation *joinChain(Operation *first) {
  // The token the run queues after: the one the host waited for just
  // before it, or a new one on the program's stream.
  Operation *before = first->getPrevNode();
  while (before && independentOfStream(before))
    before = before->getPrevNode();
  OpBuilder builder(first);
  Value token;
  if (gpu::WaitOp wait = hostWaitFor(before)) {
    token = wait.getAsyncDependencies().front();
    wait.erase();
  } else {
    token = gpu::WaitOp::create(builder, first->getLoc(),
                                builder.getType<gpu::AsyncTokenType>(),
                                ValueRange())
                .getAsyncToken();
  }
  Operation *after = first->getNextNode();
  while (after && (queuesOnStream(after) || independentOfStream(after)))
    after = after->getNextNode();
  // Kernels that start a new chain continue this one; anything else the
  // host does waits for the stream first.
  Operation *following = after ? after->getNextNode() : nullptr;
  if (continuesChain(after, token))
    return following;
  if (after)
    builder.setInsertionPoint(after);
  else
    builder.setInsertionPointToEnd(first->getBlock());
  gpu::WaitOp::create(builder, first->getLoc(), Type(), ValueRange{token});
  return after;
}

/// Drops a host wait that guards only ops independent of the stream (a
/// question to the runtime between two kernels): the chain after them
/// continues the one before. Returns the op after the wait.
Operation *skipNeedlessWait(gpu::WaitOp wait) {
  Operation *after = wait->getNextNode();
  while (after && independentOfStream(after))
    after = after->getNextNode();
  if (!continuesChain(after, wait.getAsyncDependencies().front()))
    return wait->getNextNode();
  Operation *following = wait->getNextNode();
  wait.erase();
  return following;
}

struct StreamOrderedCallsPass
    : parallax::impl::ParallaxGPUStreamOrderedCallsBase<
          StreamOrderedCallsPass> {
  void runOnOperation() override {
    getOperation().walk([](Block *block) {
      for (Operation *op = block->empty() ? nullptr : &block->front(); op;)
        op = queuesOnStream(op) ? joinChain(op) : op->getNextNode();
      for (Operation *op = block->empty() ? nullptr : &block->front(); op;) {
        gpu::WaitOp wait = hostWaitFor(op);
        op = wait ? skipNeedlessWait(wait) : op->getNextNode();
      }
    });
  }
};

} // namespace
