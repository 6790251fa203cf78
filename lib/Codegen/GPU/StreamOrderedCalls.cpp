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
/// memory (or only allocates).
bool independentOfStream(Operation *op) {
  return !op->hasTrait<OpTrait::IsTerminator>() && !isa<gpu::WaitOp>(op) &&
         parallax::touchesNoMemory(op);
}

/// A host wait for one token: `gpu.wait [%t]`.
gpu::WaitOp hostWaitFor(Operation *op) {
  auto wait = dyn_cast_or_null<gpu::WaitOp>(op);
  if (!wait || wait.getAsyncToken() || wait.getAsyncDependencies().size() != 1)
    return {};
  return wait;
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
  auto next = dyn_cast_or_null<gpu::WaitOp>(after);
  if (next && next.getAsyncToken() && next.getAsyncDependencies().empty()) {
    Operation *following = after->getNextNode();
    next.getAsyncToken().replaceAllUsesWith(token);
    next.erase();
    return following;
  }
  if (after)
    builder.setInsertionPoint(after);
  else
    builder.setInsertionPointToEnd(first->getBlock());
  gpu::WaitOp::create(builder, first->getLoc(), Type(), ValueRange{token});
  return after;
}

struct StreamOrderedCallsPass
    : parallax::impl::ParallaxGPUStreamOrderedCallsBase<
          StreamOrderedCallsPass> {
  void runOnOperation() override {
    getOperation().walk([](Block *block) {
      for (Operation *op = block->empty() ? nullptr : &block->front(); op;)
        op = queuesOnStream(op) ? joinChain(op) : op->getNextNode();
    });
  }
};

} // namespace
