//===- MergeSingleBlockLaunches.cpp - One-block kernels as one launch -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "HostEffects.h"
#include "parallax/Codegen/GPU/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUMERGESINGLEBLOCKLAUNCHES
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// The constant 1-d block size of a one-block launch whose body may run
/// after another's behind a barrier, or nullopt.
std::optional<int64_t> mergeableBlockSize(gpu::LaunchOp launch) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  auto isOne = [](Value v) { return getConstantIntValue(v) == 1; };
  if (!isOne(grid.x) || !isOne(grid.y) || !isOne(grid.z) || !isOne(block.y) ||
      !isOne(block.z) || launch.getAsyncToken() ||
      !launch.getAsyncDependencies().empty() || launch.hasClusterSize() ||
      launch.getDynamicSharedMemorySize() ||
      !launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() ||
      !launch.getBody().hasOneBlock())
    return std::nullopt;
  WalkResult synchronised = launch.getBody().walk([](Operation *op) {
    return isa<gpu::ShuffleOp, gpu::BarrierOp>(op) ? WalkResult::interrupt()
                                                   : WalkResult::advance();
  });
  if (synchronised.wasInterrupted())
    return std::nullopt;
  return getConstantIntValue(block.x);
}

/// Whether the host may run `op` before a launch that preceded it: it
/// touches no memory (or only allocates).
bool independentOfLaunch(Operation *op) {
  return !op->hasTrait<OpTrait::IsTerminator>() && op->getNumRegions() == 0 &&
         parallax::touchesNoMemory(op);
}

/// The most kernel parameter bytes a merged launch may take: PTX 8.0
/// allows 4352 (sm_90's larger space needs PTX 8.1).
constexpr int64_t kParameterBytes = 4096;

/// The bytes of `value` as a kernel parameter: a memref passes its
/// descriptor (two pointers, the offset, the sizes and strides).
int64_t parameterBytes(Value value) {
  if (auto memref = dyn_cast<MemRefType>(value.getType()))
    return (3 + 2 * memref.getRank()) * 8;
  return 8;
}

/// A launch and its block size.
struct Kernel {
  gpu::LaunchOp launch;
  int64_t threads;
};

Value indexConstant(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(builder, loc, value).getResult();
}

/// Puts the ops of `body` (from `begin`) under `if thread < threads`.
void guardTail(OpBuilder &builder, Block &body, Block::iterator begin,
               Value threadId, int64_t threads, Location loc) {
  builder.setInsertionPoint(body.getTerminator());
  SmallVector<Operation *> tail;
  for (Operation &op :
       llvm::make_range(begin, Block::iterator(body.getTerminator())))
    tail.push_back(&op);
  Value active =
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult, threadId,
                            indexConstant(builder, loc, threads));
  auto guard = scf::IfOp::create(builder, loc, active, /*withElse=*/false);
  for (Operation *op : tail)
    op->moveBefore(guard.thenBlock()->getTerminator());
}

/// Runs the bodies of `run` in order as one launch at the last one's
/// place, a barrier between each two, each body by as many threads as
/// its block had.
void mergeRun(ArrayRef<Kernel> run) {
  int64_t threads = 0;
  for (const Kernel &kernel : run)
    threads = std::max(threads, kernel.threads);
  gpu::LaunchOp merged = run.front().launch;
  merged->moveBefore(run.back().launch);
  Block &body = merged.getBody().front();
  Value threadId = merged.getThreadIds().x;
  OpBuilder builder(merged.getContext());
  Location loc = merged.getLoc();

  // The first body keeps its own block size.
  builder.setInsertionPointToStart(&body);
  merged.getBlockSize().x.replaceAllUsesWith(
      indexConstant(builder, loc, run.front().threads));
  if (run.front().threads < threads)
    guardTail(builder, body, builder.getInsertionPoint(), threadId,
              run.front().threads, loc);

  for (Kernel kernel : run.drop_front()) {
    builder.setInsertionPoint(body.getTerminator());
    gpu::BarrierOp::create(builder, kernel.launch.getLoc());
    // Its indices are the merged launch's, its sizes its own.
    IRMapping mapping;
    gpu::KernelDim3 ids = merged.getBlockIds(), tids = merged.getThreadIds();
    gpu::KernelDim3 laterIds = kernel.launch.getBlockIds(),
                    laterTids = kernel.launch.getThreadIds(),
                    laterGrid = kernel.launch.getGridSize(),
                    laterBlock = kernel.launch.getBlockSize();
    mapping.map(laterIds.x, ids.x);
    mapping.map(laterIds.y, ids.y);
    mapping.map(laterIds.z, ids.z);
    mapping.map(laterTids.x, tids.x);
    mapping.map(laterTids.y, tids.y);
    mapping.map(laterTids.z, tids.z);
    Value one = indexConstant(builder, loc, 1);
    for (Value size :
         {laterGrid.x, laterGrid.y, laterGrid.z, laterBlock.y, laterBlock.z})
      mapping.map(size, one);
    mapping.map(laterBlock.x, indexConstant(builder, loc, kernel.threads));
    Block::iterator begin = std::prev(Block::iterator(body.getTerminator()));
    for (Operation &op : kernel.launch.getBody().front().without_terminator())
      builder.clone(op, mapping);
    if (kernel.threads < threads)
      guardTail(builder, body, std::next(begin), threadId, kernel.threads, loc);
    kernel.launch.erase();
  }

  OpBuilder outside(merged);
  merged.getBlockSizeXMutable().assign(indexConstant(outside, loc, threads));
}

struct MergeSingleBlockLaunchesPass
    : parallax::impl::ParallaxGPUMergeSingleBlockLaunchesBase<
          MergeSingleBlockLaunchesPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) {
      if (!block->getParentOp()->getParentOfType<gpu::LaunchOp>() &&
          !isa<gpu::LaunchOp>(block->getParentOp()))
        blocks.push_back(block);
    });
    for (Block *block : blocks) {
      SmallVector<SmallVector<Kernel>> runs(1);
      // The values the current run's bodies use from the host: its
      // kernel's parameters.
      llvm::SetVector<Value> parameters;
      int64_t bytes = 0;
      auto startRun = [&] {
        if (!runs.back().empty())
          runs.emplace_back();
        parameters.clear();
        bytes = 0;
      };
      for (Operation &op : *block) {
        auto launch = dyn_cast<gpu::LaunchOp>(op);
        std::optional<int64_t> threads =
            launch ? mergeableBlockSize(launch) : std::nullopt;
        if (!threads) {
          if (!independentOfLaunch(&op))
            startRun();
          continue;
        }
        llvm::SetVector<Value> used;
        getUsedValuesDefinedAbove(launch.getBody(), used);
        int64_t added = 0;
        for (Value value : used)
          if (!parameters.contains(value))
            added += parameterBytes(value);
        if (bytes + added > kParameterBytes)
          startRun();
        for (Value value : used)
          if (parameters.insert(value))
            bytes += parameterBytes(value);
        runs.back().push_back({launch, *threads});
      }
      for (ArrayRef<Kernel> run : runs)
        if (run.size() > 1)
          mergeRun(run);
    }
  }
};

} // namespace
