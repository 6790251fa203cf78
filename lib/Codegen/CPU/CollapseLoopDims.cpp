//===- CollapseLoopDims.cpp - Merge contiguous loops of linalg.generic ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXCOLLAPSELOOPDIMS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// The maximal runs of adjacent loops of one iterator type that every
/// indexing map reads contiguously (or not at all); runs of one loop are
/// left out.
SmallVector<ReassociationIndices> collapsibleRuns(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.hasPureTensorSemantics())
    return {};
  // linalg.index of a merged loop would need delinearizing: keep such
  // bodies as they are.
  if (!generic.getBody()->getOps<linalg::IndexOp>().empty())
    return {};
  // A slice (a strided view after bufferization) cannot be reshaped
  // without a copy.
  if (llvm::any_of(generic->getOperands(), [](Value v) {
        return v.getDefiningOp<tensor::ExtractSliceOp>();
      }))
    return {};
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  // Upstream's rewrite handles projected permutations only (no windows,
  // no constant indices).
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  auto iterators = generic.getIteratorTypesArray();
  SmallVector<ReassociationIndices> runs;
  ReassociationIndices run{0};
  auto close = [&] {
    if (run.size() > 1)
      runs.push_back(run);
  };
  for (int64_t loop = 1, e = generic.getNumLoops(); loop < e; ++loop) {
    ReassociationIndices longer(run);
    longer.push_back(loop);
    if (iterators[loop] == iterators[run.front()] &&
        linalg::areDimSequencesPreserved(maps, {longer})) {
      run = std::move(longer);
      continue;
    }
    close();
    run = {loop};
  }
  close();
  return runs;
}

/// The loops of a generic whose unit extent may be dropped: those every
/// indexing map uses as a whole index only. Upstream's rewrite also drops
/// a unit loop inside a window index (`2 * oh + kh`, an im2col of a 1x1
/// output): `kh` then indexes a larger input dimension alone, which is no
/// longer a valid generic.
SmallVector<unsigned> droppableUnitLoops(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic) {
    if (auto pad = dyn_cast<tensor::PadOp>(op))
      return llvm::to_vector(
          llvm::seq<unsigned>(0, pad.getSourceType().getRank()));
    return {};
  }
  llvm::SmallBitVector inWindows(generic.getNumLoops());
  for (AffineMap map : generic.getIndexingMapsArray())
    for (AffineExpr result : map.getResults())
      if (!isa<AffineDimExpr>(result))
        result.walk([&](AffineExpr e) {
          if (auto dim = dyn_cast<AffineDimExpr>(e))
            inWindows.set(dim.getPosition());
        });
  SmallVector<unsigned> loops;
  for (unsigned loop = 0, e = generic.getNumLoops(); loop < e; ++loop)
    if (!inWindows.test(loop))
      loops.push_back(loop);
  return loops;
}

struct CollapseLoopDimsPass
    : parallax::impl::ParallaxCollapseLoopDimsBase<CollapseLoopDimsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Size-1 dimensions of broadcast operands first: (c, 0, 0) becomes (c),
    // which no longer blocks merging the loops it skipped.
    linalg::ControlDropUnitDims unitDims;
    unitDims.controlFn = droppableUnitLoops;
    linalg::populateFoldUnitExtentDimsPatterns(patterns, unitDims);
    linalg::populateCollapseDimensions(patterns, collapsibleRuns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
