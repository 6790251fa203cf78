//===- LaunchesToLoops.cpp - Kernels run as host loops (cuda-sim) ---------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

#include "WarpReductions.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPULAUNCHESTOLOOPS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// An op whose meaning depends on threads running together, other than
/// the shuffles and barriers the host loops emulate.
bool needsConcurrentThreads(Operation *op) {
  return isa<gpu::SubgroupReduceOp, gpu::AllReduceOp>(op);
}

/// Whether `shuffle` is one the host loops emulate: an xor within whole
/// warps by a constant offset, of a value an op of the body computed.
bool isEmulatedShuffle(gpu::ShuffleOp shuffle) {
  std::optional<int64_t> offset = getConstantIntValue(shuffle.getOffset());
  std::optional<int64_t> width = getConstantIntValue(shuffle.getWidth());
  Operation *source = shuffle.getValue().getDefiningOp();
  return shuffle.getMode() == gpu::ShuffleMode::XOR && offset && width &&
         *width == parallax::kWarpSize && *offset > 0 &&
         *offset < parallax::kWarpSize && source &&
         source->getBlock() == shuffle->getBlock() &&
         !matchPattern(source, m_Constant());
}

/// The launch body's ops cut before each shuffle and barrier: the threads
/// of a block run one segment each before any runs the next, so a shuffle
/// reads, and what follows a barrier sees, what every thread computed
/// before it.
SmallVector<SmallVector<Operation *>> segmentsOf(Block &body) {
  SmallVector<SmallVector<Operation *>> segments(1);
  for (Operation &op : body.without_terminator()) {
    if (isa<gpu::ShuffleOp, gpu::BarrierOp>(op) && !segments.back().empty())
      segments.emplace_back();
    segments.back().push_back(&op);
  }
  return segments;
}

LogicalResult runOnHost(gpu::LaunchOp launch) {
  if (!launch.getPrivateAttributions().empty() || launch.getAsyncToken() ||
      launch.hasClusterSize())
    return launch.emitOpError("with private memory, clusters or async "
                              "tokens cannot run as host loops");
  if (!launch.getBody().hasOneBlock())
    return launch.emitOpError("with several blocks cannot run as host loops");
  Block &body = launch.getBody().front();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  std::optional<int64_t> blockSize = getConstantIntValue(block.x);
  bool wholeWarps = blockSize && *blockSize % parallax::kWarpSize == 0 &&
                    getConstantIntValue(block.y) == 1 &&
                    getConstantIntValue(block.z) == 1;
  WalkResult concurrent = launch.getBody().walk([&](Operation *op) {
    auto shuffle = dyn_cast<gpu::ShuffleOp>(op);
    if (needsConcurrentThreads(op) ||
        (isa<gpu::BarrierOp>(op) && op->getBlock() != &body) ||
        (shuffle && (shuffle->getBlock() != &body || !wholeWarps ||
                     !isEmulatedShuffle(shuffle))))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (concurrent.wasInterrupted())
    return launch.emitOpError(
        "synchronises its threads other than by xor shuffles of whole warps "
        "and barriers at the top level of its body: it cannot run as host "
        "loops");

  for (BlockArgument attribution : launch.getWorkgroupAttributions())
    if (auto type = cast<MemRefType>(attribution.getType());
        !type.hasStaticShape() || !type.getLayout().isIdentity())
      return launch.emitOpError("has workgroup memory of type ")
             << type << ": it cannot run as host loops";

  SmallVector<SmallVector<Operation *>> segments = segmentsOf(body);
  DenseMap<Operation *, unsigned> segmentOf;
  for (auto [i, segment] : llvm::enumerate(segments))
    for (Operation *op : segment)
      segmentOf[op] = i;
  // Values a later segment uses are kept per thread between the segments
  // (constants are made again instead).
  auto definingSegment = [&](Value value) -> std::optional<unsigned> {
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != &body)
      return std::nullopt;
    return segmentOf.lookup(def);
  };
  // Calls `use` with each value segment `i` reads of an earlier one.
  auto forEachEarlierValue = [&](unsigned i, function_ref<void(Value)> use) {
    for (Operation *op : segments[i])
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (std::optional<unsigned> from = definingSegment(operand);
              from && *from < i)
            use(operand);
      });
  };
  llvm::SetVector<Value> kept;
  for (unsigned i = 1; i < segments.size(); ++i)
    forEachEarlierValue(i, [&](Value value) {
      if (!matchPattern(value, m_Constant()))
        kept.insert(value);
    });
  for (Value value : kept)
    if (!value.getType().isIntOrIndexOrFloat())
      return launch.emitOpError("keeps a ")
             << value.getType()
             << " between its shuffles: it cannot run as host loops";

  Location loc = launch.getLoc();
  OpBuilder builder(launch);
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  DenseMap<Value, Value> buffers;
  for (Value value : kept)
    buffers[value] = memref::AllocOp::create(
        builder, loc, MemRefType::get({*blockSize}, value.getType()));
  IRMapping blockMapping;
  // Workgroup memory: one host buffer, which each block uses in turn.
  SmallVector<Value> workgroupBuffers;
  for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(attribution.getType());
    workgroupBuffers.push_back(memref::AllocOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType())));
    blockMapping.map(attribution, workgroupBuffers.back());
  }

  auto loopOver = [&](IRMapping &mapping, Value size, Value index) {
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
  for (auto [argument, size] : {std::pair{gridArgs.x, grid.x},
                                {gridArgs.y, grid.y},
                                {gridArgs.z, grid.z},
                                {blockArgs.x, block.x},
                                {blockArgs.y, block.y},
                                {blockArgs.z, block.z}})
    blockMapping.map(argument, size);
  OpBuilder::InsertionGuard guard(builder);
  for (auto [size, id] : {std::pair{grid.z, blockIds.z},
                          {grid.y, blockIds.y},
                          {grid.x, blockIds.x}})
    loopOver(blockMapping, size, id);
  OpBuilder::InsertPoint inBlock = builder.saveInsertionPoint();
  for (auto [i, segment] : llvm::enumerate(segments)) {
    builder.restoreInsertionPoint(inBlock);
    IRMapping mapping = blockMapping;
    for (auto [size, id] : {std::pair{block.z, threadIds.z},
                            {block.y, threadIds.y},
                            {block.x, threadIds.x}})
      loopOver(mapping, size, id);
    Value thread = mapping.lookup(threadIds.x);
    // What this segment reads of earlier ones: kept values from this
    // thread's slot, constants made again.
    forEachEarlierValue(i, [&](Value value) {
      if (mapping.contains(value))
        return;
      if (kept.contains(value))
        mapping.map(value, memref::LoadOp::create(builder, loc, buffers[value],
                                                  thread));
      else
        builder.clone(*value.getDefiningOp(), mapping);
    });
    for (Operation *op : segment) {
      // The segments are the barriers.
      if (isa<gpu::BarrierOp>(op))
        continue;
      if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
        // The value lane (thread ^ offset) of this warp computed.
        Value offset = arith::ConstantIndexOp::create(
            builder, loc, *getConstantIntValue(shuffle.getOffset()));
        Value source = arith::XOrIOp::create(builder, loc, thread, offset);
        mapping.map(shuffle.getShuffleResult(),
                    memref::LoadOp::create(
                        builder, loc, buffers[shuffle.getValue()], source));
        if (!shuffle.getValid().use_empty())
          mapping.map(shuffle.getValid(),
                      arith::ConstantIntOp::create(builder, loc, 1, 1));
        continue;
      }
      builder.clone(*op, mapping);
    }
    for (Operation *op : segment)
      for (Value result : op->getResults())
        if (kept.contains(result))
          memref::StoreOp::create(builder, loc, mapping.lookup(result),
                                  buffers[result], thread);
  }
  builder.setInsertionPointAfter(launch);
  for (Value value : kept)
    memref::DeallocOp::create(builder, loc, buffers[value]);
  for (Value buffer : workgroupBuffers)
    memref::DeallocOp::create(builder, loc, buffer);
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
