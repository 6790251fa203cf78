//===- Passes.h - Parallax lowering passes ----------------------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PASSES_H
#define PARALLAX_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "parallax/Transforms/Passes.h"

namespace mlir::parallax {

#define GEN_PASS_DECL
#include "parallax/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parallax/Conversion/Passes.h.inc"

/// Registers `parallax-lower-to-llvm` (the compute-op lowering, one-shot
/// bufferization and the conversion of everything to the LLVM dialect) and
/// `parallax-inference-pipeline` and `parallax-training-pipeline`.
void registerParallaxLoweringPipelines();

/// The pipeline of `parallax-compile --mode inference`: an imported module
/// in, an LLVM-dialect module with a C `main` out. With `useBlas`, f32
/// matrix products call OpenBLAS.
void buildInferencePipeline(OpPassManager &pm, bool useBlas = true);

struct TrainingPipelineOptions {
  /// The graph output to minimise (empty: the only scalar float output).
  std::string loss;
  /// Workers of a global step, for the sparsity analysis (0: the module's
  /// parallax.world, or 1).
  int64_t workers = 0;
  ParallaxOptimizerOptions optimizer;
  bool useBlas = true;
  /// Rewrite the step for several workers (parallax-compile --workers):
  /// --parallax-distribute and --parallax-partition with these options,
  /// before the optimizer.
  bool distribute = false;
  ParallaxDistributeOptions distribution;
  ParallaxPartitionOptions partition;
};

/// The pipeline of `parallax-compile --mode train`: an imported forward
/// module in; autodiff, the sparsity analysis, the optimizer, the lowering
/// and a C `main` running the training loop; an LLVM-dialect module out.
/// It is buildGradientPipeline then buildTrainingLoweringPipeline, which
/// parallax-compile runs apart to plan between them.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);
void buildGradientPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);
void buildTrainingLoweringPipeline(OpPassManager &pm,
                                   const TrainingPipelineOptions &options);

} // namespace mlir::parallax

#endif // PARALLAX_CONVERSION_PASSES_H
