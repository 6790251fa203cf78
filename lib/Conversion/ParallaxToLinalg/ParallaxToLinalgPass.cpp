//===- ParallaxToLinalgPass.cpp - The --convert-parallax-to-linalg pass ---===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToLinalg/ParallaxToLinalg.h"
#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_CONVERTPARALLAXTOLINALG
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

void mlir::parallax::populateParallaxToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  populateParallaxElementwiseToLinalgPatterns(patterns);
  populateParallaxLinearAlgebraToLinalgPatterns(patterns);
  populateParallaxDataMovementToLinalgPatterns(patterns);
  populateParallaxReductionToLinalgPatterns(patterns);
  populateParallaxConvolutionToLinalgPatterns(patterns);
  populateParallaxLossToLinalgPatterns(patterns);
}

void mlir::parallax::configureParallaxToLinalgConversionTarget(
    ConversionTarget &target) {
  target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                         math::MathDialect, tensor::TensorDialect>();
  target.addIllegalDialect<ParallaxDialect>();
  // Variables and collectives are lowered with the runtime; library calls
  // by bufferization.
  target
      .addLegalOp<LibraryCallOp, VariableOp, ReadOp, AssignOp, RandomUniformOp,
                  ApplyGradientOp, UpdateOp, RowSparsePackOp, RowSparseUnpackOp,
                  RowSparseToDenseOp, AllReduceOp, AllReduceStartOp,
                  AllReduceWaitOp, AllGatherOp, BroadcastOp, PushOp, PullOp>();
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
}

namespace {
struct ConvertParallaxToLinalgPass
    : parallax::impl::ConvertParallaxToLinalgBase<ConvertParallaxToLinalgPass> {
  void runOnOperation() override {
    // A batch_sum still here sums one device's values.
    WalkResult tooFew = getOperation()->walk([](BatchSumOp sum) {
      std::optional<int64_t> needed = sum.getMinDevices();
      if (!needed || *needed <= 1)
        return WalkResult::advance();
      sum.emitError() << "training-mode batch statistics with one value per "
                         "channel need the sums of at least "
                      << *needed
                      << " devices: train with a larger batch, or on that "
                         "many workers (--workers N)";
      return WalkResult::interrupt();
    });
    if (tooFew.wasInterrupted())
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    populateParallaxToLinalgConversionPatterns(patterns);
    ConversionTarget target(*ctx);
    configureParallaxToLinalgConversionTarget(target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
