//===- Pipelines.cpp - Parallax's pass pipelines, per target --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Pipelines/Pipelines.h"
#include "parallax/Codegen/CPU/Passes.h"
#include "parallax/Conversion/Passes.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::parallax;

//===----------------------------------------------------------------------===//
// Front half (target-independent)
//===----------------------------------------------------------------------===//

/// Compute ops to linalg, variables and collectives to runtime calls.
static void addParallaxToLinalgPasses(OpPassManager &pm) {
  pm.addPass(createConvertParallaxCollectives());
  pm.addPass(createConvertParallaxToLinalg());
  pm.addPass(createConvertParallaxVariables());
  pm.addPass(createCanonicalizerPass());
  // The backward pass recomputes forward values (a softmax's statistics
  // for its gradient): the same linalg ops on the same operands, once.
  pm.addPass(createCSEPass());
}

void mlir::parallax::buildGradientPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  ParallaxAutodiffOptions autodiff;
  autodiff.loss = options.loss;
  pm.addPass(createParallaxAutodiff(autodiff));
  ParallaxSparsityAnalysisOptions analysis;
  analysis.workers = options.workers;
  pm.addPass(createParallaxSparsityAnalysis(analysis));
}

void mlir::parallax::buildTrainingToLinalgPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  pm.addPass(createParallaxDeclareIndexRanges());
  if (options.distribute) {
    pm.addPass(createParallaxDistribute(options.distribution));
    pm.addPass(createParallaxPartition(options.partition));
  }
  pm.addPass(createParallaxOptimizer(options.optimizer));
  pm.addPass(createParallaxInlineVariables());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addParallaxToLinalgPasses(pm);
}

void mlir::parallax::buildInferenceToLinalgPipeline(OpPassManager &pm) {
  pm.addPass(createParallaxDeclareIndexRanges());
  pm.addPass(createParallaxInlineVariables());
  addParallaxToLinalgPasses(pm);
}

//===----------------------------------------------------------------------===//
// CPU back half
//===----------------------------------------------------------------------===//

/// Loop shaping for LLVM's vectorizer, then one-shot bufferization.
static void addCPUTensorPasses(OpPassManager &pm) {
  pm.addPass(createParallaxFuseElementwise());
  pm.addPass(createParallaxCollapseLoopDims());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createParallaxReassociateReductions());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

/// Deallocation, loops and the conversion of everything to LLVM.
static void addCPUBufferToLLVMPasses(OpPassManager &pm) {
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Dynamic offsets (row-sparse scatters) leave affine.apply behind.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createParallaxApproximateMath());
  pm.addPass(createConvertMathToLibmPass());
  // aligned_alloc, not malloc plus pointer arithmetic: LLVM then knows every
  // buffer is a distinct allocation, so loops that read one buffer and
  // write another vectorize without run-time overlap checks (which it
  // judges too costly for short loops and gives up on).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::parallax::buildCPUCodegenPipeline(OpPassManager &pm,
                                             ProgramKind kind, bool useBlas) {
  addCPUTensorPasses(pm);
  if (useBlas)
    pm.addPass(createParallaxLinalgToBlas());
  if (kind == ProgramKind::Training)
    pm.addPass(createParallaxGenerateTrainingMain());
  else
    pm.addPass(createParallaxGenerateInferenceMain());
  addCPUBufferToLLVMPasses(pm);
}

//===----------------------------------------------------------------------===//
// Whole pipelines
//===----------------------------------------------------------------------===//

void mlir::parallax::buildTrainingLoweringPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  buildTrainingToLinalgPipeline(pm, options);
  buildCPUCodegenPipeline(pm, ProgramKind::Training, options.useBlas);
}

void mlir::parallax::buildTrainingPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  buildGradientPipeline(pm, options);
  buildTrainingLoweringPipeline(pm, options);
}

void mlir::parallax::buildInferencePipeline(OpPassManager &pm, bool useBlas) {
  buildInferenceToLinalgPipeline(pm);
  buildCPUCodegenPipeline(pm, ProgramKind::Inference, useBlas);
}

void mlir::parallax::registerParallaxPipelines() {
  PassPipelineRegistration<>(
      "parallax-lower-to-llvm",
      "Lower Parallax compute ops through linalg, one-shot bufferization and "
      "loops to the LLVM dialect (CPU)",
      [](OpPassManager &pm) {
        addParallaxToLinalgPasses(pm);
        addCPUTensorPasses(pm);
        addCPUBufferToLLVMPasses(pm);
      });
  PassPipelineRegistration<>(
      "parallax-inference-pipeline",
      "The pipeline of `parallax-compile --mode inference`: variables as "
      "constants, lowering, an entry point reading and writing .npy files, "
      "and the conversion to the LLVM dialect",
      [](OpPassManager &pm) { buildInferencePipeline(pm); });
  PassPipelineRegistration<>(
      "parallax-training-pipeline",
      "The pipeline of `parallax-compile` (training, SGD with lr 0.01): "
      "autodiff, the optimizer, lowering, an entry point running the "
      "training loop, and the conversion to the LLVM dialect",
      [](OpPassManager &pm) { buildTrainingPipeline(pm, {}); });
}
