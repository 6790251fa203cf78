//===- LaunchesToLoops.cpp - Kernels run as host loops (cuda-sim) ---------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPULAUNCHESTOLOOPS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// An op whose meaning depends on threads running together.
bool needsConcurrentThreads(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::SubgroupReduceOp,
             gpu::AllReduceOp>(op);
}

LogicalResult runOnHost(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() || launch.getAsyncToken() ||
      launch.hasClusterSize())
    return launch.emitOpError("with memory attributions, clusters or async "
                              "tokens cannot run as host loops");
  if (!launch.getBody().hasOneBlock())
    return launch.emitOpError("with several blocks cannot run as host loops");
  WalkResult concurrent = launch.getBody().walk([](Operation *op) {
    return needsConcurrentThreads(op) ? WalkResult::interrupt()
                                      : WalkResult::advance();
  });
  if (concurrent.wasInterrupted())
    return launch.emitOpError("synchronises its threads: it cannot run as "
                              "host loops");
  Location loc = launch.getLoc();
  OpBuilder builder(launch);
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  IRMapping mapping;
  auto loopOver = [&](Value size, Value index) {
    if (getConstantIntValue(size) == 1) {
      mapping.map(index, zero);
      return;
    }
    auto loop = scf::ForOp::create(builder, loc, zero, size, one);
    mapping.map(index, loop.getInductionVar());
    builder.setInsertionPoint(loop.getBody()->getTerminator());
  };
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  for (auto [size, id] : {std::pair{grid.z, blockIds.z},
                          {grid.y, blockIds.y},
                          {grid.x, blockIds.x},
                          {block.z, threadIds.z},
                          {block.y, threadIds.y},
                          {block.x, threadIds.x}})
    loopOver(size, id);
  for (auto [argument, size] : {std::pair{gridArgs.x, grid.x},
                                {gridArgs.y, grid.y},
                                {gridArgs.z, grid.z},
                                {blockArgs.x, block.x},
                                {blockArgs.y, block.y},
                                {blockArgs.z, block.z}})
    mapping.map(argument, size);
  for (Operation &op : launch.getBody().front().without_terminator())
    builder.clone(op, mapping);
  launch.erase();
  return success();
}

struct LaunchesToLoopsPass
    : parallax::impl::ParallaxGPULaunchesToLoopsBase<LaunchesToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches)
      if (failed(runOnHost(launch)))
        return signalPassFailure();
  }
};

} // namespace
