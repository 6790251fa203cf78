//===- CpuKernels.h - The CPU's features and the BLAS kernels ---*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// OpenBLAS picks its kernels by CPU model number when it loads: on a CPU
// newer than the library it falls back to its SSE3 kernels (5x slower
// SGEMM). The runtime decides from the CPU's features instead, tells
// OpenBLAS before the library initialises, and loads it itself.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_CPUKERNELS_H
#define PARALLAX_LIB_RUNTIME_CPUKERNELS_H

#include <cblas.h>

#include <string>

namespace parallax::runtime {

/// The instruction sets the kernels care about, each usable: the CPU has
/// it and the operating system saves its registers.
struct CpuFeatures {
  bool avx = false, avx2 = false, fma = false;
  /// AVX-512 F, CD, BW, DQ and VL, what OpenBLAS's SkylakeX kernels use.
  bool avx512 = false;
  bool avx512bf16 = false;
  bool amx = false; // AMX-TILE with AMX-BF16
};

CpuFeatures detectCpuFeatures();

/// "AVX-512 (+BF16, AMX)", "AVX2+FMA", "AVX" or "SSE".
std::string describeCpu(const CpuFeatures &cpu);

/// The OpenBLAS core whose kernels are the best for `cpu`, or "" for one
/// without AVX (the library's own choice is then as good).
std::string openBlasCoreFor(const CpuFeatures &cpu);

/// The instruction set a named OpenBLAS core needs ("" when it needs none
/// beyond SSE3), compared case-insensitively; for names OpenBLAS does
/// not know too ("").
std::string instructionsNeededBy(const std::string &core);
bool cpuCanRun(const CpuFeatures &cpu, const std::string &core);

using SgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint,
                         blasint, blasint, float, const float *, blasint,
                         const float *, blasint, float, float *, blasint);

/// The BLAS library the runtime runs matrix products with, loaded on
/// first use. PARALLAX_BLAS_CORE chooses its kernels: `auto` (the
/// default: by the CPU's features, unless the user set
/// OPENBLAS_CORETYPE), `library` (OpenBLAS's own detection), or an
/// OpenBLAS core name.
struct BlasLibrary {
  std::string cpu; // describeCpu of this CPU
  SgemmFn sgemm = nullptr;
  std::string config;  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  std::string version; // "OpenBLAS 0.3.21"
  std::string core;    // what the library runs: "SkylakeX"
  std::string reason;  // why: "chosen from the CPU's features (AVX-512)"
  std::string error;   // why it could not be loaded, or ""
};

/// Loads the library once; never dies (a program without matrix products
/// runs without it).
const BlasLibrary &blasLibrary();

/// Like blasLibrary(), but dies when it cannot be loaded.
const BlasLibrary &requireBlasLibrary();

/// One line for --verbose: the CPU's features and the kernels chosen.
std::string describeKernels();

/// The `"kernels"` member of the first metrics record (JSON).
std::string kernelsJson();

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_CPUKERNELS_H
