//===- FoldBiasIntoProducts.cpp - Start matrix products from their bias ---===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXFOLDBIASINTOPRODUCTS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// A matrix product whose output starts from zeros that nothing else
/// uses: the product of `add(product(A, B, fill(0)), bias)`.
linalg::LinalgOp zeroStartedProduct(Value value) {
  auto product = value.getDefiningOp<linalg::LinalgOp>();
  if (!product || !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(product) ||
      !product->hasOneUse() || !product.hasPureTensorSemantics())
    return {};
  auto fill = product.getDpsInits().front().getDefiningOp<linalg::FillOp>();
  if (!fill || !fill->hasOneUse() ||
      !matchPattern(fill.getInputs().front(), m_AnyZeroFloat()))
    return {};
  return product;
}

/// out = product + bias (either order), elementwise over the product's
/// shape (or its expand_shape), the bias broadcast along any dimensions:
/// the product starts from the broadcast bias instead of zeros, and the
/// addition's pass over the output goes. BLAS computes C = A B + C, so
/// each element is still the product's sum plus the bias, rounded once
/// (for a sum over K longer than one of BLAS's K blocks, the bias joins
/// the first block's partial sum instead).
struct FoldBias : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp add,
                                PatternRewriter &rewriter) const override {
    if (!add.hasPureTensorSemantics() || add.getNumDpsInputs() != 2 ||
        add.getNumDpsInits() != 1 ||
        add.getNumLoops() != add.getNumParallelLoops())
      return failure();
    Block &body = add.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    auto sum = yield.getValues().front().getDefiningOp<arith::AddFOp>();
    if (!sum || body.getOperations().size() != 2 || !sum.getType().isF32())
      return failure();
    OpOperand &init = add.getDpsInitsMutable()[0];
    if (add.payloadUsesValueFromOperand(&init) ||
        !add.getMatchingIndexingMap(&init).isIdentity())
      return failure();
    // Which input is the product (identity map) and which the bias.
    for (int productInput = 0; productInput < 2; ++productInput) {
      OpOperand *productOperand = add.getDpsInputOperand(productInput);
      OpOperand *biasOperand = add.getDpsInputOperand(1 - productInput);
      if (!add.getMatchingIndexingMap(productOperand).isIdentity() ||
          !add.getMatchingIndexingMap(biasOperand).isProjectedPermutation())
        continue;
      // The body adds exactly the two inputs.
      Value lhs = sum.getLhs(), rhs = sum.getRhs();
      if (!((lhs == body.getArgument(0) && rhs == body.getArgument(1)) ||
            (lhs == body.getArgument(1) && rhs == body.getArgument(0))))
        return failure();
      Value productValue = productOperand->get();
      auto expand = productValue.getDefiningOp<tensor::ExpandShapeOp>();
      if (expand) {
        if (!expand->hasOneUse())
          continue;
        productValue = expand.getSrc();
      }
      linalg::LinalgOp product = zeroStartedProduct(productValue);
      if (!product)
        continue;
      // At the addition, where both the product's operands and the bias
      // are defined.
      rewriter.setInsertionPoint(add);
      Location loc = add.getLoc();
      // The bias broadcast over the addition's iteration space.
      auto addType = cast<RankedTensorType>(init.get().getType());
      Value empty = tensor::EmptyOp::create(rewriter, loc, addType.getShape(),
                                            addType.getElementType());
      AffineMap identity = AffineMap::getMultiDimIdentityMap(
          add.getNumLoops(), rewriter.getContext());
      Value broadcast =
          linalg::GenericOp::create(
              rewriter, loc, addType, ValueRange{biasOperand->get()},
              ValueRange{empty},
              ArrayRef<AffineMap>{add.getMatchingIndexingMap(biasOperand),
                                  identity},
              add.getIteratorTypesArray(),
              [](OpBuilder &b, Location l, ValueRange args) {
                linalg::YieldOp::create(b, l, args.front());
              })
              .getResult(0);
      if (expand)
        broadcast = tensor::CollapseShapeOp::create(
            rewriter, loc, productValue.getType(), broadcast,
            expand.getReassociationIndices());
      Operation *fill = product.getDpsInits().front().getDefiningOp();
      IRMapping mapping;
      mapping.map(product.getDpsInits().front(), broadcast);
      Value result = rewriter.clone(*product, mapping)->getResult(0);
      if (expand)
        result = tensor::ExpandShapeOp::create(rewriter, loc, addType, result,
                                               expand.getReassociationIndices(),
                                               expand.getMixedOutputShape());
      rewriter.replaceOp(add, result);
      if (expand)
        rewriter.eraseOp(expand);
      rewriter.eraseOp(product);
      rewriter.eraseOp(fill);
      return success();
    }
    return failure();
  }
};

struct FoldBiasIntoProductsPass
    : parallax::impl::ParallaxFoldBiasIntoProductsBase<
          FoldBiasIntoProductsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    parallax::populateFoldBiasIntoProductsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::parallax::populateFoldBiasIntoProductsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldBias>(patterns.getContext());
}
