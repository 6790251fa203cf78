//===- HoistWindowReductions.cpp - Windows outside the vectorized loop ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/LoopAccess.h"
#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXHOISTWINDOWREDUCTIONS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct HoistWindowReductionsPass
    : parallax::impl::ParallaxHoistWindowReductionsBase<
          HoistWindowReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, SmallVector<unsigned>>> work;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<SmallVector<unsigned>> order = newOrder(op))
        work.emplace_back(op, *order);
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, order] : work) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op->emitError("internal error: cannot interchange this op's loops");
        return signalPassFailure();
      }
    }
  }

  /// Loops (..., p, r...) with r the innermost reduction loops, a window
  /// of at most `max-window` points, and p a parallel loop of at least
  /// `min-inner` iterations along which every operand is contiguous
  /// become (..., r..., p). Each output element still receives the
  /// window's terms in the same order, so results do not change.
  std::optional<SmallVector<unsigned>> newOrder(linalg::GenericOp op) {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    unsigned loops = iterators.size(), first = loops;
    while (first > 0 && iterators[first - 1] == utils::IteratorType::reduction)
      --first;
    if (first == loops || first == 0)
      return std::nullopt;
    unsigned inner = first - 1;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges[inner] < minInner)
      return std::nullopt;
    int64_t window = 1;
    for (unsigned loop = first; loop < loops; ++loop)
      window *= ranges[loop];
    if (window > maxWindow || !isContiguousAlong(op, inner))
      return std::nullopt;
    SmallVector<unsigned> order;
    for (unsigned loop = 0; loop < inner; ++loop)
      order.push_back(loop);
    for (unsigned loop = first; loop < loops; ++loop)
      order.push_back(loop);
    order.push_back(inner);
    return order;
  }
};

} // namespace
