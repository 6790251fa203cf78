//===- ReassociateReductions.cpp - Let LLVM vectorize float reductions ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXREASSOCIATEREDUCTIONS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// The op combining `accumulator` into the value yielded for it, when it
/// is a float sum or product.
Operation *floatCombiner(BlockArgument accumulator, Value yielded) {
  Operation *op = yielded.getDefiningOp();
  if (!isa_and_nonnull<arith::AddFOp, arith::MulFOp>(op) ||
      !llvm::is_contained(op->getOperands(), accumulator) ||
      !accumulator.hasOneUse())
    return nullptr;
  return op;
}

struct ReassociateReductionsPass
    : parallax::impl::ParallaxReassociateReductionsBase<
          ReassociateReductionsPass> {
  void runOnOperation() override {
    getOperation()->walk([](linalg::GenericOp op) {
      if (op.getNumReductionLoops() == 0)
        return;
      auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
      for (OpOperand &init : op.getDpsInitsMutable()) {
        BlockArgument accumulator = op.getMatchingBlockArgument(&init);
        Value yielded =
            yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs());
        Operation *combiner = floatCombiner(accumulator, yielded);
        if (!combiner)
          continue;
        auto fastmath = cast<arith::ArithFastMathInterface>(combiner);
        fastmath->setAttr(
            fastmath.getFastMathAttrName(),
            arith::FastMathFlagsAttr::get(
                op.getContext(), fastmath.getFastMathFlagsAttr().getValue() |
                                     arith::FastMathFlags::reassoc));
      }
    });
  }
};

} // namespace
