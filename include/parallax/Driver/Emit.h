//===- Emit.h - From an LLVM-dialect module to a program --------*- C++ -*-===//
//
// Part of the Parallax project.
//
// The back end of parallax-compile as a library (as IREE's
// iree_compile_lib): translate a lowered module to LLVM IR, optimize it,
// emit MLIR, LLVM IR, an object file or an executable linked with the
// Parallax runtime, never replacing what -o names unless it could be a
// previous output.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DRIVER_EMIT_H
#define PARALLAX_DRIVER_EMIT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::parallax {

/// PTX: the kernels of a module lowered for --target cuda with
/// `GPUCodegenOptions::assembly`, as text.
enum class EmitKind { MLIR, LLVM, PTX, Object, Executable };

struct EmitOptions {
  EmitKind kind = EmitKind::Executable;
  /// LLVM's -O level, 0 to 3.
  unsigned optLevel = 2;
  /// Let LLVM unroll loops (off: fully unrolling a short innermost loop
  /// makes LLVM vectorize the loop around it with gathers and scatters).
  bool unrollLoops = false;
  /// Let LLVM vectorize loops and straight-line code. Off where the host
  /// code only launches kernels (--target cuda): there the SLP vectorizer
  /// finds nothing to gain and is quadratic in the long chains of stores
  /// of a large model's kernel arguments (minutes for MobileNetV3).
  bool vectorize = true;
  /// The runtime archive executables link (libParallaxRuntime.a).
  std::string runtimeLibrary;
  /// The CUDA driver side of the runtime (libParallaxCudaRuntime.a), for
  /// programs with kernels; empty otherwise.
  std::string gpuRuntimeLibrary;
  /// Libraries after the runtime (MPI, OpenMP, libm), as linker
  /// arguments.
  std::vector<std::string> libraries;
  /// The CPU the host code is for: "native" (this machine's, with the
  /// features CPUID reports) or one of LLVM's CPU names (x86-64-v3,
  /// znver4, sapphirerapids, ...), with that CPU's features.
  std::string cpu = "native";
};

/// The features of the CPU this runs on, as LLVM's target machine takes
/// them ("+avx2,-avx512f,..."), from what CPUID says it can do: the CPU's
/// name alone would assume its model's features, which a virtual machine
/// may hide (a Zen 4 without AVX-512), and the program would stop at its
/// first such instruction.
std::string hostCPUFeatures();

/// "" if `cpu` is "native" or a CPU that LLVM's target for this machine's
/// triple knows, else why not.
std::string checkCPU(llvm::StringRef cpu);

/// The runtime archive installed beside the tool `argv0` (../lib).
std::string defaultRuntimeLibrary(const char *argv0, void *anchor);

/// The libraries the runtime needs: the MPI libraries parallax-compile was
/// built with, LLVM's OpenMP runtime, libm (the BLAS libraries are loaded
/// at run time).
std::vector<std::string> runtimeDependencies();

/// The CUDA runtime archive beside the runtime archive `runtimeLibrary`.
std::string cudaRuntimeLibrary(llvm::StringRef runtimeLibrary);

/// Checks `arch` (sm_XX) against the architectures the pipeline targets
/// and sets the cubin's chip and the PTX ISA it needs; returns "" or why
/// not.
std::string checkGPUArch(llvm::StringRef arch, std::string &chip,
                         std::string &features);

/// "" if `toolkit` has what the GPU pipeline runs (ptxas, fatbinary,
/// libdevice), or what is missing.
std::string checkCUDAToolkit(llvm::StringRef toolkit);

/// Why `path` must not be replaced by an output of `kind`, or "": a
/// program or object file replaces only what could be one (absent, empty,
/// or an ELF file), so a mistyped -o never destroys data; text output
/// replaces any regular file, as compilers do; nothing replaces a
/// directory or a device.
std::string unreplaceableOutput(llvm::StringRef path, EmitKind kind);

/// LLVM's default pipeline at `optLevel`, with loop unrolling only on
/// request and vectorization (from -O2) unless refused.
void optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &machine,
                        unsigned optLevel, bool unrollLoops, bool vectorize);

/// Links `object` with the runtime and its libraries into `output` with
/// the system's C++ compiler driver (the runtime needs libstdc++). Returns
/// "" or what went wrong.
std::string linkProgram(llvm::StringRef object, const EmitOptions &options,
                        llvm::StringRef output);

/// Writes the lowered `module` as `options.kind` to `path`; an executable
/// is linked beside `path` and renamed onto it once complete. Returns "" or
/// what went wrong.
std::string emitProgram(ModuleOp module, llvm::StringRef path,
                        const EmitOptions &options);

} // namespace mlir::parallax

#endif // PARALLAX_DRIVER_EMIT_H
