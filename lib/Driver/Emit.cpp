//===- Emit.cpp - From an LLVM-dialect module to a program ----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Driver/Emit.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::parallax;

std::string mlir::parallax::hostCPUFeatures() {
  llvm::SubtargetFeatures features;
  for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(name, enabled);
  return features.getString();
}

std::string mlir::parallax::checkCPU(StringRef cpu) {
  if (cpu == "native")
    return "";
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return error;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvmTarget->createMCSubtargetInfo(triple, "", ""));
  if (subtarget && subtarget->isCPUStringValid(cpu))
    return "";
  return ("'" + cpu + "' is not a CPU that LLVM knows for " + triple.str() +
          " (native: this machine's; or a name such as x86-64-v3, znver4, "
          "sapphirerapids, as clang's -march takes)")
      .str();
}

std::string mlir::parallax::defaultRuntimeLibrary(const char *argv0,
                                                  void *anchor) {
  std::string self = llvm::sys::fs::getMainExecutable(argv0, anchor);
  SmallString<256> path(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(path, "lib", "libParallaxRuntime.a");
  return std::string(path);
}

std::vector<std::string> mlir::parallax::runtimeDependencies() {
  // oneDNN and OpenBLAS are not among them: the runtime loads them
  // (dlopen) once it has chosen their kernels.
  std::vector<std::string> libraries;
  SmallVector<StringRef> mpi;
  StringRef(PARALLAX_MPI_LIBRARIES).split(mpi, ',', -1, false);
  for (StringRef library : mpi)
    libraries.push_back(library.str());
  // Generated loop nests run on OpenMP threads; LLVM's OpenMP runtime is
  // not on the system's library path.
  libraries.push_back(PARALLAX_OPENMP_LIBRARY);
  libraries.push_back(
      ("-Wl,-rpath," + llvm::sys::path::parent_path(PARALLAX_OPENMP_LIBRARY))
          .str());
  // The ONNX protobuf classes: programs read their weights from the model.
  libraries.push_back("-lonnx_proto");
  libraries.push_back("-lprotobuf");
  libraries.push_back("-lm");
  return libraries;
}

std::string mlir::parallax::cudaRuntimeLibrary(StringRef runtimeLibrary) {
  SmallString<256> path(llvm::sys::path::parent_path(runtimeLibrary));
  llvm::sys::path::append(path, "libParallaxCudaRuntime.a");
  return std::string(path);
}

std::string mlir::parallax::checkGPUArch(StringRef arch, std::string &chip,
                                         std::string &features) {
  // The PTX ISA each generation needs first (LLVM's NVPTX and CUDA 13's
  // ptxas agree on these); CUDA 13 no longer builds for sm_70/72.
  static const std::pair<StringLiteral, StringLiteral> known[] = {
      {"sm_75", "+ptx80"},  {"sm_80", "+ptx80"},  {"sm_86", "+ptx80"},
      {"sm_87", "+ptx80"},  {"sm_89", "+ptx80"},  {"sm_90", "+ptx80"},
      {"sm_90a", "+ptx80"}, {"sm_100", "+ptx86"}, {"sm_120", "+ptx87"}};
  for (auto [name, ptx] : known)
    if (arch == name) {
      chip = name.str();
      features = ptx.str();
      return "";
    }
  std::string names;
  for (auto [name, ptx] : known)
    names += (names.empty() ? "" : ", ") + name.str();
  return ("'" + arch +
          "' is not a GPU architecture this compiler builds for "
          "(" +
          names + ")")
      .str();
}

std::string mlir::parallax::checkCUDAToolkit(StringRef toolkit) {
  if (toolkit.empty())
    return "no CUDA toolkit was found when Parallax was built: name one "
           "with --cuda-toolkit DIR (it needs bin/ptxas, bin/fatbinary and "
           "nvvm/libdevice)";
  for (StringRef part :
       {"bin/ptxas", "bin/fatbinary", "nvvm/libdevice/libdevice.10.bc"}) {
    SmallString<256> path(toolkit);
    llvm::sys::path::append(path, part);
    if (!llvm::sys::fs::exists(path))
      return ("the CUDA toolkit at '" + toolkit + "' has no " + part +
              " (--cuda-toolkit DIR names another)")
          .str();
  }
  return "";
}

std::string mlir::parallax::unreplaceableOutput(StringRef path, EmitKind kind) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return "";
  if (!llvm::sys::fs::is_regular_file(status))
    return ("-o '" + path +
            "' exists and is not a regular file: refusing to "
            "replace it")
        .str();
  if ((kind != EmitKind::Executable && kind != EmitKind::Object) ||
      status.getSize() == 0)
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

void mlir::parallax::optimizeLLVMModule(llvm::Module &module,
                                        llvm::TargetMachine &machine,
                                        unsigned optLevel, bool unrollLoops,
                                        bool vectorize) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = unrollLoops;
  tuning.LoopVectorization = vectorize && optLevel > 1;
  tuning.SLPVectorization = vectorize && optLevel > 1;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::OptimizationLevel level = levels[std::min(optLevel, 3u)];
  llvm::ModulePassManager pipeline =
      optLevel == 0 ? builder.buildO0DefaultPipeline(level)
                    : builder.buildPerModuleDefaultPipeline(level);
  pipeline.run(module, modules);
}

std::string mlir::parallax::linkProgram(StringRef object,
                                        const EmitOptions &options,
                                        StringRef output) {
  StringRef runtime = options.runtimeLibrary;
  if (!llvm::sys::fs::exists(runtime))
    return ("runtime library '" + runtime +
            "' not found (set it with --runtime-lib)")
        .str();
  llvm::ErrorOr<std::string> driver = llvm::sys::findProgramByName("c++");
  if (!driver)
    driver = llvm::sys::findProgramByName("g++");
  if (!driver)
    return "no C++ compiler driver (c++ or g++) on PATH to link with";
  SmallVector<StringRef> args{*driver, object};
  if (!options.gpuRuntimeLibrary.empty()) {
    if (!llvm::sys::fs::exists(options.gpuRuntimeLibrary))
      return "CUDA runtime library '" + options.gpuRuntimeLibrary +
             "' not found";
    args.push_back(options.gpuRuntimeLibrary);
  }
  args.push_back(runtime);
  for (const std::string &library : options.libraries)
    args.push_back(library);
  // The CUDA driver is loaded when the program starts (dlopen), so the
  // program runs, and says why it cannot, on a machine without one.
  if (!options.gpuRuntimeLibrary.empty())
    args.push_back("-ldl");
  // GNU gold links a program in half the time of the default BFD linker
  // (0.09 against 0.19 s for a small model): it is part of binutils where
  // it is still built.
  if (llvm::sys::findProgramByName("ld.gold"))
    args.push_back("-fuse-ld=gold");
  args.append({"-o", output});
  std::string message;
  if (llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, {}, 0, 0,
                                &message) != 0)
    return "linking failed" + (message.empty() ? "" : ": " + message);
  return "";
}

std::string mlir::parallax::emitProgram(ModuleOp module, StringRef path,
                                        const EmitOptions &options) {
  std::string error;
  EmitKind kind = options.kind;
  // An executable's object is a private temporary file (never PATH.o, which
  // may be the user's), and it is linked to a temporary beside PATH that
  // replaces PATH only once complete.
  SmallString<128> objectPath;
  if (kind == EmitKind::Executable) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "parallax-program", "o", objectPath))
      return "cannot create a temporary object file: " + ec.message();
  }
  llvm::FileRemover removeObject(objectPath);
  auto output = openOutputFile(
      kind == EmitKind::Executable ? objectPath.str().str() : path.str(),
      &error);
  if (!output)
    return error;
  if (kind == EmitKind::MLIR) {
    module.print(output->os());
    output->keep();
    return "";
  }
  if (kind == EmitKind::PTX) {
    module.walk([&](gpu::BinaryOp binary) {
      for (Attribute object : binary.getObjects())
        output->os() << "// kernel module " << binary.getSymName() << "\n"
                     << cast<gpu::ObjectAttr>(object).getObject().getValue()
                     << "\n";
    });
    output->keep();
    return "";
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return error;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return "translation to LLVM IR failed";
  // Globals past what 32-bit PC-relative addresses reach (variables of
  // large models, zero until the weights are loaded) go to the large data
  // sections of the medium code model; code stays small.
  uint64_t globalBytes = 0;
  for (const llvm::GlobalVariable &global : llvmModule->globals())
    globalBytes +=
        llvmModule->getDataLayout().getTypeAllocSize(global.getValueType());
  std::optional<llvm::CodeModel::Model> codeModel;
  if (globalBytes > (uint64_t(1) << 30))
    codeModel = llvm::CodeModel::Medium;

  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple,
      options.cpu == "native" ? llvm::sys::getHostCPUName()
                              : StringRef(options.cpu),
      options.cpu == "native" ? hostCPUFeatures() : "", targetOptions,
      llvm::Reloc::PIC_, codeModel,
      static_cast<llvm::CodeGenOptLevel>(std::min(options.optLevel, 3u))));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  optimizeLLVMModule(*llvmModule, *machine, options.optLevel,
                     options.unrollLoops, options.vectorize);

  if (kind == EmitKind::LLVM) {
    llvmModule->print(output->os(), nullptr);
    output->keep();
    return "";
  }
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, output->os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return "the target cannot emit object files";
  codegen.run(*llvmModule);
  output->os().flush();
  output->keep();
  if (kind == EmitKind::Object)
    return "";
  SmallString<128> linked;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, linked))
    return ("cannot create a file beside '" + path + "': " + ec.message())
        .str();
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover removeLinked(linked);
  if (std::string problem = linkProgram(objectPath, options, linked);
      !problem.empty())
    return problem;
  if (std::error_code ec = llvm::sys::fs::rename(linked, path))
    return ("cannot move the program to '" + path + "': " + ec.message()).str();
  removeLinked.releaseFile();
  return "";
}
