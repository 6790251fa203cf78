//===- CpuKernels.h - The CPU's features and the BLAS kernels ---*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// Matrix products run on oneDNN or OpenBLAS, loaded by the runtime. oneDNN
// picks its kernels by the CPU's features. OpenBLAS picks them by CPU
// model number when it loads: on a CPU newer than the library it falls
// back to its SSE3 kernels (5x slower SGEMM), so the runtime decides from
// the CPU's features instead and tells OpenBLAS before it initialises.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_CPUKERNELS_H
#define PARALLAX_LIB_RUNTIME_CPUKERNELS_H

#include <cstdint>
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

/// C = op(A) op(B) + beta C on row-major matrices (beta 1: accumulate;
/// 0: overwrite, C's old contents never read), one tile on the calling
/// thread alone: m x n of C, k deep; op transposes where asked.
using TileGemmFn = void (*)(bool transA, bool transB, int64_t m, int64_t n,
                            int64_t k, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float beta, float *c,
                            int64_t ldc);

/// The library the runtime runs matrix products with, loaded on first use.
/// PARALLAX_BLAS chooses it: `auto` (the default: oneDNN where it loads and
/// has kernels for this CPU's vector unit, with OpenBLAS for small tiles;
/// else OpenBLAS), `onednn` (oneDNN for every tile) or `openblas`.
/// PARALLAX_BLAS_CORE chooses OpenBLAS's kernels, and so OpenBLAS: `auto`
/// (the default: by the CPU's features, unless the user set
/// OPENBLAS_CORETYPE), `library` (OpenBLAS's own detection), or an
/// OpenBLAS core name.
struct BlasLibrary {
  std::string cpu; // describeCpu of this CPU
  TileGemmFn gemm = nullptr;
  std::string version; // "OpenBLAS 0.3.21", "oneDNN 2.6.3"
  std::string core;    // its kernels: "SkylakeX", "avx512_core"
  std::string reason;  // why: "chosen from the CPU's features"
  std::string error;   // why no library could be loaded, or ""
  /// Tiles of fewer than smallTileWork multiply-adds run on smallGemm
  /// (null: gemm runs them all), from smallVersion with smallCore kernels,
  /// chosen for smallReason.
  TileGemmFn smallGemm = nullptr;
  int64_t smallTileWork = 0;
  std::string smallVersion, smallCore, smallReason;
  /// Where nonzero, tiles with a leading dimension that is a multiple of
  /// this many elements run on smallGemm too, whatever their size (oneDNN's
  /// AVX2 kernels run them up to 3x slower than OpenBLAS's).
  int64_t smallLeadingMultiple = 0;

  /// The library for an m x n x k tile whose operands have leading
  /// dimensions lda, ldb and ldc: by shape alone, so that every tile runs
  /// the same code whatever the thread count.
  TileGemmFn gemmFor(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                     int64_t ldc) const {
    if (!smallGemm)
      return gemm;
    if (m * n * k < smallTileWork)
      return smallGemm;
    if (smallLeadingMultiple &&
        (lda % smallLeadingMultiple == 0 || ldb % smallLeadingMultiple == 0 ||
         ldc % smallLeadingMultiple == 0))
      return smallGemm;
    return gemm;
  }
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
