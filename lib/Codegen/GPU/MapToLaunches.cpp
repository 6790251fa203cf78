//===- MapToLaunches.cpp - linalg on buffers to one kernel per op ---------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

#include "WarpReductions.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUMAPTOLAUNCHES
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

bool insideLaunch(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() != nullptr;
}

/// Creates a launch of `blocks` x `threads` before `builder`'s insertion
/// point, leaving the builder at the start of its body.
gpu::LaunchOp createLaunch(OpBuilder &builder, Location loc, Value blocks,
                           Value threads) {
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  auto launch =
      gpu::LaunchOp::create(builder, loc, blocks, one, one, threads, one, one);
  Block &body = launch.getBody().front();
  builder.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(builder, loc);
  builder.setInsertionPointToStart(&body);
  return launch;
}

/// `linear` as indices of `sizes` (itself when there is one size).
SmallVector<Value> delinearize(OpBuilder &builder, Location loc, Value linear,
                               ArrayRef<OpFoldResult> sizes) {
  if (sizes.size() == 1)
    return {linear};
  return affine::AffineDelinearizeIndexOp::create(builder, loc, linear, sizes)
      .getResults();
}

/// One thread per point of `loop`'s index space, linearised.
LogicalResult mapParallelLoop(scf::ParallelOp loop, int64_t threadsPerBlock) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError("with reductions has no GPU mapping");
  Location loc = loop.getLoc();
  OpBuilder builder(loop);
  SmallVector<Value> counts;
  Value points = arith::ConstantIndexOp::create(builder, loc, 1);
  for (auto [lower, upper, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value extent = builder.createOrFold<arith::SubIOp>(loc, upper, lower);
    Value count = builder.createOrFold<arith::CeilDivSIOp>(loc, extent, step);
    counts.push_back(count);
    points = builder.createOrFold<arith::MulIOp>(loc, points, count);
  }
  // A statically empty space (a zero-size tensor) runs nothing: no kernel.
  if (std::optional<int64_t> known = getConstantIntValue(points);
      known && *known == 0) {
    loop.erase();
    return success();
  }
  // A small constant space gets one block of whole warps, not 256 threads.
  int64_t threads = threadsPerBlock;
  if (std::optional<int64_t> known = getConstantIntValue(points))
    threads =
        std::min(threads, std::max<int64_t>(32, llvm::alignTo(*known, 32)));
  Value blockSize = arith::ConstantIndexOp::create(builder, loc, threads);
  // At least one block: an empty space (a dynamic size of 0) is a launch
  // whose threads do nothing, not an invalid launch of no blocks.
  Value blocks = builder.createOrFold<arith::MaxSIOp>(
      loc, builder.createOrFold<arith::CeilDivSIOp>(loc, points, blockSize),
      arith::ConstantIndexOp::create(builder, loc, 1));
  gpu::LaunchOp launch = createLaunch(builder, loc, blocks, blockSize);

  Value linear = arith::AddIOp::create(
      builder, loc,
      arith::MulIOp::create(builder, loc, launch.getBlockIds().x,
                            launch.getBlockSize().x),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                        linear, points);
  auto guard = scf::IfOp::create(builder, loc, inRange);
  builder.setInsertionPoint(guard.thenBlock()->getTerminator());
  SmallVector<Value> indices =
      delinearize(builder, loc, linear, getAsOpFoldResult(counts));
  IRMapping mapping;
  for (auto [index, lower, step, iv] :
       llvm::zip(indices, loop.getLowerBound(), loop.getStep(),
                 loop.getInductionVars())) {
    Value scaled = builder.createOrFold<arith::MulIOp>(loc, index, step);
    mapping.map(iv, builder.createOrFold<arith::AddIOp>(loc, lower, scaled));
  }
  for (Operation &op : loop.getBody()->without_terminator())
    builder.clone(op, mapping);
  loop.erase();
  return success();
}

/// Indices into an operand read through `map` at loop indices `ivs`.
SmallVector<Value> indicesOf(OpBuilder &builder, Location loc, AffineMap map,
                             ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(
        builder, loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  return indices;
}

/// Combines `value` across the lanes of each warp by xor shuffles with
/// offsets 1, 2, ... below `lanes` (the same tree in every warp): every
/// lane gets the combination of its group of `lanes` lanes.
Value combineAcrossLanes(OpBuilder &builder, Location loc, Operation *combiner,
                         Value value, int64_t lanes) {
  for (int32_t offset = 1; offset < lanes; offset *= 2) {
    auto shuffle =
        gpu::ShuffleOp::create(builder, loc, value, offset, parallax::kWarpSize,
                               gpu::ShuffleMode::XOR);
    value = parallax::combine(builder, loc, combiner, value,
                              shuffle.getShuffleResult());
  }
  return value;
}

/// Reduces each output of `op` with several threads: a warp per output
/// (`threadsPerBlock / 32` outputs per block, fewer where there are fewer
/// outputs) or, with `wholeBlock`, a block of `threadsPerBlock` threads
/// per output. Thread `t` of an output combines the reduced points t,
/// t + threads, ... from the combiner's neutral element; xor shuffles
/// combine each warp's partials; a block's warps then leave theirs in
/// workgroup memory and, after a barrier, combine them the same way.
/// Thread 0 of the output combines its old value with the total and
/// stores it.
LogicalResult mapReduction(linalg::GenericOp op,
                           const parallax::WarpReduction &reduction,
                           int64_t threadsPerBlock, bool wholeBlock) {
  Location loc = op.getLoc();
  OpBuilder builder(op);
  unsigned parallel = op.getNumParallelLoops();
  SmallVector<Range, 4> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(builder, loc);
  SmallVector<OpFoldResult> parallelSizes, reducedSizes;
  Value points = arith::ConstantIndexOp::create(builder, loc, 1);
  for (auto [i, range] : llvm::enumerate(ranges)) {
    if (i >= parallel) {
      reducedSizes.push_back(range.size);
      continue;
    }
    parallelSizes.push_back(range.size);
    points = builder.createOrFold<arith::MulIOp>(
        loc, points, getValueOrCreateConstantIndexOp(builder, loc, range.size));
  }
  if (std::optional<int64_t> known = getConstantIntValue(points);
      known && *known == 0) {
    op.erase();
    return success();
  }
  int64_t warps = threadsPerBlock / parallax::kWarpSize;
  int64_t threadsPerOutput = wholeBlock ? threadsPerBlock : parallax::kWarpSize;
  int64_t outputsPerBlock = wholeBlock ? 1 : warps;
  if (std::optional<int64_t> known = getConstantIntValue(points))
    outputsPerBlock = std::min(outputsPerBlock, *known);
  Value outputsValue =
      arith::ConstantIndexOp::create(builder, loc, outputsPerBlock);
  Value blocks = builder.createOrFold<arith::MaxSIOp>(
      loc, builder.createOrFold<arith::CeilDivSIOp>(loc, points, outputsValue),
      arith::ConstantIndexOp::create(builder, loc, 1));
  gpu::LaunchOp launch =
      createLaunch(builder, loc, blocks,
                   arith::ConstantIndexOp::create(
                       builder, loc, outputsPerBlock * threadsPerOutput));
  Value threadsValue =
      arith::ConstantIndexOp::create(builder, loc, threadsPerOutput);
  Value thread = launch.getThreadIds().x;
  // The first of the output's points this thread combines, and the output.
  Value first = thread, point = launch.getBlockIds().x;
  if (outputsPerBlock > 1) {
    first = arith::RemUIOp::create(builder, loc, thread, threadsValue);
    // One op per statement: the IR's order must not follow the compiler's
    // order of evaluating arguments.
    Value group = arith::DivUIOp::create(builder, loc, thread, threadsValue);
    Value firstOfBlock =
        arith::MulIOp::create(builder, loc, point, outputsValue);
    point = arith::AddIOp::create(builder, loc, firstOfBlock, group);
  }
  Value inRange = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ult,
                                        point, points);
  Type type = reduction.combiner->getResult(0).getType();
  Value neutral = arith::ConstantOp::create(builder, loc, reduction.neutral);
  auto partial = scf::IfOp::create(builder, loc, TypeRange{type}, inRange,
                                   /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(partial.elseBlock());
    scf::YieldOp::create(builder, loc, neutral);
    builder.setInsertionPointToStart(partial.thenBlock());
    SmallVector<Value> outputIndices =
        parallel ? delinearize(builder, loc, point, parallelSizes)
                 : SmallVector<Value>{};
    auto pointsLoop = scf::ForOp::create(
        builder, loc, first,
        arith::ConstantIndexOp::create(builder, loc, reduction.reduced),
        threadsValue, ValueRange{neutral});
    scf::YieldOp::create(builder, loc, pointsLoop.getResults());
    builder.setInsertionPointToStart(pointsLoop.getBody());
    SmallVector<Value> ivs = outputIndices;
    llvm::append_range(
        ivs,
        delinearize(builder, loc, pointsLoop.getInductionVar(), reducedSizes));
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument argument = op.getMatchingBlockArgument(input);
      if (!isa<MemRefType>(input->get().getType())) {
        mapping.map(argument, input->get());
        continue;
      }
      mapping.map(
          argument,
          memref::LoadOp::create(
              builder, loc, input->get(),
              indicesOf(builder, loc, op.getMatchingIndexingMap(input), ivs)));
    }
    mapping.map(op.getRegionOutputArgs().front(),
                pointsLoop.getRegionIterArgs().front());
    for (Operation &bodyOp : op.getBlock()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(bodyOp))
        mapping.map(index.getResult(), ivs[index.getDim()]);
      else
        builder.clone(bodyOp, mapping);
    }
    auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
    scf::YieldOp::create(builder, loc,
                         mapping.lookupOrDefault(yield.getOperand(0)));
  }
  Value total = combineAcrossLanes(builder, loc, reduction.combiner,
                                   partial.getResult(0), parallax::kWarpSize);
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  if (wholeBlock && warps > 1) {
    // Lane 0 of each warp leaves the warp's total in workgroup memory; after
    // the barrier every warp combines the block's totals (lanes past the
    // warps hold the neutral element), so thread 0 has the block's.
    auto shared = MemRefType::get(
        {warps}, type, MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(builder.getContext(),
                                   gpu::AddressSpace::Workgroup));
    Value totals = launch.addWorkgroupAttribution(shared, loc);
    Value lanes =
        arith::ConstantIndexOp::create(builder, loc, parallax::kWarpSize);
    Value lane = arith::RemUIOp::create(builder, loc, thread, lanes);
    auto leave = scf::IfOp::create(
        builder, loc,
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, lane,
                              zero),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(leave.thenBlock()->getTerminator());
      memref::StoreOp::create(
          builder, loc, total, totals,
          ValueRange{arith::DivUIOp::create(builder, loc, thread, lanes)});
    }
    gpu::BarrierOp::create(builder, loc);
    auto warpTotal = scf::IfOp::create(
        builder, loc, TypeRange{type},
        arith::CmpIOp::create(
            builder, loc, arith::CmpIPredicate::ult, lane,
            arith::ConstantIndexOp::create(builder, loc, warps)),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(warpTotal.thenBlock());
      scf::YieldOp::create(
          builder, loc,
          ValueRange{memref::LoadOp::create(builder, loc, totals, lane)});
      builder.setInsertionPointToStart(warpTotal.elseBlock());
      scf::YieldOp::create(builder, loc, neutral);
    }
    total = combineAcrossLanes(builder, loc, reduction.combiner,
                               warpTotal.getResult(0),
                               int64_t(llvm::PowerOf2Ceil(warps)));
  }
  auto store = scf::IfOp::create(
      builder, loc,
      arith::AndIOp::create(builder, loc, inRange,
                            arith::CmpIOp::create(builder, loc,
                                                  arith::CmpIPredicate::eq,
                                                  first, zero)),
      /*withElseRegion=*/false);
  builder.setInsertionPoint(store.thenBlock()->getTerminator());
  SmallVector<Value> ivs = parallel
                               ? delinearize(builder, loc, point, parallelSizes)
                               : SmallVector<Value>{};
  // The output's map reads the parallel loops only.
  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<Value> outputIndices = indicesOf(
      builder, loc,
      AffineMap::get(parallel, 0, op.getMatchingIndexingMap(init).getResults(),
                     op.getContext()),
      ivs);
  Value old = memref::LoadOp::create(builder, loc, init->get(), outputIndices);
  memref::StoreOp::create(
      builder, loc,
      parallax::combine(builder, loc, reduction.combiner, old, total),
      init->get(), outputIndices);
  op.erase();
  return success();
}

/// Lowers a linalg op to loops and makes them one kernel.
LogicalResult mapLinalgOp(linalg::LinalgOp op, int64_t threadsPerBlock,
                          int64_t minWarpReduction, int64_t minBlockReduction) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError("is not bufferized: the GPU pipeline maps linalg "
                          "on buffers");
  IRRewriter rewriter(op->getContext());
  // Parallel loops first: a reduction outside them (a bias gradient's sum
  // over the batch, iterators [reduction, parallel]) would otherwise run
  // in one thread around them. Named ops (linalg.reduce) become generics
  // for that, and so does every reduction, whose payload a warp may run.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::parallel)
      order.push_back(i);
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator != utils::IteratorType::parallel)
      order.push_back(i);
  bool reorder = !llvm::equal(order, llvm::seq<unsigned>(0, order.size()));
  if (reorder || op.getNumReductionLoops() > 0) {
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return op.emitOpError("could not be made a linalg.generic");
      generic = *generalized;
    }
    if (reorder &&
        failed(linalg::interchangeGenericOp(rewriter, generic, order)))
      return generic.emitOpError("could not put its parallel loops first");
    op = generic;
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      generic && op.getNumReductionLoops() > 0) {
    // Parallel loops come first by now, so the last reduced loop is the
    // innermost.
    std::optional<parallax::WarpReduction> reduction =
        parallax::warpReductionOf(generic);
    if (reduction && minBlockReduction > 0 &&
        reduction->reduced >= minBlockReduction)
      return mapReduction(generic, *reduction, threadsPerBlock,
                          /*wholeBlock=*/true);
    if (reduction && minWarpReduction > 0 &&
        reduction->reduced >= minWarpReduction)
      return mapReduction(generic, *reduction, threadsPerBlock,
                          /*wholeBlock=*/false);
  }
  Block *block = op->getBlock();
  Operation *before = op->getPrevNode();
  Operation *after = op->getNextNode();
  // Kept apart: the op is erased below.
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
    return op.emitOpError("could not be lowered to loops");
  rewriter.eraseOp(op);
  auto first = before ? std::next(before->getIterator()) : block->begin();
  auto last = after ? after->getIterator() : block->end();
  SmallVector<Operation *> generated;
  for (Operation &generatedOp : llvm::make_range(first, last))
    generated.push_back(&generatedOp);
  for (Operation *generatedOp : generated)
    if (auto loop = dyn_cast<scf::ParallelOp>(generatedOp))
      return mapParallelLoop(loop, threadsPerBlock);
  // No parallel loop (a reduction to a scalar): one thread runs it all.
  if (generated.empty())
    return success();
  OpBuilder builder(generated.front());
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  gpu::LaunchOp launch = createLaunch(builder, loc, one, one);
  for (Operation *generatedOp : generated)
    generatedOp->moveBefore(launch.getBody().front().getTerminator());
  return success();
}

struct MapToLaunchesPass
    : parallax::impl::ParallaxGPUMapToLaunchesBase<MapToLaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    // The program's entry point runs the loop over steps on the host.
    if (function.isExternal() || function.getSymName() == "main")
      return;
    if (threadsPerBlock <= 0 || threadsPerBlock % 32 != 0 ||
        threadsPerBlock > 1024) {
      function.emitError("threads-per-block must be a multiple of 32 up to "
                         "1024, got ")
          << threadsPerBlock.getValue();
      return signalPassFailure();
    }
    // Copies into views (a padded input, a slice) are kernels too.
    SmallVector<memref::CopyOp> copies;
    function.walk([&](memref::CopyOp copy) {
      if (!insideLaunch(copy))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
    SmallVector<linalg::LinalgOp> ops;
    function.walk([&](linalg::LinalgOp op) {
      if (!insideLaunch(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops)
      if (failed(mapLinalgOp(op, threadsPerBlock, minWarpReduction,
                             minBlockReduction)))
        return signalPassFailure();
    SmallVector<scf::ParallelOp> loops;
    function.walk([&](scf::ParallelOp loop) {
      if (!insideLaunch(loop) && !loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops)
      if (failed(mapParallelLoop(loop, threadsPerBlock)))
        return signalPassFailure();
  }
};

} // namespace
