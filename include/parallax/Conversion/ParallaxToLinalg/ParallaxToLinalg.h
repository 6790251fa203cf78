//===- ParallaxToLinalg.h - Parallax compute ops to linalg ------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// The patterns lowering Parallax compute ops to linalg, tensor, arith and
// math on tensors, one set per op family (as upstream's TosaToLinalg). Every
// target's pipeline runs them through --convert-parallax-to-linalg; a target
// that lowers a family its own way (a GPU library call) populates the others
// and adds its own patterns.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PARALLAXTOLINALG_PARALLAXTOLINALG_H
#define PARALLAX_CONVERSION_PARALLAXTOLINALG_PARALLAXTOLINALG_H

namespace mlir {
class RewritePatternSet;
class ConversionTarget;

namespace parallax {

/// Unary and binary elementwise ops, comparisons, where, cast and clip.
void populateParallaxElementwiseToLinalgPatterns(RewritePatternSet &patterns);
/// matmul and gemm as linalg.matmul / linalg.batch_matmul.
void populateParallaxLinearAlgebraToLinalgPatterns(RewritePatternSet &patterns);
/// transpose, reshape, slice, concat, gather, one_hot, expand, tile, pad.
void populateParallaxDataMovementToLinalgPatterns(RewritePatternSet &patterns);
/// reduce, softmax, log_softmax, batch_norm, layer_norm, and batch_sum (on
/// one device: its inputs).
void populateParallaxReductionToLinalgPatterns(RewritePatternSet &patterns);
/// conv, conv_filter_grad, conv_input_grad, pool and max_pool_grad.
void populateParallaxConvolutionToLinalgPatterns(RewritePatternSet &patterns);
/// softmax_cross_entropy and negative_log_likelihood.
void populateParallaxLossToLinalgPatterns(RewritePatternSet &patterns);

/// All of the above.
void populateParallaxToLinalgConversionPatterns(RewritePatternSet &patterns);

/// Linalg, tensor, arith and math legal; Parallax compute ops illegal;
/// variables, sparse values and collectives (lowered with the runtime)
/// left as they are.
void configureParallaxToLinalgConversionTarget(ConversionTarget &target);

} // namespace parallax
} // namespace mlir

#endif // PARALLAX_CONVERSION_PARALLAXTOLINALG_PARALLAXTOLINALG_H
