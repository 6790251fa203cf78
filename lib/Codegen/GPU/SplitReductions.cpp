//===- SplitReductions.cpp - Long reductions over few outputs, split ------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

#include "WarpReductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUSPLITREDUCTIONS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// The number of `op`'s outputs and of the elements reduced into each, or
/// nullopt where a size is dynamic.
std::optional<std::pair<int64_t, int64_t>>
outputsAndReduced(linalg::LinalgOp op) {
  int64_t outputs = 1, reduced = 1;
  for (auto [range, iterator] :
       llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    (iterator == utils::IteratorType::parallel ? outputs : reduced) *= range;
  }
  return std::make_pair(outputs, reduced);
}

/// A generic whose outer reduced loops `loops` become parallel, and the
/// combiner its partials start from the neutral element of.
struct Promotion {
  linalg::GenericOp op;
  Operation *combiner;
  SmallVector<unsigned> loops;
};

/// Rewrites the promotion's op into a first op in which the reduced loops
/// `promoted` are parallel, writing partials shaped [init..., promoted...]
/// (starting at the combiner's neutral element), and a second op that combines
/// the partials into `op`'s init. Both ops read what `op` read and compute what
/// it computed, up to the order of the combinations.
void promoteReductions(RewriterBase &b, const Promotion &promotion) {
  linalg::GenericOp op = promotion.op;
  Operation *combiner = promotion.combiner;
  ArrayRef<unsigned> promoted = promotion.loops;
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  OpOperand *initOperand = op.getDpsInitOperand(0);
  Value init = initOperand->get();
  auto initType = cast<RankedTensorType>(init.getType());
  unsigned rank = initType.getRank(), loops = op.getNumLoops();

  SmallVector<int64_t> partialShape(initType.getShape());
  AffineMap outMap = op.getMatchingIndexingMap(initOperand);
  SmallVector<AffineExpr> partialResults(outMap.getResults());
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop : promoted) {
    partialShape.push_back(ranges[loop]);
    partialResults.push_back(b.getAffineDimExpr(loop));
    iterators[loop] = utils::IteratorType::parallel;
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(loops, 0, partialResults, b.getContext());

  Value neutral =
      arith::ConstantOp::create(b, loc, *arith::getNeutralElement(combiner));
  Value empty =
      tensor::EmptyOp::create(b, loc, partialShape, initType.getElementType());
  Value start = linalg::FillOp::create(b, loc, neutral, empty).getResult(0);
  auto partials = linalg::GenericOp::create(b, loc, TypeRange{start.getType()},
                                            op.getDpsInputs(),
                                            ValueRange{start}, maps, iterators);
  b.cloneRegionBefore(op.getRegion(), partials.getRegion(),
                      partials.getRegion().begin());

  unsigned partialRank = rank + promoted.size();
  SmallVector<utils::IteratorType> combineIterators(
      rank, utils::IteratorType::parallel);
  combineIterators.append(promoted.size(), utils::IteratorType::reduction);
  AffineMap all = b.getMultiDimIdentityMap(partialRank);
  // (getMajorSubMap has no zero-result map: a scalar init needs one.)
  SmallVector<AffineMap> combineMaps = {
      all, AffineMap::get(partialRank, 0, all.getResults().take_front(rank),
                          b.getContext())};
  auto combined = linalg::GenericOp::create(
      b, loc, TypeRange{initType}, ValueRange{partials.getResult(0)},
      ValueRange{init}, combineMaps, combineIterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
        linalg::YieldOp::create(nested, nestedLoc,
                                parallax::combine(nested, nestedLoc, combiner,
                                                  arguments[0], arguments[1]));
      });
  b.replaceOp(op, combined.getResults());
}

/// The fewest elements a thread of a split reduction sums: a kernel's
/// launch costs as much as a few dozen dependent loads.
constexpr int64_t kMinPerThread = 16;

struct SplitReductionsPass
    : parallax::impl::ParallaxGPUSplitReductionsBase<SplitReductionsPass> {
  using Base::Base;

  /// Whether a reduction of `reduced` elements into each of `outputs` is
  /// long over few outputs: worth splitting.
  bool worthSplitting(int64_t outputs, int64_t reduced) const {
    return reduced >= minReduction && outputs < targetThreads;
  }

  /// Whether `--parallax-gpu-map-to-launches` gives `op` a block per output
  /// with at least the `splitThreads` threads per output that a split
  /// would run: one kernel instead of two, as parallel, and with no more
  /// elements per thread.
  bool takenByBlocks(linalg::GenericOp op, int64_t reduced,
                     int64_t splitThreads) const {
    return blockThreads > 0 && minBlockReduction > 0 &&
           reduced >= minBlockReduction && blockThreads >= splitThreads &&
           parallax::warpReductionOf(op);
  }

  /// For a generic with several reduced loops over few outputs, its outer
  /// reduced loops to make parallel: from the outermost, while the
  /// partials stay within `target-threads`; never the innermost, which
  /// each thread of the first op reduces over consecutive elements.
  std::optional<Promotion> promotion(linalg::GenericOp op) const {
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    if (reductions.size() < 2 || op.getNumDpsInits() != 1 ||
        op.getNumResults() != 1 || !op.hasPureTensorSemantics())
      return std::nullopt;
    Operation *combiner = parallax::neutralCombiner(op);
    auto sizes = outputsAndReduced(op);
    if (!combiner || !sizes || !worthSplitting(sizes->first, sizes->second))
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    Promotion promotion{op, combiner, {}};
    int64_t partials = sizes->first;
    for (unsigned loop : ArrayRef<unsigned>(reductions).drop_back()) {
      if (partials * ranges[loop] > targetThreads)
        break;
      partials *= ranges[loop];
      promotion.loops.push_back(loop);
    }
    if (promotion.loops.empty() ||
        takenByBlocks(op, sizes->second, partials / sizes->first))
      return std::nullopt;
    return promotion;
  }

  /// The split of `op`, or a ratio of 0 to leave it.
  linalg::SplitReductionOptions choose(linalg::LinalgOp op) const {
    linalg::SplitReductionOptions none;
    if (op.getNumReductionLoops() != 1 || op.getNumDpsInits() != 1 ||
        !op.hasPureTensorSemantics())
      return none;
    auto sizes = outputsAndReduced(op);
    if (!sizes || !worthSplitting(sizes->first, sizes->second))
      return none;
    auto [outputs, reduced] = *sizes;
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    // A warp per output takes such rows in one kernel (a split's partials
    // over a row, a norm's row of 512) instead of two.
    if (generic && reduced <= warpRows && parallax::warpReductionOf(generic))
      return none;
    int64_t most = std::min(targetThreads / outputs, reduced / kMinPerThread);
    for (int64_t ratio = most; ratio >= 2; --ratio)
      if (reduced % ratio == 0) {
        if (generic && takenByBlocks(generic, reduced, ratio))
          return none;
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

  /// One round: several reduced loops over few outputs lose their outer
  /// ones, then long single reductions are split. Whether anything changed.
  bool splitOnce() {
    SmallVector<Promotion> several;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<Promotion> found = promotion(op))
        several.push_back(std::move(*found));
    });
    IRRewriter rewriter(&getContext());
    for (const Promotion &found : several) {
      rewriter.setInsertionPoint(found.op);
      promoteReductions(rewriter, found);
    }

    SmallVector<linalg::LinalgOp> candidates;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (choose(op).ratio > 1)
        candidates.push_back(op);
    });
    bool split = false;
    for (linalg::LinalgOp op : candidates) {
      rewriter.setInsertionPoint(op);
      // Upstream refuses what it cannot split (an unknown combiner): the
      // op then stays one kernel.
      split |= succeeded(linalg::splitReduction(
          rewriter, op, [&](linalg::LinalgOp op) { return choose(op); }));
    }
    return split || !several.empty();
  }

  void runOnOperation() override {
    // The ops a round makes combine partials: where those are still long
    // over few outputs, the next round splits them again.
    for (int round = 0; round < 4 && splitOnce(); ++round)
      ;
  }
};

} // namespace
