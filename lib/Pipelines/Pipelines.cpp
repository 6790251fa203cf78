//===- Pipelines.cpp - Parallax's pass pipelines, per target --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Pipelines/Pipelines.h"
#include "parallax/Codegen/CPU/Passes.h"
#include "parallax/Codegen/GPU/Passes.h"
#include "parallax/Conversion/Passes.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::parallax;

//===----------------------------------------------------------------------===//
// Front half (target-independent)
//===----------------------------------------------------------------------===//

/// Compute ops to linalg, variables and collectives to runtime calls
/// (optimizer updates to loops, for targets that run them as kernels).
static void
addParallaxToLinalgPasses(OpPassManager &pm,
                          const std::optional<GPUCodegenOptions> &gpu = {},
                          bool updatesAsLoops = false) {
  if (gpu && gpu->libraryConvolutions) {
    ParallaxGPULibraryConvolutionsOptions convolutions;
    convolutions.cudnn = !gpu->simulate;
    pm.addPass(createParallaxGPULibraryConvolutions(convolutions));
  }
  pm.addPass(createConvertParallaxCollectives());
  pm.addPass(createConvertParallaxToLinalg());
  ConvertParallaxVariablesOptions variables;
  variables.updatesAsLoops = updatesAsLoops;
  pm.addPass(createConvertParallaxVariables(variables));
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
  analysis.profileData = options.profileData;
  pm.addPass(createParallaxSparsityAnalysis(analysis));
}

void mlir::parallax::buildTrainingToLinalgPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  pm.addPass(createParallaxDeclareIndexRanges());
  if (options.distribute) {
    pm.addPass(createParallaxDistribute(options.distribution));
    pm.addPass(createParallaxBucketAllReduce(options.bucket));
    pm.addPass(createParallaxAsyncAllReduce());
    pm.addPass(createParallaxPartition(options.partition));
    pm.addPass(createParallaxGroupPulls());
  }
  pm.addPass(createParallaxOptimizer(options.optimizer));
  // Kernels update the tables where one worker runs alone: the GPU's
  // memory, not the host's parameter store.
  if (options.distribute && options.gpu)
    pm.addPass(createParallaxLocalWhenAlone());
  pm.addPass(createParallaxInlineVariables());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addParallaxToLinalgPasses(pm, options.gpu, options.gpu.has_value());
}

void mlir::parallax::buildInferenceToLinalgPipeline(
    OpPassManager &pm, const std::optional<GPUCodegenOptions> &gpu) {
  pm.addPass(createParallaxDeclareIndexRanges());
  pm.addPass(createParallaxInlineVariables());
  addParallaxToLinalgPasses(pm, gpu);
}

//===----------------------------------------------------------------------===//
// CPU back half
//===----------------------------------------------------------------------===//

/// One-shot bufferization with identity layouts at function boundaries.
static void addBufferizePass(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

/// Loop shaping for LLVM's vectorizer, then one-shot bufferization.
static void addCPUTensorPasses(OpPassManager &pm) {
  pm.addPass(createParallaxFoldBiasIntoProducts());
  pm.addPass(createParallaxFuseElementwise());
  pm.addPass(createParallaxCollapseLoopDims());
  pm.addPass(createParallaxHoistWindowReductions());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createParallaxReassociateReductions());
  pm.addPass(createParallaxChannelsInnermost());
  // One transpose of an input that several window ops read.
  pm.addPass(createCSEPass());
  pm.addPass(createParallaxSplitShortReductions());
  pm.addPass(createParallaxReduceInProducers());
  pm.addPass(createParallaxSplitOuterReductions());
  pm.addPass(createParallaxUnshareFills());
  addBufferizePass(pm);
}

/// Every buffer's deallocation made explicit (memref.dealloc).
static void addDeallocationPasses(OpPassManager &pm) {
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// The deallocations, each moved right after its buffer's last use: at
/// the end of a step's block they would keep every intermediate buffer of
/// the step alive until it returns.
static void addCPUDeallocationPasses(OpPassManager &pm) {
  addDeallocationPasses(pm);
  pm.addNestedPass<func::FuncOp>(createParallaxShortenBufferLifetimes());
}

/// Memrefs and everything else to the LLVM dialect.
static void addFinalLLVMConversion(OpPassManager &pm) {
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

/// Host loops and the conversion of everything to LLVM.
static void addCPUBufferToLLVMPasses(OpPassManager &pm) {
  // Copies between strided buffers as loop nests with constant strides,
  // not the runtime's walk of their descriptors.
  pm.addNestedPass<func::FuncOp>(createParallaxStridedCopiesToLinalg());
  // Many small functions for LLVM instead of one step of thousands of
  // loop nests, whose loop passes grow with the whole function.
  pm.addPass(createParallaxOutlineKernels());
  // Sites for PROGRAM --profile: each kernel as a whole, before it is
  // parallelized.
  pm.addPass(createParallaxInstrumentProfile());
  // Large loop nests run on the worker's threads (OpenMP); the runtime
  // sets how many.
  pm.addPass(createParallaxParallelizeKernels());
  pm.addPass(createParallaxVectorizeTransposes());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertSCFToOpenMPPass());
  // Folds the memref.alloca_scope around each parallel loop's body (it
  // allocates nothing), which control flow could not lower.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Dynamic offsets (row-sparse scatters) leave affine.apply behind.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createParallaxApproximateMath());
  pm.addPass(createConvertMathToLibmPass());
  addFinalLLVMConversion(pm);
  pm.addPass(createParallaxMarkNoaliasArguments());
}

static void addEntryPoint(OpPassManager &pm, ProgramKind kind) {
  if (kind == ProgramKind::Training)
    pm.addPass(createParallaxGenerateTrainingMain());
  else
    pm.addPass(createParallaxGenerateInferenceMain());
}

void mlir::parallax::buildCPUCodegenPipeline(OpPassManager &pm,
                                             ProgramKind kind, bool useBlas) {
  addCPUTensorPasses(pm);
  pm.addPass(createParallaxAllReduceInPlace());
  if (useBlas)
    pm.addPass(createParallaxLinalgToBlas());
  addEntryPoint(pm, kind);
  addCPUDeallocationPasses(pm);
  addCPUBufferToLLVMPasses(pm);
  // Programs link the runtime, not MLIR's runner utilities.
  pm.addPass(createParallaxUseRuntimeHelpers());
}

//===----------------------------------------------------------------------===//
// GPU back half
//===----------------------------------------------------------------------===//

/// The kernels' code: NVVM, then PTX and an sm_XX cubin through ptxas.
static void addKernelToNVVMPasses(OpPassManager &pm,
                                  const GPUCodegenOptions &options) {
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createParallaxGPUMergeKernelModules());
  // Launches queue on the program's stream; the host waits only before
  // what it reads or writes itself (runtime calls, host loads).
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  pm.addNestedPass<func::FuncOp>(createParallaxGPUUnchainManagedAllocs());
  pm.addNestedPass<func::FuncOp>(createParallaxGPUStreamOrderedCalls());
  // The runtime may capture the step as one CUDA graph (PARALLAX_CUDA_GRAPHS).
  pm.addPass(createParallaxGPUStepGraph());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

/// The host side: launches as driver calls, then the CPU's conversion.
static void addHostToLLVMPasses(OpPassManager &pm) {
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createGpuToLLVMConversionPass());
  addFinalLLVMConversion(pm);
}

void mlir::parallax::buildGPUCodegenPipeline(OpPassManager &pm,
                                             ProgramKind kind,
                                             const GPUCodegenOptions &options) {
  // Elementwise chains become one kernel; matrix products stay named;
  // long reductions over few outputs become two kernels, unless a warp or
  // a block per output takes them in one.
  pm.addPass(createParallaxFuseElementwise());
  ParallaxGPUSplitReductionsOptions split;
  split.blockThreads = options.threadsPerBlock;
  if (!options.warpReductions) {
    split.warpRows = 0;
    split.blockThreads = 0;
  }
  pm.addPass(createParallaxGPUSplitReductions(split));
  pm.addPass(createCanonicalizerPass());
  addBufferizePass(pm);
  pm.addPass(createParallaxAllReduceInPlace());
  // Matrix products (and with them the convolutions' im2col products) go
  // to the GPU's BLAS; cuda-sim calls the CPU's in their place.
  ParallaxLinalgToBlasOptions blas;
  blas.cublas = !options.simulate;
  pm.addPass(createParallaxLinalgToBlas(blas));
  addEntryPoint(pm, kind);
  addDeallocationPasses(pm);
  ParallaxGPUMapToLaunchesOptions mapping;
  mapping.threadsPerBlock = options.threadsPerBlock;
  if (!options.warpReductions) {
    mapping.minWarpReduction = 0;
    mapping.minBlockReduction = 0;
  }
  pm.addNestedPass<func::FuncOp>(createParallaxGPUMapToLaunches(mapping));
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createParallaxGPUMergeSingleBlockLaunches());
  pm.addPass(createParallaxGPUGlobalsToBuffers());
  if (options.simulate) {
    pm.addNestedPass<func::FuncOp>(createParallaxGPULaunchesToLoops());
    addCPUBufferToLLVMPasses(pm);
  } else {
    pm.addPass(createParallaxGPUDeviceChecks());
    pm.addPass(createParallaxGPUDeviceMemory());
    pm.addPass(createParallaxGPUDeclareMemoryNeed());
    addKernelToNVVMPasses(pm, options);
    addHostToLLVMPasses(pm);
  }
  pm.addPass(createParallaxUseRuntimeHelpers());
  if (!options.simulate) {
    GpuModuleToBinaryPassOptions binary;
    binary.toolkitPath = options.toolkit;
    binary.compilationTarget = options.assembly ? "isa" : "fatbin";
    pm.addPass(createGpuModuleToBinaryPass(binary));
  }
}

//===----------------------------------------------------------------------===//
// Whole pipelines
//===----------------------------------------------------------------------===//

void mlir::parallax::buildTrainingLoweringPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  buildTrainingToLinalgPipeline(pm, options);
  if (options.gpu)
    buildGPUCodegenPipeline(pm, ProgramKind::Training, *options.gpu);
  else
    buildCPUCodegenPipeline(pm, ProgramKind::Training, options.useBlas);
}

void mlir::parallax::buildTrainingPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  buildGradientPipeline(pm, options);
  buildTrainingLoweringPipeline(pm, options);
}

void mlir::parallax::buildInferencePipeline(
    OpPassManager &pm, bool useBlas,
    const std::optional<GPUCodegenOptions> &gpu) {
  buildInferenceToLinalgPipeline(pm, gpu);
  if (gpu)
    buildGPUCodegenPipeline(pm, ProgramKind::Inference, *gpu);
  else
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
        addCPUDeallocationPasses(pm);
        addCPUBufferToLLVMPasses(pm);
      });
  PassPipelineRegistration<>(
      "parallax-inference-pipeline",
      "The pipeline of `parallax-compile --mode inference`: variables as "
      "constants, lowering, an entry point reading and writing .npy files, "
      "and the conversion to the LLVM dialect",
      [](OpPassManager &pm) { buildInferencePipeline(pm); });
  registerPassPipeline(
      "parallax-training-pipeline",
      "The pipeline of `parallax-compile`: autodiff, the sparsity analysis, "
      "the distribution (with `distribute`), the optimizer, lowering, an "
      "entry point running the training loop, and the conversion to the "
      "LLVM dialect",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        TrainingPipelineCLOptions cl;
        if (failed(cl.parseFromString(text)))
          return failure();
        TrainingPipelineOptions options;
        options.loss = cl.loss;
        options.workers = cl.workers;
        options.profileData = cl.profileData;
        options.useBlas = cl.blas;
        options.distribute = !cl.distribute.empty();
        if (!cl.partition.empty() && !options.distribute)
          return errorHandler("partition needs distribute");
        size_t before = pm.size();
        buildTrainingPipeline(pm, options);
        // Each pass's own options, parsed by the pass; only the passes this
        // pipeline added (`pm` may hold others of the enclosing pipeline).
        StringRef passOptions[][2] = {{"parallax-optimizer", cl.optimizer},
                                      {"parallax-distribute", cl.distribute},
                                      {"parallax-partition", cl.partition}};
        for (Pass &pass : llvm::drop_begin(pm.getPasses(), before))
          for (auto [name, value] : passOptions)
            if (pass.getArgument() == name && !value.empty() &&
                failed(pass.initializeOptions(value, errorHandler)))
              return failure();
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(TrainingPipelineCLOptions());
      });
}
