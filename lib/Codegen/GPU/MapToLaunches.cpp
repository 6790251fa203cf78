//===- MapToLaunches.cpp - linalg on buffers to one kernel per op ---------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

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
  SmallVector<Value> indices{linear};
  if (counts.size() > 1)
    indices = affine::AffineDelinearizeIndexOp::create(
                  builder, loc, linear, getAsOpFoldResult(counts))
                  .getResults();
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

/// Lowers a linalg op to loops and makes them one kernel.
LogicalResult mapLinalgOp(linalg::LinalgOp op, int64_t threadsPerBlock) {
  if (!op.hasPureBufferSemantics())
    return op.emitOpError("is not bufferized: the GPU pipeline maps linalg "
                          "on buffers");
  IRRewriter rewriter(op->getContext());
  // Parallel loops first: a reduction outside them (a bias gradient's sum
  // over the batch, iterators [reduction, parallel]) would otherwise run
  // in one thread around them. Named ops (linalg.reduce) become generics
  // for that.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::parallel)
      order.push_back(i);
  for (auto [i, iterator] : llvm::enumerate(iterators))
    if (iterator != utils::IteratorType::parallel)
      order.push_back(i);
  if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return op.emitOpError("could not be made a linalg.generic");
      generic = *generalized;
    }
    if (failed(linalg::interchangeGenericOp(rewriter, generic, order)))
      return generic.emitOpError("could not put its parallel loops first");
    op = generic;
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
      if (failed(mapLinalgOp(op, threadsPerBlock)))
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
