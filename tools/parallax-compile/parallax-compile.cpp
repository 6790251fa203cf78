//===- parallax-compile.cpp - ONNX model in, native program out -----------===//
//
// Part of the Parallax project.
//
// One process: import the ONNX model, run the pass pipeline, translate to
// LLVM IR, optimize, emit an object file with LLVM's TargetMachine, and link
// it with the Parallax runtime into an executable.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/PartitionFit.h"
#include "parallax/Analysis/Plan.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/InitAll.h"
#include "parallax/Pipelines/Pipelines.h"
#include "parallax/Target/ONNX/ONNXImporter.h"

#include "TrialRun.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

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

enum class Emit { MLIR, LLVM, Obj, Exe };
cl::opt<Emit>
    emit("emit", cl::init(Emit::Exe), cl::cat(category),
         cl::desc("What to write"),
         cl::values(clEnumValN(Emit::MLIR, "mlir", "MLIR in the LLVM dialect"),
                    clEnumValN(Emit::LLVM, "llvm", "LLVM IR (optimized)"),
                    clEnumValN(Emit::Obj, "obj", "an object file"),
                    clEnumValN(Emit::Exe, "exe", "an executable (default)")));

cl::opt<std::string> target("target", cl::init("cpu"), cl::cat(category),
                            cl::desc("cpu (cuda arrives with GPU support)"));
cl::opt<unsigned> optLevel("O", cl::Prefix, cl::init(2), cl::cat(category),
                           cl::desc("LLVM optimization level (-O0..-O3)"));
cl::opt<bool> unrollLoops(
    "unroll-loops", cl::init(false), cl::cat(category),
    cl::desc("Let LLVM unroll loops (off by default: fully unrolling a short "
             "innermost loop, such as a 16-pixel image row, makes LLVM "
             "vectorize the loop around it with gathers and scatters)"));
cl::opt<bool> useBlas("blas", cl::init(true), cl::cat(category),
                      cl::desc("Run f32 matrix products through OpenBLAS "
                               "(--blas=false: generated loops)"));
cl::opt<bool> dumpPipeline("dump-pipeline", cl::cat(category),
                           cl::desc("Print the MLIR pass pipeline"));
cl::opt<int64_t> batchSize("batch-size", cl::cat(category), cl::value_desc("B"),
                           cl::desc("Bind the leading dimension of every "
                                    "graph input to B"));
cl::list<std::string> bind("bind", cl::CommaSeparated, cl::cat(category),
                           cl::value_desc("NAME=VALUE"),
                           cl::desc("Bind a symbolic dimension"));
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
    cl::value_desc("machines=M,workers-per-machine=G,bandwidth=B,latency=L"),
    cl::desc("The cluster to plan for (default: one machine per worker, "
             "10Gbps, 50us)"));
cl::opt<parallax::Strategy>
    strategy("strategy", cl::init(parallax::Strategy::Hybrid),
             cl::cat(planCategory), cl::desc("How variables are synchronised"),
             cl::values(clEnumValN(parallax::Strategy::Hybrid, "hybrid",
                                   "the cheapest per variable (default)"),
                        clEnumValN(parallax::Strategy::AllReduce, "allreduce",
                                   "every variable by AllReduce"),
                        clEnumValN(parallax::Strategy::PS, "ps",
                                   "every variable on parameter servers")));
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

std::string defaultRuntimeLib(const char *argv0) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&defaultRuntimeLib));
  SmallString<256> path(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(path, "lib", "libParallaxRuntime.a");
  return std::string(path);
}

/// Links `object` with the runtime into `output` with the system's C++
/// compiler driver (the runtime needs libstdc++).
int link(StringRef object, StringRef runtime, StringRef output) {
  if (!llvm::sys::fs::exists(runtime))
    return fail("runtime library '" + runtime +
                "' not found (set it with --runtime-lib)");
  llvm::ErrorOr<std::string> driver = llvm::sys::findProgramByName("c++");
  if (!driver)
    driver = llvm::sys::findProgramByName("g++");
  if (!driver)
    return fail("no C++ compiler driver (c++ or g++) on PATH to link with");
  SmallVector<StringRef> args{*driver, object, runtime, "-lopenblas"};
  SmallVector<StringRef> mpiLibraries;
  StringRef(PARALLAX_MPI_LIBRARIES).split(mpiLibraries, ',', -1, false);
  args.append(mpiLibraries.begin(), mpiLibraries.end());
  args.append({"-lm", "-o", output});
  std::string message;
  if (llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, {}, 0, 0,
                                &message) != 0)
    return fail("linking failed" + (message.empty() ? "" : ": " + message));
  return 0;
}

/// LLVM's default pipeline at -O, with loop unrolling only on request.
void optimize(llvm::Module &module, llvm::TargetMachine *machine) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = unrollLoops;
  tuning.LoopVectorization = optLevel > 1;
  tuning.SLPVectorization = optLevel > 1;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::OptimizationLevel level = levels[optLevel];
  llvm::ModulePassManager pipeline =
      optLevel == 0 ? builder.buildO0DefaultPipeline(level)
                    : builder.buildPerModuleDefaultPipeline(level);
  pipeline.run(module, modules);
}

/// Why -o `path` must not be replaced, or "": a program or object file
/// replaces only what could be one (absent, empty, or an ELF file), so a
/// mistyped -o never destroys data; text output (MLIR, LLVM IR) replaces
/// any regular file, as compilers do.
std::string unreplaceableOutput(StringRef path, Emit kind) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return "";
  if (!llvm::sys::fs::is_regular_file(status))
    return ("-o '" + path +
            "' exists and is not a regular file: refusing to "
            "replace it")
        .str();
  if ((kind != Emit::Exe && kind != Emit::Obj) || status.getSize() == 0)
    return "";
  llvm::file_magic magic;
  if (!llvm::identify_magic(path, magic) &&
      llvm::is_contained(
          {llvm::file_magic::elf, llvm::file_magic::elf_relocatable,
           llvm::file_magic::elf_executable,
           llvm::file_magic::elf_shared_object, llvm::file_magic::elf_core},
          magic))
    return "";
  return ("-o '" + path +
          "' exists and is not a program or object file: refusing to replace "
          "it (choose another path or remove it)")
      .str();
}

/// Translates the lowered `module` to LLVM IR, optimizes it, and writes it
/// as `kind` to `path` (an executable links the object with the runtime).
int emitProgram(ModuleOp module, StringRef path, Emit kind, const char *argv0) {
  std::string error;
  // An executable's object is a private temporary file (never PATH.o, which
  // may be the user's), and it is linked to a temporary beside PATH that
  // replaces PATH only once complete.
  SmallString<128> objectPath;
  if (kind == Emit::Exe) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "parallax-program", "o", objectPath))
      return fail("cannot create a temporary object file: " + ec.message());
  }
  llvm::FileRemover removeObject(objectPath);
  auto output = openOutputFile(
      kind == Emit::Exe ? objectPath.str().str() : path.str(), &error);
  if (!output)
    return fail(error);
  if (kind == Emit::MLIR) {
    module.print(output->os());
    output->keep();
    return 0;
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return fail(error);
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), "", targetOptions, llvm::Reloc::PIC_,
      std::nullopt, static_cast<llvm::CodeGenOptLevel>(optLevel.getValue())));

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  optimize(*llvmModule, machine.get());

  if (kind == Emit::LLVM) {
    llvmModule->print(output->os(), nullptr);
    output->keep();
    return 0;
  }
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, output->os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return fail("the target cannot emit object files");
  codegen.run(*llvmModule);
  output->os().flush();
  if (kind == Emit::Obj) {
    output->keep();
    return 0;
  }
  output->keep();
  SmallString<128> linked;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, linked))
    return fail("cannot create a file beside '" + path + "': " + ec.message());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover removeLinked(linked);
  if (int status = link(objectPath,
                        runtimeLib.empty() ? defaultRuntimeLib(argv0)
                                           : std::string(runtimeLib),
                        linked))
    return status;
  if (std::error_code ec = llvm::sys::fs::rename(linked, path))
    return fail("cannot move the program to '" + path + "': " + ec.message());
  removeLinked.releaseFile();
  return 0;
}

/// --search-partitions: builds and times the program with every
/// parameter-server variable at P = 1, 2, 4, ... partitions (up to twice
/// the workers, at least 4, at most the smallest such variable's rows),
/// fits the paper's model, and sets the fastest P as the partition count
/// of the program to build; the samples and fit go into `report`.
int searchPartitionCounts(ModuleOp module, const parallax::Plan &plan,
                          parallax::TrainingPipelineOptions &training,
                          MLIRContext &context, const char *argv0,
                          llvm::json::Value &report) {
  SmallVector<std::string> onServers;
  int64_t maxPartitions = std::max<int64_t>(4, 2 * plan.cluster.workers());
  for (const parallax::VariablePlan &v : plan.variables)
    if (v.placement == parallax::Placement::PS) {
      onServers.push_back(v.name);
      maxPartitions = std::min<int64_t>(maxPartitions, v.shape.front());
    }
  if (onServers.empty()) {
    llvm::errs() << "parallax-compile: no variable is on parameter servers: "
                    "no partitions to search\n";
    return 0;
  }
  auto setPartitions = [&](parallax::TrainingPipelineOptions &options,
                           int64_t partitions) {
    options.partition.overrides.clear();
    for (const std::string &name : onServers)
      options.partition.overrides.push_back(name + "=" +
                                            std::to_string(partitions));
  };
  parallax::TrialRun trial{plan.cluster.workers(), searchLauncher, profileData,
                           searchSteps, 5};
  SmallString<128> program;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("parallax-trial", "", program))
    return fail("cannot create a temporary file: " + ec.message());
  std::vector<parallax::PartitionSample> samples;
  for (int64_t partitions = 1; partitions <= maxPartitions; partitions *= 2) {
    OwningOpRef<ModuleOp> candidate = module.clone();
    parallax::TrainingPipelineOptions options = training;
    setPartitions(options, partitions);
    PassManager pm(&context);
    parallax::buildTrainingLoweringPipeline(pm, options);
    if (failed(pm.run(*candidate)))
      return 1;
    if (int status = emitProgram(*candidate, program, Emit::Exe, argv0))
      return status;
    std::string error;
    std::optional<double> seconds = parallax::timeSteps(program, trial, error);
    if (!seconds) {
      llvm::sys::fs::remove(program);
      return fail("--search-partitions: " + error);
    }
    llvm::errs() << llvm::formatv(
        "parallax-compile: {0} partitions: {1:f3} ms/step\n", partitions,
        *seconds * 1e3);
    samples.push_back({partitions, *seconds});
  }
  llvm::sys::fs::remove(program);
  std::optional<parallax::PartitionFit> fit = parallax::fitPartitions(samples);
  int64_t chosen = parallax::choosePartitions(samples, fit, maxPartitions);
  if (fit)
    llvm::errs() << llvm::formatv("parallax-compile: fit t(P) = {0:e2}/P + "
                                  "{1:e2}(P-1) + {2:e2} s: {3} partitions\n",
                                  fit->b, fit->a, fit->c, chosen);
  setPartitions(training, chosen);
  report.getAsObject()->try_emplace("partition_search",
                                    parallax::toJSON(samples, fit, chosen));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  parallax::registerAllPasses();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
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
    if (std::string problem = unreplaceableOutput(outputFile, emit);
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
  if (target != "cpu")
    return fail("target '" + target + "' is not supported yet (only cpu)");
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

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  if (mode == Mode::Inference) {
    parallax::buildInferencePipeline(pm, useBlas);
  } else {
    parallax::TrainingPipelineOptions training;
    training.loss = lossName;
    training.useBlas = useBlas;
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
    parallax::buildGradientPipeline(gradients, training);
    if (dumpPipeline) {
      gradients.printAsTextualPipeline(llvm::errs());
      llvm::errs() << "\n";
    }
    if (failed(gradients.run(*module)))
      return 1;
    std::optional<llvm::json::Value> report;
    if (planning) {
      FailureOr<parallax::Plan> plan =
          parallax::planDistribution(*module, cluster, strategy);
      if (failed(plan))
        return 1;
      if (printPlanTable)
        parallax::printPlan(*plan, llvm::outs());
      report = parallax::toJSON(*plan);
      if (searchPartitions) {
        if (int status = searchPartitionCounts(*module, *plan, training,
                                               context, argv[0], *report))
          return status;
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

  return emitProgram(*module, outputFile, emit, argv[0]);
}
