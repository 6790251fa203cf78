//===- SplitOuterReductions.cpp - Row groups of a column sum in parallel --===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Kernels.h"
#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXSPLITOUTERREDUCTIONS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Rows a group sums at least: the partial sums' fill and final sum cost
/// about two passes over the output per group, against one per row for
/// the sum itself (groups of 4 rows made MobileNetV2's one-thread step
/// 1.6% slower).
constexpr int64_t kMinGroupRows = 16;

/// Whether a float sum or product yielded by `op` may be reassociated
/// (`--parallax-reassociate-reductions` marks them): splitting adds in
/// another order. Maxima and minima, and ops that yield no such
/// combiner, pass.
bool mayReassociate(linalg::GenericOp op) {
  Operation *combiner =
      op.getBlock()->getTerminator()->getOperand(0).getDefiningOp();
  if (!isa_and_nonnull<arith::AddFOp, arith::MulFOp>(combiner))
    return true;
  auto flags =
      cast<arith::ArithFastMathInterface>(combiner).getFastMathFlagsAttr();
  return bitEnumContainsAll(flags.getValue(), arith::FastMathFlags::reassoc);
}

struct SplitOuterReductionsPass
    : parallax::impl::ParallaxSplitOuterReductionsBase<
          SplitOuterReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, int64_t>> work;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (int64_t groups = groupsFor(op); groups > 1)
        work.emplace_back(op, groups);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, groups] : work) {
      rewriter.setInsertionPoint(op);
      // The groups' loop takes the reduction's place (outermost), its
      // partial sums the first dimension of their tensor; ops whose
      // combiner splitReduction does not know are left as they are.
      (void)linalg::splitReduction(
          rewriter, op, [ratio = groups](linalg::LinalgOp) {
            return linalg::SplitReductionOptions{ratio, /*index=*/0,
                                                 /*innerParallel=*/false};
          });
    }
  }

  /// Groups to split `op`'s reduction into: an op on tensors with one
  /// output, a static iteration space of at least `min-iterations` points,
  /// and a single reduction loop, outside all its parallel loops (a column
  /// sum); 1 for any other op.
  int64_t groupsFor(linalg::GenericOp op) {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1)
      return 1;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic) ||
        ShapedType::getNumElements(ranges) < minIterations ||
        op.getNumReductionLoops() != 1 || !mayReassociate(op))
      return 1;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    // The reduction loop must come before every parallel loop that has
    // more than one iteration, and there must be one, with fewer points
    // inside it than --parallax-parallelize-kernels shares out inside a
    // reduction (a batch norm's per-channel sums over (n, h, w) it shares
    // out by channel already).
    bool seenReduction = false;
    int64_t extent = 1;
    for (auto [position, type] : llvm::enumerate(iterators)) {
      if (type == utils::IteratorType::reduction) {
        seenReduction = true;
        extent = ranges[position];
        continue;
      }
      if (ranges[position] <= 1)
        continue;
      if (!seenReduction)
        return 1;
      int64_t inside = ShapedType::getNumElements(
          ArrayRef<int64_t>(ranges).drop_front(position + 1));
      if (inside >= kMinPointsInsideSharedLoop)
        return 1;
      // The most groups of at least kMinGroupRows rows.
      return mostEqualParts(
          extent, std::min<int64_t>(maxGroups, extent / kMinGroupRows));
    }
    return 1;
  }
};

} // namespace
