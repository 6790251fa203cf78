//===- SplitReductions.cpp - Long reductions over few outputs, split ------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUSPLITREDUCTIONS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

struct SplitReductionsPass
    : parallax::impl::ParallaxGPUSplitReductionsBase<SplitReductionsPass> {
  using Base::Base;

  /// The split of `op`, or a ratio of 0 to leave it.
  linalg::SplitReductionOptions choose(linalg::LinalgOp op) const {
    linalg::SplitReductionOptions none;
    if (op.getNumReductionLoops() != 1 || op.getNumDpsInits() != 1 ||
        !op.hasPureTensorSemantics())
      return none;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    int64_t reduced = ranges[reductions.front()];
    int64_t outputs = 1;
    for (auto [range, iterator] :
         llvm::zip(ranges, op.getIteratorTypesArray())) {
      if (ShapedType::isDynamic(range))
        return none;
      if (iterator == utils::IteratorType::parallel)
        outputs *= range;
    }
    if (reduced < minReduction || outputs >= targetThreads)
      return none;
    int64_t most = std::min(targetThreads / outputs, reduced / 64);
    for (int64_t ratio = most; ratio >= 2; --ratio)
      if (reduced % ratio == 0) {
        linalg::SplitReductionOptions split;
        split.ratio = ratio;
        // The partials' new dimension last: innermost among the parallel
        // loops, so consecutive threads read consecutive elements.
        split.index =
            cast<ShapedType>(op.getDpsInits().front().getType()).getRank();
        split.innerParallel = true;
        return split;
      }
    return none;
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (choose(op).ratio > 1)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates) {
      rewriter.setInsertionPoint(op);
      // Upstream refuses what it cannot split (an unknown combiner): the
      // op then stays one kernel.
      (void)linalg::splitReduction(
          rewriter, op, [&](linalg::LinalgOp op) { return choose(op); });
    }
  }
};

} // namespace
