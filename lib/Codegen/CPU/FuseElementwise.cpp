//===- FuseElementwise.cpp - Elementwise fusion that keeps named products -===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXFUSEELEMENTWISE
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// A generic that only copies: one input, every loop parallel, its body
/// yielding the input element, its result written in loop order. Its input
/// map may be any affine map (a reversal, a strided read).
bool isPureCopy(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !op.getIndexingMapsArray()[1].isIdentity())
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == op.getBody()->getArgument(0);
}

/// The collapsed position of each expanded index of `expand`:
/// (e0, ..., en) -> (sum over each group of e_k times the sizes after k).
AffineMap collapsedPositionMap(tensor::ExpandShapeOp expand) {
  ArrayRef<int64_t> shape = expand.getResultType().getShape();
  MLIRContext *context = expand.getContext();
  SmallVector<AffineExpr> positions;
  for (ReassociationIndices group : expand.getReassociationIndices()) {
    AffineExpr position = getAffineConstantExpr(0, context);
    for (int64_t dim : group)
      position = position * shape[dim] + getAffineDimExpr(dim, context);
    positions.push_back(position);
  }
  return AffineMap::get(shape.size(), 0, positions, context);
}

/// A transpose of a copy (through at most one expand_shape) becomes one
/// copy that reads the copy's input: a convolution's input gradient flips
/// its filter spatially and then swaps its channels, two passes over the
/// filter (2 x 9.4 MB for a 512 x 512 x 3 x 3 one) where one does.
struct FoldCopyIntoTranspose : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    if (!transpose.hasPureTensorSemantics())
      return failure();
    Value source = transpose.getInput();
    auto expand = source.getDefiningOp<tensor::ExpandShapeOp>();
    if (expand) {
      if (!expand->hasOneUse() || !expand.getResultType().hasStaticShape())
        return failure();
      source = expand.getSrc();
    }
    auto copy = source.getDefiningOp<linalg::GenericOp>();
    if (!copy || !copy->hasOneUse() || !copy.hasPureTensorSemantics() ||
        !isPureCopy(copy))
      return failure();
    // Output index -> transpose input -> copy's result -> copy's input.
    AffineMap read = transpose.getIndexingMapsArray()[0];
    if (expand)
      read = collapsedPositionMap(expand).compose(read);
    read = simplifyAffineMap(copy.getIndexingMapsArray()[0].compose(read));
    Value init = transpose.getInit();
    auto rank = cast<ShapedType>(init.getType()).getRank();
    SmallVector<AffineMap> maps{read, rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        transpose, init.getType(), copy.getDpsInputs(), ValueRange{init}, maps,
        iterators, [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args.front());
        });
    return success();
  }
};

/// Whether fusing `producer` into `consumer` through `fused` would make the
/// fused op update one of the producer's outputs several times: the
/// producer adds into its output (reads its init) and the consumer reads
/// each of its elements at more than one point (a broadcast). Upstream's
/// fusion keeps such an output and composes its map, so every visit would
/// add the input again (a convolution input gradient's col2im, fused into
/// a global pooling's gradient, was counted once per pixel).
bool accumulatesIntoRevisited(Operation *producer, linalg::GenericOp consumer,
                              OpOperand *fused) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic)
    return false;
  bool readsInit =
      llvm::any_of(generic.getDpsInitsMutable(), [&](OpOperand &o) {
        return generic.payloadUsesValueFromOperand(&o);
      });
  return readsInit && !consumer.getMatchingIndexingMap(fused).isPermutation();
}

struct FuseElementwisePass
    : parallax::impl::ParallaxFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
          return producer && producer->hasOneUse() && consumer &&
                 consumer.getNumLoops() == consumer.getNumParallelLoops() &&
                 !accumulatesIntoRevisited(producer, consumer, fused);
        });
    patterns.add<FoldCopyIntoTranspose>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
