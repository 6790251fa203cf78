//===- parallax-compile.cpp - ONNX model in, native program out -----------===//
//
// Part of the Parallax project.
//
// The command line over the libraries: import the ONNX model
// (lib/Target/ONNX), plan (lib/Analysis), run the pipelines (lib/Pipelines),
// and emit and link the program (lib/Driver).
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/Plan.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Driver/Diagnostics.h"
#include "parallax/Driver/Emit.h"
#include "parallax/Driver/PartitionSearch.h"
#include "parallax/InitAll.h"
#include "parallax/Pipelines/Pipelines.h"
#include "parallax/Target/ONNX/ONNXImporter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("parallax-compile options");

cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                               cl::desc("<model.onnx | model.onnxtext>"),
                               cl::cat(category));
cl::opt<std::string> outputFile("o", cl::value_desc("PROGRAM"),
                                cl::desc("Output file"), cl::cat(category));

enum class Mode { Train, Inference };
cl::opt<Mode> mode(
    "mode", cl::init(Mode::Train), cl::cat(category),
    cl::desc("What the program does"),
    cl::values(clEnumValN(Mode::Train, "train", "a training program (default)"),
               clEnumValN(Mode::Inference, "inference",
                          "PROGRAM --inputs DIR --outputs DIR runs the model "
                          "on one .npy per graph input")));

using parallax::EmitKind;
cl::opt<EmitKind> emit(
    "emit", cl::init(EmitKind::Executable), cl::cat(category),
    cl::desc("What to write"),
    cl::values(
        clEnumValN(EmitKind::MLIR, "mlir", "MLIR in the LLVM dialect"),
        clEnumValN(EmitKind::LLVM, "llvm", "LLVM IR (optimized)"),
        clEnumValN(EmitKind::PTX, "ptx", "the kernels' PTX (--target cuda)"),
        clEnumValN(EmitKind::Object, "obj", "an object file"),
        clEnumValN(EmitKind::Executable, "exe", "an executable (default)")));

enum class Target { CPU, CUDA, CUDASim };
cl::opt<Target> target(
    "target", cl::init(Target::CPU), cl::cat(category),
    cl::desc("What the program runs on"),
    cl::values(clEnumValN(Target::CPU, "cpu", "this machine's CPU (default)"),
               clEnumValN(Target::CUDA, "cuda",
                          "an NVIDIA GPU: kernels as PTX and a cubin "
                          "(--gpu-arch), run through the CUDA driver"),
               clEnumValN(Target::CUDASim, "cuda-sim",
                          "the GPU pipeline's kernels run as host loops "
                          "(for testing without a GPU)")));
cl::opt<std::string> gpuArch("gpu-arch", cl::init("sm_90"), cl::cat(category),
                             cl::value_desc("sm_XX"),
                             cl::desc("The GPU architecture of --target cuda "
                                      "(default sm_90)"));
cl::opt<bool> gpuWarpReductions(
    "gpu-warp-reductions", cl::init(true), cl::cat(category),
    cl::desc("--target cuda|cuda-sim: a warp, or for long rows a block, "
             "per output for reductions over rows "
             "(--gpu-warp-reductions=false: a thread per output, long rows "
             "split into kernels of partials, to measure the difference)"));
enum class GPUConvolutions { Library, Im2col };
cl::opt<GPUConvolutions> gpuConvolutions(
    "gpu-convolutions", cl::init(GPUConvolutions::Library), cl::cat(category),
    cl::desc("--target cuda|cuda-sim: how f32 convolutions and their "
             "gradients run"),
    cl::values(clEnumValN(GPUConvolutions::Library, "cudnn",
                          "cuDNN's convolutions (the default; cuda-sim: the "
                          "runtime's CPU equivalents)"),
               clEnumValN(GPUConvolutions::Im2col, "im2col",
                          "im2col kernels and cuBLAS products, as the CPU "
                          "target lowers them")));
cl::opt<std::string> cudaToolkit(
    "cuda-toolkit", cl::cat(category), cl::value_desc("DIR"),
    cl::desc("The CUDA toolkit whose ptxas, fatbinary and libdevice build "
             "the kernels (default: " PARALLAX_CUDA_TOOLKIT ")"));
cl::opt<std::string>
    cpu("cpu", cl::init("native"), cl::cat(category), cl::value_desc("NAME"),
        cl::desc("The CPU the program's host code is for: native (the default: "
                 "this machine's, with the instruction sets it reports) or one "
                 "of LLVM's CPU names, as clang's -march takes them (x86-64-v3 "
                 "for any AVX2 machine, znver4, sapphirerapids), to build here "
                 "for another machine"));
cl::opt<unsigned> optLevel("O", cl::Prefix, cl::init(2), cl::cat(category),
                           cl::desc("LLVM optimization level (-O0..-O3)"));
cl::opt<bool> unrollLoops(
    "unroll-loops", cl::init(false), cl::cat(category),
    cl::desc("Let LLVM unroll loops (off by default: fully unrolling a short "
             "innermost loop, such as a 16-pixel image row, makes LLVM "
             "vectorize the loop around it with gathers and scatters)"));
cl::opt<bool> useBlas("blas", cl::init(true), cl::cat(category),
                      cl::desc("Run f32 matrix products through the "
                               "runtime's BLAS libraries, oneDNN and "
                               "OpenBLAS (--blas=false: generated loops)"));
cl::opt<bool> dumpPipeline("dump-pipeline", cl::cat(category),
                           cl::desc("Print the MLIR pass pipeline"));
cl::opt<int64_t> batchSize("batch-size", cl::cat(category), cl::value_desc("B"),
                           cl::desc("Bind the leading dimension of every "
                                    "graph input to B (unless --bind names "
                                    "it)"));
cl::list<std::string> bind("bind", cl::CommaSeparated, cl::cat(category),
                           cl::value_desc("NAME=VALUE"),
                           cl::desc("Bind a symbolic dimension, or "
                                    "dimension D of graph input INPUT "
                                    "(INPUT:D=VALUE)"));
cl::opt<std::string> dataDir("onnx-data-dir", cl::cat(category),
                             cl::value_desc("DIR"),
                             cl::desc("Directory of external tensor data"));
cl::OptionCategory trainingCategory("training options (--mode train)");
cl::opt<std::string> lossName("loss", cl::cat(trainingCategory),
                              cl::value_desc("NAME"),
                              cl::desc("The graph output to minimise "
                                       "(default: the only scalar float "
                                       "output)"));
cl::list<std::string> freeze("freeze", cl::CommaSeparated,
                             cl::cat(trainingCategory),
                             cl::value_desc("INITIALIZER"),
                             cl::desc("Keep these initializers constant (not "
                                      "trained)"));
cl::opt<std::string> optimizer("optimizer", cl::init("sgd"),
                               cl::cat(trainingCategory),
                               cl::desc("sgd, momentum, adagrad, adam or "
                                        "adamw (PyTorch's update rules)"));
cl::opt<double> lr("lr", cl::init(0.01), cl::cat(trainingCategory),
                   cl::desc("Learning rate (default 0.01)"));
cl::opt<double> momentum("momentum", cl::init(0.9), cl::cat(trainingCategory),
                         cl::desc("Momentum factor of --optimizer momentum "
                                  "(default 0.9)"));
cl::opt<int64_t>
    seed("seed", cl::init(0), cl::cat(trainingCategory), cl::value_desc("S"),
         cl::desc("Seed of random draws (training-mode Dropout masks; the "
                  "program's --seed replaces it), default 0"));
cl::opt<bool> embedWeights(
    "embed-weights", cl::cat(trainingCategory),
    cl::desc("Embed the initial weights in the training program instead of "
             "loading them from the model file when it starts (--init); "
             "the program then runs without the model, but its size grows "
             "with the weights and weights past 2 GB do not link"));

cl::opt<bool> nesterov("nesterov", cl::cat(trainingCategory),
                       cl::desc("Nesterov momentum"));
cl::opt<double> beta1("beta1", cl::init(0.9), cl::cat(trainingCategory),
                      cl::desc("Adam's first-moment decay (default 0.9)"));
cl::opt<double> beta2("beta2", cl::init(0.999), cl::cat(trainingCategory),
                      cl::desc("Adam's second-moment decay (default 0.999)"));
cl::opt<double> epsilon("epsilon", cl::init(-1.0), cl::cat(trainingCategory),
                        cl::desc("Denominator term (default: 1e-10 for "
                                 "adagrad, 1e-8 for adam and adamw)"));
cl::opt<double> weightDecay("weight-decay", cl::init(-1.0),
                            cl::cat(trainingCategory),
                            cl::desc("Weight decay (default: 0.01 for adamw, "
                                     "0 otherwise)"));
cl::opt<double> lrDecay("lr-decay", cl::init(0.0), cl::cat(trainingCategory),
                        cl::desc("Adagrad's learning-rate decay"));
cl::opt<double>
    initialAccumulator("initial-accumulator-value", cl::init(0.0),
                       cl::cat(trainingCategory),
                       cl::desc("Initial value of Adagrad's sum of squares"));

cl::OptionCategory planCategory("planning options (--mode train)");
cl::opt<int64_t> workers("workers", cl::init(0), cl::cat(planCategory),
                         cl::value_desc("N"),
                         cl::desc("Plan the program for N workers (mpirun "
                                  "-np N; default: the cluster's, or any "
                                  "number, read when the program runs)"));
cl::opt<std::string> clusterSpec(
    "cluster", cl::cat(planCategory),
    cl::value_desc("machines=M,workers-per-machine=G,bandwidth=B,latency=L,"
                   "local-bandwidth=B"),
    cl::desc("The cluster to plan for (default: one machine per worker, "
             "10Gbps, 50us; local-bandwidth: a worker's link to the others "
             "of its machine, e.g. NVLink or PCIe, free when not given)"));
cl::opt<parallax::Strategy>
    strategy("strategy", cl::init(parallax::Strategy::Hybrid),
             cl::cat(planCategory), cl::desc("How variables are synchronised"),
             cl::values(clEnumValN(parallax::Strategy::Hybrid, "hybrid",
                                   "the cheapest per variable (default)"),
                        clEnumValN(parallax::Strategy::AllReduce, "allreduce",
                                   "every variable by AllReduce"),
                        clEnumValN(parallax::Strategy::PS, "ps",
                                   "every variable on parameter servers")));
enum class BatchNormStatistics { Global, Local };
cl::opt<BatchNormStatistics> batchNorm(
    "batch-norm", cl::init(BatchNormStatistics::Global), cl::cat(planCategory),
    cl::desc("Statistics of training-mode BatchNormalization across workers"),
    cl::values(clEnumValN(BatchNormStatistics::Global, "global",
                          "over the global batch (synchronised; default): N "
                          "workers equal one worker on N x B"),
               clEnumValN(BatchNormStatistics::Local, "local",
                          "over each worker's own examples (DDP's default)")));
cl::opt<std::string> planReport("plan-report", cl::cat(planCategory),
                                cl::value_desc("FILE.json"),
                                cl::desc("Write the plan as JSON"));
cl::opt<bool> printPlanTable("print-plan", cl::cat(planCategory),
                             cl::desc("Print the plan as a table on stdout"));
cl::opt<std::string> profileData(
    "profile-data", cl::cat(planCategory), cl::value_desc("DIR"),
    cl::desc("Measure each sparse variable's alpha (unique rows per global "
             "step) on sample data (<graph input>.npy, the training-data "
             "layout) instead of using the static bound"));
cl::list<std::string> partitionOverrides(
    "partitions", cl::cat(planCategory), cl::CommaSeparated,
    cl::value_desc("NAME=P,..."),
    cl::desc("Partition counts of parameter-server variables (default: one "
             "per machine)"));
cl::opt<bool> planOnly("plan-only", cl::cat(planCategory),
                       cl::desc("Only plan: no program, and no initializer "
                                "data read (shapes are enough)"));

cl::opt<bool> searchPartitions(
    "search-partitions", cl::cat(planCategory),
    cl::desc("Time trial runs of the program with 1, 2, 4, ... partitions "
             "per parameter-server variable on the --profile-data data, fit "
             "t(P) = b/P + a(P-1) + c, and build it with the fastest P "
             "(samples and fit go into --plan-report)"));
cl::opt<int64_t> searchSteps("search-steps", cl::init(30),
                             cl::cat(planCategory), cl::value_desc("S"),
                             cl::desc("Steps per trial run, the first 5 "
                                      "warm-up (default 30)"));
cl::opt<std::string> searchLauncher(
    "search-launcher", cl::cat(planCategory), cl::value_desc("COMMAND"),
    cl::desc("How trial runs are launched (default: mpirun --oversubscribe "
             "-np N on this machine)"));

cl::opt<std::string>
    runtimeLib("runtime-lib", cl::cat(category), cl::value_desc("PATH"),
               cl::desc("The Parallax runtime library to link (default: "
                        "../lib/libParallaxRuntime.a next to this tool)"));

int fail(const Twine &message) {
  llvm::errs() << "parallax-compile: error: " << message << "\n";
  return 1;
}

parallax::EmitOptions emitOptions(const char *argv0) {
  parallax::EmitOptions options;
  options.kind = emit;
  options.optLevel = optLevel;
  options.unrollLoops = unrollLoops;
  options.cpu = cpu;
  options.runtimeLibrary = runtimeLib.empty()
                               ? parallax::defaultRuntimeLibrary(
                                     argv0, reinterpret_cast<void *>(&fail))
                               : std::string(runtimeLib);
  options.libraries = parallax::runtimeDependencies();
  if (target == Target::CUDA) {
    options.gpuRuntimeLibrary =
        parallax::cudaRuntimeLibrary(options.runtimeLibrary);
    options.vectorize = false;
  }
  return options;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  parallax::registerAllPasses();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  // libLLVM registers every backend's options: show ours and MLIR's
  // debugging options (--mlir-print-ir-after-all, --mlir-timing, ...).
  cl::HideUnrelatedOptions({&category, &trainingCategory, &planCategory});
  for (auto &option : cl::getRegisteredOptions())
    if (option.first.starts_with("mlir-"))
      option.second->setHiddenFlag(cl::NotHidden);
  cl::ParseCommandLineOptions(
      argc, argv, "parallax-compile: an ONNX model in, a native program out\n");

  if (mode == Mode::Train &&
      !parallax::symbolizeOptimizerKind(optimizer).has_value())
    return fail("unknown optimizer '" + optimizer +
                "': expected sgd, momentum, adagrad, adam or adamw");
  bool planning =
      planOnly || printPlanTable || !planReport.empty() || !profileData.empty();
  if (outputFile.empty() && !planOnly)
    return fail("-o PROGRAM is required (unless --plan-only)");
  if (!outputFile.empty() && !planOnly)
    if (std::string problem = parallax::unreplaceableOutput(outputFile, emit);
        !problem.empty())
      return fail(problem);
  if (searchPartitions && (planOnly || profileData.empty() ||
                           (workers == 0 && clusterSpec.empty())))
    return fail("--search-partitions times trial runs of the program: it "
                "needs --workers N (or --cluster), --profile-data DIR and "
                "no --plan-only");
  if (searchSteps < 6)
    return fail("--search-steps must be at least 6 (5 warm-up steps)");
  if (planning && mode != Mode::Train)
    return fail("--plan-only, --plan-report, --print-plan and "
                "--profile-data plan training programs (not --mode "
                "inference)");
  // Without them the number of workers is read when the program runs.
  bool knownWorkers = workers > 0 || !clusterSpec.empty();
  if ((planOnly || printPlanTable || !planReport.empty()) && !knownWorkers)
    return fail("--plan-only, --plan-report and --print-plan need --workers N "
                "or --cluster: without them the number of workers is read "
                "when the program runs, and the plan is the paper's rule "
                "(docs/distributed.md)");
  parallax::Cluster cluster;
  if (!clusterSpec.empty()) {
    std::string problem;
    std::optional<parallax::Cluster> parsed =
        parallax::Cluster::parse(clusterSpec, cluster, problem);
    if (!parsed)
      return fail("--cluster: " + problem);
    cluster = *parsed;
  }
  if (workers.getNumOccurrences() && workers < 1)
    return fail("--workers must be at least 1, got " + Twine(workers) +
                " (leave it out to read the number of workers when the "
                "program runs)");
  for (cl::opt<double> *option : {&lr, &momentum, &beta1, &beta2, &epsilon,
                                  &weightDecay, &lrDecay, &initialAccumulator})
    if (!std::isfinite(option->getValue()))
      return fail("--" + option->ArgStr + " must be a finite number, got " +
                  llvm::formatv("{0}", option->getValue()).str());
  if (lr < 0)
    return fail("--lr must not be negative, got " +
                llvm::formatv("{0}", lr.getValue()).str());
  if (workers > 0) {
    if (clusterSpec.empty())
      cluster.machines = workers; // one worker per machine
    else if (cluster.workers() != workers)
      return fail("--workers " + Twine(workers) +
                  " does not match --cluster (" + Twine(cluster.machines) +
                  " machines x " + Twine(cluster.workersPerMachine) +
                  " workers)");
  }
  if (std::string problem = parallax::checkCPU(cpu); !problem.empty())
    return fail("--cpu: " + problem);
  std::optional<parallax::GPUCodegenOptions> gpu;
  if (target != Target::CPU) {
    gpu.emplace();
    gpu->simulate = target == Target::CUDASim;
    gpu->assembly = emit == parallax::EmitKind::PTX;
    gpu->warpReductions = gpuWarpReductions;
    gpu->libraryConvolutions = gpuConvolutions == GPUConvolutions::Library;
    if (!gpu->simulate) {
      if (std::string problem =
              parallax::checkGPUArch(gpuArch, gpu->chip, gpu->features);
          !problem.empty())
        return fail("--gpu-arch: " + problem);
      gpu->toolkit = cudaToolkit.empty() ? std::string(PARALLAX_CUDA_TOOLKIT)
                                         : std::string(cudaToolkit);
      if (std::string problem = parallax::checkCUDAToolkit(gpu->toolkit);
          !problem.empty())
        return fail(problem);
    }
  }
  if (emit == parallax::EmitKind::PTX && target != Target::CUDA)
    return fail("--emit ptx writes the kernels of --target cuda");
  if (gpuWarpReductions.getNumOccurrences() && target == Target::CPU)
    return fail("--gpu-warp-reductions applies to --target cuda and "
                "cuda-sim");
  if (gpuConvolutions.getNumOccurrences() && target == Target::CPU)
    return fail("--gpu-convolutions applies to --target cuda and cuda-sim");
  if (optLevel > 3)
    return fail("-O" + Twine(optLevel) + " is not a level (use -O0..-O3)");

  DialectRegistry registry;
  parallax::registerAllDialects(registry);
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the node or value; an IR dump would only bury them.
  context.printOpOnDiagnostic(false);

  std::string error;
  auto buffer = openInputFile(inputFile, &error);
  if (!buffer)
    return fail(error);
  parallax::ONNXImportOptions options;
  error = parallax::setShapeBindings(options, bind,
                                     batchSize.getNumOccurrences()
                                         ? std::optional<int64_t>(batchSize)
                                         : std::nullopt);
  if (!error.empty())
    return fail(error);
  options.dataDirectory = dataDir;
  options.shapesOnly = planOnly;
  options.weightsFromModel = mode == Mode::Train && !embedWeights;
  options.randomSeed = seed;
  for (const std::string &name : freeze)
    options.frozen.insert(name);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parallax::importONNXModel(
      *buffer, inputFile, parallax::isONNXText(inputFile, buffer->getBuffer()),
      &context, options);
  if (!module)
    return 1;
  if (mode == Mode::Train) {
    bool trainable = false;
    module->walk([&](parallax::VariableOp variable) {
      trainable |= variable.getTrainable();
    });
    if (!trainable)
      return fail("'" + inputFile + "' has no trainable variable (" +
                  (freeze.empty() ? "the model has no float initializer"
                                  : "--freeze froze every float initializer") +
                  "): there is nothing to train (--mode inference builds a "
                  "program that runs the model)");
  }

  // From here on an error names the ONNX node it came from, and an op that
  // fails verification is reported as a compiler bug.
  parallax::PipelineDiagnostics pipelineDiagnostics(&context,
                                                    "parallax-compile");
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  // --mlir-timing: one report at exit over every pass manager below.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  if (mode == Mode::Inference) {
    parallax::buildInferencePipeline(pm, useBlas && !gpu, gpu);
  } else {
    parallax::TrainingPipelineOptions training;
    training.loss = lossName;
    training.useBlas = useBlas && !gpu;
    training.gpu = gpu;
    parallax::ParallaxOptimizerOptions &opt = training.optimizer;
    opt.optimizer = *parallax::symbolizeOptimizerKind(optimizer);
    opt.lr = lr;
    opt.momentum = momentum;
    opt.nesterov = nesterov;
    opt.beta1 = beta1;
    opt.beta2 = beta2;
    opt.epsilon = epsilon;
    opt.weightDecay = weightDecay;
    opt.lrDecay = lrDecay;
    opt.initialAccumulatorValue = initialAccumulator;
    training.workers = cluster.workers();
    training.profileData = profileData;
    // Every training step is distributed: for --workers N (or a cluster),
    // or else for any number of workers, read when the program runs
    // (one worker unless launched with mpirun -np N).
    training.distribute = true;
    training.distribution.strategy = strategy;
    training.distribution.localBatchStatistics =
        batchNorm == BatchNormStatistics::Local;
    training.partition.overrides.assign(partitionOverrides.begin(),
                                        partitionOverrides.end());
    if (knownWorkers) {
      training.distribution.workers = cluster.workers();
      training.distribution.cluster = clusterSpec;
    } else {
      training.distribution.workersAtRunTime = true;
    }
    // Plan between autodiff and the rest: the gradients tell which
    // variables are sparse.
    PassManager gradients(&context);
    if (failed(applyPassManagerCLOptions(gradients)))
      return 1;
    gradients.enableTiming(timingScope);
    parallax::buildGradientPipeline(gradients, training);
    if (dumpPipeline) {
      gradients.printAsTextualPipeline(llvm::errs());
      llvm::errs() << "\n";
    }
    if (failed(gradients.run(*module)))
      return 1;
    std::optional<llvm::json::Value> report;
    if (planning) {
      FailureOr<parallax::Plan> plan = parallax::planDistribution(
          *module, cluster, strategy, batchNorm == BatchNormStatistics::Local);
      if (failed(plan))
        return 1;
      if (printPlanTable)
        parallax::printPlan(*plan, llvm::outs());
      report = parallax::toJSON(*plan);
      if (searchPartitions) {
        parallax::TrialRun trial{plan->cluster.workers(), searchLauncher,
                                 profileData, searchSteps, 5};
        if (std::string problem = parallax::searchPartitionCounts(
                *module, *plan, training, emitOptions(argv[0]), trial, *report);
            !problem.empty())
          return fail(problem);
      }
      if (!planReport.empty()) {
        std::string problem;
        auto output = openOutputFile(planReport, &problem);
        if (!output)
          return fail(problem);
        output->os() << llvm::formatv("{0:2}", *report) << "\n";
        output->keep();
      }
      if (planOnly)
        return 0;
    }
    parallax::buildTrainingLoweringPipeline(pm, training);
  }
  if (dumpPipeline) {
    pm.printAsTextualPipeline(llvm::errs());
    llvm::errs() << "\n";
  }
  if (failed(pm.run(*module)))
    return 1;

  if (std::string problem =
          parallax::emitProgram(*module, outputFile, emitOptions(argv[0]));
      !problem.empty())
    return fail(problem);
  return 0;
}
