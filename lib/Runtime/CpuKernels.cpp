//===- CpuKernels.cpp - The CPU's features and the BLAS kernels -----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "Support.h"
#include "Threads.h"
#include "parallax/Support/FileNames.h"

#include <cblas.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

using namespace parallax::runtime;

CpuFeatures parallax::runtime::detectCpuFeatures() {
  CpuFeatures cpu;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    return cpu;
  bool osSavesRegisters = ecx & bit_OSXSAVE;
  bool hasAvx = ecx & bit_AVX, hasFma = ecx & bit_FMA;
  uint64_t xcr0 = 0;
  if (osSavesRegisters) {
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  }
  // XCR0: SSE and AVX state (bits 1-2), AVX-512's opmask and upper
  // registers (5-7), AMX's tile configuration and data (17-18).
  bool ymm = (xcr0 & 0x6) == 0x6;
  bool zmm = ymm && (xcr0 & 0xe0) == 0xe0;
  bool tiles = (xcr0 & 0x60000) == 0x60000;
  cpu.avx = hasAvx && ymm;
  cpu.fma = hasFma && ymm;
  if (__get_cpuid_max(0, nullptr) < 7)
    return cpu;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  cpu.avx2 = cpu.avx && (ebx & bit_AVX2);
  cpu.avx512 = zmm && (ebx & bit_AVX512F) && (ebx & bit_AVX512CD) &&
               (ebx & bit_AVX512BW) && (ebx & bit_AVX512DQ) &&
               (ebx & bit_AVX512VL);
  constexpr unsigned amxBf16 = 1u << 22, amxTile = 1u << 24;
  cpu.amx = tiles && (edx & amxTile) && (edx & amxBf16);
  unsigned subleaves = eax;
  if (subleaves >= 1) {
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    constexpr unsigned avx512Bf16 = 1u << 5;
    cpu.avx512bf16 = cpu.avx512 && (eax & avx512Bf16);
  }
#endif
  return cpu;
}

std::string parallax::runtime::describeCpu(const CpuFeatures &cpu) {
  if (cpu.avx512) {
    std::string extras;
    if (cpu.avx512bf16)
      extras += "+BF16";
    if (cpu.amx)
      extras += std::string(extras.empty() ? "+" : ", ") + "AMX";
    return "AVX-512" + (extras.empty() ? "" : " (" + extras + ")");
  }
  if (cpu.avx2)
    return cpu.fma ? "AVX2+FMA" : "AVX2";
  return cpu.avx ? "AVX" : "SSE";
}

std::string parallax::runtime::openBlasCoreFor(const CpuFeatures &cpu) {
  // For single-precision GEMM, Cooperlake's and Sapphire Rapids' cores
  // run SkylakeX's kernels (they add bfloat16 ones): SkylakeX is the core
  // every OpenBLAS with AVX-512 kernels has.
  if (cpu.avx512)
    return "SkylakeX";
  if (cpu.avx2 && cpu.fma)
    return "Haswell";
  if (cpu.avx)
    return "SandyBridge";
  return "";
}

std::string parallax::runtime::instructionsNeededBy(const std::string &core) {
  struct Need {
    const char *core, *instructions;
  };
  static const Need needs[] = {
      {"SkylakeX", "AVX-512"},       {"Cooperlake", "AVX-512"},
      {"SapphireRapids", "AVX-512"}, {"Haswell", "AVX2+FMA"},
      {"Zen", "AVX2+FMA"},           {"Excavator", "AVX2+FMA"},
      {"SandyBridge", "AVX"},        {"Bulldozer", "AVX"},
      {"Piledriver", "AVX"},         {"Steamroller", "AVX"}};
  for (const Need &need : needs)
    if (strcasecmp(core.c_str(), need.core) == 0)
      return need.instructions;
  return "";
}

bool parallax::runtime::cpuCanRun(const CpuFeatures &cpu,
                                  const std::string &core) {
  std::string needed = instructionsNeededBy(core);
  if (needed == "AVX-512")
    return cpu.avx512;
  if (needed == "AVX2+FMA")
    return cpu.avx2 && cpu.fma;
  if (needed == "AVX")
    return cpu.avx;
  return true;
}

// OpenMP's calls, from the LLVM runtime every program links.
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int);

namespace {

using CblasSgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE,
                              blasint, blasint, blasint, float, const float *,
                              blasint, const float *, blasint, float, float *,
                              blasint);
CblasSgemmFn openBlasSgemm;

void openBlasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  const float *a, int64_t lda, const float *b, int64_t ldb,
                  float beta, float *c, int64_t ldc) {
  openBlasSgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b,
                ldb, beta, c, ldc);
}

BlasLibrary loadOpenBlas(const CpuFeatures &cpu) {
  BlasLibrary blas;
  blas.cpu = describeCpu(cpu);
  const char *setting = std::getenv("PARALLAX_BLAS_CORE");
  std::string mode = setting && *setting ? setting : "auto";
  const char *user = std::getenv("OPENBLAS_CORETYPE");
  std::string requested;
  bool requestedByUser = true;
  if (mode == "library") {
    blas.reason = "OpenBLAS's own choice (PARALLAX_BLAS_CORE=library)";
  } else if (mode != "auto") {
    requested = mode;
    blas.reason = "set by PARALLAX_BLAS_CORE";
  } else if (user && *user) {
    requested = user;
    blas.reason = "set by OPENBLAS_CORETYPE";
  } else {
    requested = openBlasCoreFor(cpu);
    requestedByUser = false;
    blas.reason = requested.empty()
                      ? "OpenBLAS's own choice (the CPU has no AVX)"
                      : "chosen from the CPU's features";
  }
  if (!requested.empty()) {
    if (!cpuCanRun(cpu, requested)) {
      blas.error = "OpenBLAS core '" + requested + "' (" + blas.reason +
                   ") needs " + instructionsNeededBy(requested) +
                   ", which this CPU does not have (it has " + blas.cpu +
                   "); unset it, or choose one of its cores";
      return blas;
    }
    // Read by OpenBLAS's initialisation, which runs when it is loaded.
    setenv("OPENBLAS_CORETYPE", requested.c_str(), /*overwrite=*/1);
  }
  // Single-threaded: the worker's threads multiply tiles (Blas.cpp).
  setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/1);
  void *library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    blas.error = std::string("cannot load OpenBLAS: ") + dlerror() +
                 " (install Debian's libopenblas0)";
    return blas;
  }
  openBlasSgemm = reinterpret_cast<CblasSgemmFn>(dlsym(library, "cblas_sgemm"));
  auto coreName = reinterpret_cast<const char *(*)()>(
      dlsym(library, "openblas_get_corename"));
  auto config = reinterpret_cast<const char *(*)()>(
      dlsym(library, "openblas_get_config"));
  if (!openBlasSgemm || !coreName || !config) {
    blas.error = "libopenblas.so.0 is not OpenBLAS (it lacks cblas_sgemm, "
                 "openblas_get_corename or openblas_get_config)";
    return blas;
  }
  // A library the process had loaded before ignored that variable.
  if (auto setThreads = reinterpret_cast<void (*)(int)>(
          dlsym(library, "openblas_set_num_threads")))
    setThreads(1);
  blas.core = coreName();
  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ...": its first two words.
  std::string words = config();
  size_t space = words.find(' ');
  blas.version = words.substr(
      0, space == std::string::npos ? space : words.find(' ', space + 1));
  if (!requested.empty() && strcasecmp(blas.core.c_str(), requested.c_str())) {
    if (requestedByUser) {
      blas.error = "OpenBLAS core '" + requested + "' (" + blas.reason +
                   ") is not one " + blas.version + " has: it chose '" +
                   blas.core + "'";
      return blas;
    }
    blas.reason += "; " + blas.version + " has no " + requested + " kernels";
  }
  blas.gemm = openBlasGemm;
  return blas;
}

// oneDNN 2.x's C API (dnnl.h, dnnl_types.h), declared here: the library is
// loaded at run time and its headers are not needed to build.
struct DnnlVersion {
  int major, minor, patch;
  const char *hash;
  unsigned cpuRuntime, gpuRuntime;
};
constexpr unsigned kDnnlRuntimeSeq = 1, kDnnlRuntimeOmp = 2;
using DnnlSgemmFn = int (*)(char, char, int64_t, int64_t, int64_t, float,
                            const float *, int64_t, const float *, int64_t,
                            float, float *, int64_t);
DnnlSgemmFn dnnlSgemm;

/// dnnl_cpu_isa_t's values, whose bits add instruction sets.
std::string dnnlIsaName(unsigned isa) {
  switch (isa) {
  case 0x1:
    return "sse41";
  case 0x3:
    return "avx";
  case 0x7:
    return "avx2";
  case 0x27:
    return "avx512_core";
  case 0x67:
    return "avx512_core_vnni";
  case 0xe7:
    return "avx512_core_bf16";
  case 0x3e7:
    return "avx512_core_amx";
  case 0x407:
    return "avx2_vnni";
  }
  char hex[16];
  snprintf(hex, sizeof(hex), "isa 0x%x", isa);
  return hex;
}
constexpr unsigned kDnnlAvx2 = 0x7, kDnnlAvx512Core = 0x27;
/// The instruction sets of oneDNN's kernels on this CPU, once loaded.
unsigned oneDnnKernels = 0;

void oneDnnGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                const float *a, int64_t lda, const float *b, int64_t ldb,
                float beta, float *c, int64_t ldc) {
  // oneDNN's OpenMP build shares a call among omp_get_max_threads()
  // threads (the programs' OpenMP runtime, which implements GCC's calls
  // too); a tile runs on its thread alone, so that results never depend on
  // the thread count.
  int threads = omp_get_max_threads();
  if (threads != 1)
    omp_set_num_threads(1);
  int status = dnnlSgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f,
                         a, lda, b, ldb, beta, c, ldc);
  if (threads != 1)
    omp_set_num_threads(threads);
  if (status != 0)
    die("oneDNN's dnnl_sgemm failed (status " + std::to_string(status) +
        ") on a " + std::to_string(m) + "x" + std::to_string(n) + "x" +
        std::to_string(k) + " product");
}

/// oneDNN, or why it cannot be used (in `error`).
BlasLibrary loadOneDnn(const CpuFeatures &cpu, bool requiredByUser) {
  BlasLibrary blas;
  blas.cpu = describeCpu(cpu);
  void *library = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    blas.error = std::string("cannot load oneDNN: ") + dlerror() +
                 " (install Debian's libdnnl2)";
    return blas;
  }
  dnnlSgemm = reinterpret_cast<DnnlSgemmFn>(dlsym(library, "dnnl_sgemm"));
  auto version = reinterpret_cast<const DnnlVersion *(*)()>(
      dlsym(library, "dnnl_version"));
  auto isa = reinterpret_cast<unsigned (*)()>(
      dlsym(library, "dnnl_get_effective_cpu_isa"));
  if (!dnnlSgemm || !version || !isa) {
    blas.error = "libdnnl.so.2 is not oneDNN 2 (it lacks dnnl_sgemm, "
                 "dnnl_version or dnnl_get_effective_cpu_isa)";
    return blas;
  }
  const DnnlVersion *v = version();
  blas.version = "oneDNN " + std::to_string(v->major) + "." +
                 std::to_string(v->minor) + "." + std::to_string(v->patch);
  unsigned kernels = isa();
  oneDnnKernels = kernels;
  blas.core = dnnlIsaName(kernels);
  if (v->cpuRuntime != kDnnlRuntimeOmp && v->cpuRuntime != kDnnlRuntimeSeq) {
    blas.error = blas.version +
                 " threads through a runtime other than OpenMP, which the "
                 "runtime cannot keep to one thread per tile";
    return blas;
  }
  if (!requiredByUser && (kernels & kDnnlAvx2) != kDnnlAvx2) {
    blas.error =
        blas.version + " has only " + blas.core + " kernels for this CPU";
    return blas;
  }
  blas.reason = requiredByUser ? "set by PARALLAX_BLAS"
                               : "chosen from the CPU's features by oneDNN";
  blas.gemm = oneDnnGemm;
  return blas;
}

BlasLibrary load() {
  CpuFeatures cpu = detectCpuFeatures();
  const char *setting = std::getenv("PARALLAX_BLAS");
  std::string mode = setting && *setting ? setting : "auto";
  const char *core = std::getenv("PARALLAX_BLAS_CORE");
  bool openBlasCore = core && *core && strcmp(core, "auto") != 0;
  auto refused = [&](std::string error) {
    BlasLibrary blas;
    blas.cpu = describeCpu(cpu);
    blas.error = std::move(error);
    return blas;
  };
  if (mode == "openblas")
    return loadOpenBlas(cpu);
  if (mode == "onednn" && openBlasCore)
    return refused("PARALLAX_BLAS=onednn, but PARALLAX_BLAS_CORE names "
                   "OpenBLAS's kernels; unset one of them");
  if (mode == "onednn")
    return loadOneDnn(cpu, /*requiredByUser=*/true);
  if (mode != "auto")
    return refused("PARALLAX_BLAS is '" + mode +
                   "'; it takes auto, onednn or openblas");
  // PARALLAX_BLAS_CORE names OpenBLAS's kernels, so it asks for OpenBLAS.
  if (openBlasCore)
    return loadOpenBlas(cpu);
  const char *userCore = std::getenv("OPENBLAS_CORETYPE");
  bool coreSetByUser = userCore && *userCore;
  BlasLibrary oneDnn = loadOneDnn(cpu, /*requiredByUser=*/false);
  BlasLibrary openBlas = loadOpenBlas(cpu);
  // The user's OpenBLAS core is wrong: say so rather than not use it.
  if (!oneDnn.gemm || (!openBlas.gemm && coreSetByUser)) {
    if (openBlas.gemm)
      openBlas.reason += "; not oneDNN: " + oneDnn.error;
    return openBlas;
  }
  // A oneDNN call costs about 0.25 us more than OpenBLAS's: on one tile
  // it is slower up to 2^18 multiply-adds, even at 2^19-2^20 and faster
  // from 2^20 (bench/blas_tiles_benchmark.cpp).
  if (openBlas.gemm) {
    oneDnn.smallGemm = openBlas.gemm;
    oneDnn.smallTileWork = int64_t(1) << 20;
    oneDnn.smallVersion = openBlas.version;
    oneDnn.smallCore = openBlas.core;
    oneDnn.smallReason = openBlas.reason;
    // oneDNN's AVX2 kernels (a CPU without AVX-512) take up to 3x
    // OpenBLAS's time on tiles read from rows of a multiple of 256
    // elements, as a 1024 x 1024 product's or ResNet-18's patches; on
    // others the two are even, and oneDNN is faster on the LM's skinny
    // products (docs/benchmarks.md, "A Zen 4 without AVX-512").
    if ((oneDnnKernels & kDnnlAvx512Core) != kDnnlAvx512Core)
      oneDnn.smallLeadingMultiple = 256;
  }
  return oneDnn;
}

} // namespace

const BlasLibrary &parallax::runtime::blasLibrary() {
  static const BlasLibrary blas = load();
  return blas;
}

const BlasLibrary &parallax::runtime::requireBlasLibrary() {
  const BlasLibrary &blas = blasLibrary();
  if (!blas.gemm)
    die(blas.error);
  return blas;
}

std::string parallax::runtime::describeKernels() {
  // A GPU program's products run on cuBLAS: the CPU's library is not
  // loaded.
  if (const char *gpu = device())
    return "GPU: " + std::string(gpu) + " (kernels and cuBLAS); host " +
           describeThreads() + "; heap: " + describeHeap();
  const BlasLibrary &blas = blasLibrary();
  std::string cpu = "CPU: " + blas.cpu;
  std::string threads = "; " + describeThreads();
  std::string heap = "; heap: " + describeHeap();
  if (!blas.gemm)
    return cpu + threads + "; BLAS: none (" + blas.error + ")" + heap;
  std::string text = cpu + threads + "; BLAS: " + blas.version + ", " +
                     blas.core + " kernels (" + blas.reason + ")";
  if (blas.smallGemm)
    text += "; tiles under " + std::to_string(blas.smallTileWork) +
            " multiply-adds: " + blas.smallVersion + ", " + blas.smallCore +
            " kernels (" + blas.smallReason + ")";
  if (blas.smallLeadingMultiple)
    text += ", and tiles with a leading dimension that is a multiple of " +
            std::to_string(blas.smallLeadingMultiple) + " (slow on " +
            blas.core + " kernels)";
  return text + heap;
}

std::string parallax::runtime::kernelsJson() {
  if (const char *gpu = device())
    return "{\"gpu\": " + jsonString(gpu) +
           ", \"blas\": \"cuBLAS\", \"threads\": " +
           std::to_string(workerThreads()) + "}";
  const BlasLibrary &blas = blasLibrary();
  std::string json = "{\"cpu\": " + jsonString(blas.cpu) +
                     ", \"threads\": " + std::to_string(workerThreads());
  if (!blas.gemm)
    return json +
           ", \"blas\": null, \"blas_error\": " + jsonString(blas.error) + "}";
  json += ", \"blas\": " + jsonString(blas.version) +
          ", \"blas_core\": " + jsonString(blas.core) +
          ", \"blas_core_reason\": " + jsonString(blas.reason);
  if (blas.smallGemm)
    json += ", \"blas_small_tiles\": {\"below\": " +
            std::to_string(blas.smallTileWork) +
            ", \"blas\": " + jsonString(blas.smallVersion) +
            ", \"blas_core\": " + jsonString(blas.smallCore) +
            ", \"blas_core_reason\": " + jsonString(blas.smallReason) +
            (blas.smallLeadingMultiple
                 ? ", \"leading_multiple\": " +
                       std::to_string(blas.smallLeadingMultiple)
                 : std::string()) +
            "}";
  return json + "}";
}
