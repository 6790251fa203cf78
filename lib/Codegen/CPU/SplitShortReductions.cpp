//===- SplitShortReductions.cpp - Short inner sums as vector partials -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/LoopAccess.h"
#include "parallax/Codegen/CPU/Passes.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXSPLITSHORTREDUCTIONS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

constexpr int64_t kMaxPartialSums = int64_t(1) << 22;
/// Inputs may move by two along the loop: a stride-2 convolution's input.
constexpr int64_t kMaxInputStep = 2;

/// Whether an input of `op` is read through a window: an index that adds
/// two loops (a convolution's `h * s + kh`).
bool readsThroughWindow(linalg::GenericOp op) {
  auto isWindow = [](AffineExpr expr) {
    auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
    return sum && sum.getKind() == AffineExprKind::Add &&
           !sum.getLHS().isSymbolicOrConstant() &&
           !sum.getRHS().isSymbolicOrConstant();
  };
  for (OpOperand *input : op.getDpsInputOperands())
    if (llvm::any_of(op.getMatchingIndexingMap(input).getResults(), isWindow))
      return true;
  return false;
}

struct SplitShortReductionsPass
    : parallax::impl::ParallaxSplitShortReductionsBase<
          SplitShortReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> work;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (applies(op))
        work.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : work)
      split(rewriter, op);
  }

  /// A sum on tensors whose innermost loop is a reduction of
  /// [min-inner, max-inner] iterations along which every operand is
  /// contiguous, inside other reductions of at least `min-outer`
  /// iterations together; or a shorter row, of at least
  /// `min-window-inner`, where an input is read through a window, inside
  /// other reductions of at least `min-window-outer`.
  bool applies(linalg::GenericOp op) {
    if (!op.hasPureTensorSemantics() || !isReassociableSum(op) ||
        !getElementTypeOrSelf(op.getResult(0).getType()).isF32())
      return false;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    unsigned inner = iterators.size() - 1;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (iterators.empty() ||
        iterators[inner] != utils::IteratorType::reduction ||
        llvm::any_of(ranges, ShapedType::isDynamic) || ranges[inner] > maxInner)
      return false;
    bool shortWindow = ranges[inner] < minInner;
    if (shortWindow &&
        (ranges[inner] < minWindowInner || !readsThroughWindow(op)))
      return false;
    int64_t outer = 1;
    for (unsigned loop = 0; loop < inner; ++loop)
      if (iterators[loop] == utils::IteratorType::reduction)
        outer *= ranges[loop];
    // The partial sums stay small: a filter's or a channel's worth.
    auto outType = cast<RankedTensorType>(op.getResult(0).getType());
    if (outType.getNumElements() * ranges[inner] > kMaxPartialSums)
      return false;
    return outer >= (shortWindow ? minWindowOuter : minOuter) &&
           isContiguousAlong(op, inner, kMaxInputStep);
  }

  /// out = sum over (r..., w) of f   becomes
  ///   partial[..., w] = sum over r... of f     (w parallel, innermost)
  ///   out = out + sum over w of partial[..., w]
  void split(IRRewriter &rewriter, linalg::GenericOp op) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    unsigned loops = op.getNumLoops(), inner = loops - 1;
    int64_t extent = op.getStaticLoopRanges()[inner];
    auto outType = cast<RankedTensorType>(op.getResult(0).getType());
    SmallVector<int64_t> partialShape(outType.getShape());
    partialShape.push_back(extent);
    Type f32 = rewriter.getF32Type();
    Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, f32);
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(f32));
    Value partialInit =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);

    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap outMap = maps.back();
    SmallVector<AffineExpr> partialResults(outMap.getResults());
    partialResults.push_back(rewriter.getAffineDimExpr(inner));
    maps.back() = AffineMap::get(loops, 0, partialResults, op.getContext());
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    iterators[inner] = utils::IteratorType::parallel;
    auto partial = linalg::GenericOp::create(
        rewriter, loc, TypeRange{partialInit.getType()}, op.getDpsInputs(),
        ValueRange{partialInit}, maps, iterators);
    rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(),
                               partial.getRegion().end());

    // The combining sum: over the partials' last dimension.
    int64_t rank = outType.getRank();
    auto identity = rewriter.getMultiDimIdentityMap(rank + 1);
    auto dropLast = AffineMap::get(
        rank + 1, 0, identity.getResults().drop_back(), op.getContext());
    SmallVector<utils::IteratorType> combineIterators(
        rank, utils::IteratorType::parallel);
    combineIterators.push_back(utils::IteratorType::reduction);
    auto combine = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, partial.getResult(0),
        op.getDpsInits(), ArrayRef<AffineMap>{identity, dropLast},
        combineIterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value sum = arith::AddFOp::create(b, l, args[1], args[0],
                                            arith::FastMathFlags::reassoc);
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, combine.getResults());
  }
};

} // namespace
