//===- CpuKernels.cpp - The CPU's features and the BLAS kernels -----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "Support.h"
#include "Threads.h"
#include "parallax/Support/FileNames.h"

#include <cstdint>
#include <cstdlib>
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

namespace {

BlasLibrary load() {
  BlasLibrary blas;
  CpuFeatures cpu = detectCpuFeatures();
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
  blas.sgemm = reinterpret_cast<SgemmFn>(dlsym(library, "cblas_sgemm"));
  auto coreName = reinterpret_cast<const char *(*)()>(
      dlsym(library, "openblas_get_corename"));
  auto config = reinterpret_cast<const char *(*)()>(
      dlsym(library, "openblas_get_config"));
  if (!blas.sgemm || !coreName || !config) {
    blas.sgemm = nullptr;
    blas.error = "libopenblas.so.0 is not OpenBLAS (it lacks cblas_sgemm, "
                 "openblas_get_corename or openblas_get_config)";
    return blas;
  }
  // A library the process had loaded before ignored that variable.
  if (auto setThreads = reinterpret_cast<void (*)(int)>(
          dlsym(library, "openblas_set_num_threads")))
    setThreads(1);
  blas.core = coreName();
  blas.config = config();
  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ...": its first two words.
  size_t space = blas.config.find(' ');
  blas.version = blas.config.substr(
      0, space == std::string::npos ? space : blas.config.find(' ', space + 1));
  if (!requested.empty() && strcasecmp(blas.core.c_str(), requested.c_str())) {
    if (requestedByUser) {
      blas.sgemm = nullptr;
      blas.error = "OpenBLAS core '" + requested + "' (" + blas.reason +
                   ") is not one " + blas.version + " has: it chose '" +
                   blas.core + "'";
      return blas;
    }
    blas.reason += "; " + blas.version + " has no " + requested + " kernels";
  }
  return blas;
}

} // namespace

const BlasLibrary &parallax::runtime::blasLibrary() {
  static const BlasLibrary blas = load();
  return blas;
}

const BlasLibrary &parallax::runtime::requireBlasLibrary() {
  const BlasLibrary &blas = blasLibrary();
  if (!blas.sgemm)
    die(blas.error);
  return blas;
}

std::string parallax::runtime::describeKernels() {
  // A GPU program's products run on cuBLAS: the CPU's library is not
  // loaded.
  if (const char *gpu = device())
    return "GPU: " + std::string(gpu) + " (kernels and cuBLAS); host " +
           describeThreads();
  const BlasLibrary &blas = blasLibrary();
  std::string cpu = "CPU: " + blas.cpu;
  std::string threads = "; " + describeThreads();
  if (!blas.sgemm)
    return cpu + threads + "; BLAS: none (" + blas.error + ")";
  return cpu + threads + "; BLAS: " + blas.version + ", " + blas.core +
         " kernels (" + blas.reason + ")";
}

std::string parallax::runtime::kernelsJson() {
  if (const char *gpu = device())
    return "{\"gpu\": " + jsonString(gpu) +
           ", \"blas\": \"cuBLAS\", \"threads\": " +
           std::to_string(workerThreads()) + "}";
  const BlasLibrary &blas = blasLibrary();
  std::string json = "{\"cpu\": " + jsonString(blas.cpu) +
                     ", \"threads\": " + std::to_string(workerThreads());
  if (!blas.sgemm)
    return json +
           ", \"blas\": null, \"blas_error\": " + jsonString(blas.error) + "}";
  return json + ", \"blas\": " + jsonString(blas.version) +
         ", \"blas_core\": " + jsonString(blas.core) +
         ", \"blas_core_reason\": " + jsonString(blas.reason) + "}";
}
