//===- Pipelines.h - Parallax's pass pipelines, per target ------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// Every pipeline parallax-compile runs, built from two halves:
// - the target-independent front half: autodiff, the sparsity analysis, the
//   distribution, the optimizer, and the lowering of compute ops to linalg
//   on tensors and of variables and collectives to runtime calls;
// - a target's back half: for the CPU, loop shaping, bufferization, BLAS,
//   the program's entry point and the conversion to the LLVM dialect; for
//   GPUs (CUDA, or its host simulation), kernel mapping, device memory,
//   NVVM and the GPU binary.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_PIPELINES_PIPELINES_H
#define PARALLAX_PIPELINES_PIPELINES_H

#include "parallax/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>

namespace mlir::parallax {

/// The GPU back half's choices (parallax-compile --target cuda|cuda-sim).
struct GPUCodegenOptions {
  /// --target cuda-sim: the same kernels, run as host loops.
  bool simulate = false;
  /// The GPU architecture the cubins are for, and the PTX ISA (sm_90
  /// needs PTX 7.8 or later).
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  /// The CUDA toolkit (ptxas, fatbinary, libdevice).
  std::string toolkit;
  /// Keep the kernels as PTX text (--emit ptx) instead of a fat binary.
  bool assembly = false;
  int64_t threadsPerBlock = 256;
  /// A warp or a block per output for reductions over rows
  /// (--parallax-gpu-map-to-launches' min-warp-reduction and
  /// min-block-reduction, --parallax-gpu-split-reductions' warp-rows and
  /// block-threads keep their defaults); false: a thread per output, long
  /// rows split (parallax-compile --gpu-warp-reductions=false, to measure
  /// what the warps and blocks gain).
  bool warpReductions = true;
  /// 2-d convolutions and their gradients as cuDNN calls (for cuda-sim,
  /// the runtime's CPU equivalents), --parallax-gpu-library-convolutions;
  /// false: im2col kernels and matrix products, as on the CPU
  /// (parallax-compile --gpu-convolutions=im2col).
  bool libraryConvolutions = true;
};

struct TrainingPipelineOptions {
  /// The graph output to minimise (empty: the only scalar float output).
  std::string loss;
  /// Workers of a global step, for the sparsity analysis (0: the module's
  /// parallax.world, or 1).
  int64_t workers = 0;
  /// Measure sparsity on this sample data (--parallax-sparsity-analysis's
  /// profile-data).
  std::string profileData;
  ParallaxOptimizerOptions optimizer;
  bool useBlas = true;
  /// Rewrite the step for several workers (parallax-compile --workers):
  /// --parallax-distribute, the AllReduce buckets and their overlap, and
  /// --parallax-partition with these options, before the optimizer.
  bool distribute = false;
  ParallaxDistributeOptions distribution;
  ParallaxBucketAllReduceOptions bucket;
  ParallaxPartitionOptions partition;
  /// The GPU back half instead of the CPU one.
  std::optional<GPUCodegenOptions> gpu;
};

/// Front half, training: autodiff and the sparsity analysis. parallax-compile
/// plans (--plan-report, the partition search) between this and
/// buildTrainingLoweringPipeline.
void buildGradientPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Front half, from an annotated step (or an inference module) to linalg on
/// tensors and runtime calls: index ranges, then (training) distribution,
/// partitions and the optimizer, variables inlined, and the conversions of
/// compute ops, collectives and variables.
void buildTrainingToLinalgPipeline(OpPassManager &pm,
                                   const TrainingPipelineOptions &options);
void buildInferenceToLinalgPipeline(
    OpPassManager &pm, const std::optional<GPUCodegenOptions> &gpu = {});

/// The CPU back half: from linalg on tensors and runtime calls to an
/// LLVM-dialect module with a C `main` (the training loop or the inference
/// program). With `useBlas`, f32 matrix products call the runtime's BLAS
/// libraries (oneDNN and OpenBLAS).
enum class ProgramKind { Training, Inference };
void buildCPUCodegenPipeline(OpPassManager &pm, ProgramKind kind,
                             bool useBlas = true);

/// The GPU back half: elementwise fusion, bufferization, the entry point,
/// one kernel per linalg op (parallax-gpu-map-to-launches), then for CUDA
/// device checks, managed buffers, outlining, NVVM, the host's conversion
/// and gpu-module-to-binary (PTX and a cubin embedded in the program);
/// for cuda-sim the launches as host loops and the CPU's conversion.
void buildGPUCodegenPipeline(OpPassManager &pm, ProgramKind kind,
                             const GPUCodegenOptions &options);

/// Whole pipelines: `parallax-compile` (training), after the gradient pipeline
/// (buildTrainingLoweringPipeline) or from the forward module
/// (buildTrainingPipeline), and `parallax-compile --mode inference`.
void buildTrainingLoweringPipeline(OpPassManager &pm,
                                   const TrainingPipelineOptions &options);
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);
void buildInferencePipeline(
    OpPassManager &pm, bool useBlas = true,
    const std::optional<GPUCodegenOptions> &gpu = std::nullopt);

/// The options of the registered `parallax-training-pipeline`. A pass's own
/// options go through as that pass's option string (declared once, in
/// Passes.td): `optimizer='optimizer=adam lr=0.001'`.
struct TrainingPipelineCLOptions
    : PassPipelineOptions<TrainingPipelineCLOptions> {
  Option<std::string> loss{*this, "loss",
                           llvm::cl::desc("The graph output to minimise")};
  Option<int64_t> workers{
      *this, "workers",
      llvm::cl::desc("Workers of a global step, for the sparsity analysis"),
      llvm::cl::init(0)};
  Option<std::string> profileData{
      *this, "profile-data",
      llvm::cl::desc("Measure sparsity on the sample data in this directory")};
  Option<bool> blas{*this, "blas",
                    llvm::cl::desc("f32 matrix products through the runtime's "
                                   "BLAS libraries"),
                    llvm::cl::init(true)};
  Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc(
          "Options of --parallax-optimizer (default: SGD, lr 0.01)")};
  Option<std::string> distribute{
      *this, "distribute",
      llvm::cl::desc("Options of --parallax-distribute (default: one "
                     "undistributed step)")};
  Option<std::string> partition{
      *this, "partition",
      llvm::cl::desc("Options of --parallax-partition (with distribute)")};
};

/// Registers `parallax-lower-to-llvm` (the compute-op lowering, one-shot
/// bufferization and the conversion of everything to the LLVM dialect),
/// `parallax-inference-pipeline` and `parallax-training-pipeline`.
void registerParallaxPipelines();

} // namespace mlir::parallax

#endif // PARALLAX_PIPELINES_PIPELINES_H
