//===- CpuKernelsTest.cpp - CPU features and the BLAS kernels chosen ------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <strings.h>
#include <tuple>

using namespace parallax::runtime;

namespace {

CpuFeatures avx512() {
  CpuFeatures cpu;
  cpu.avx = cpu.avx2 = cpu.fma = cpu.avx512 = true;
  return cpu;
}

CpuFeatures avx2() {
  CpuFeatures cpu;
  cpu.avx = cpu.avx2 = cpu.fma = true;
  return cpu;
}

TEST(CpuKernelsTest, CoreFollowsFeaturesNotModel) {
  EXPECT_EQ(openBlasCoreFor(avx512()), "SkylakeX");
  CpuFeatures bf16 = avx512();
  bf16.avx512bf16 = bf16.amx = true;
  EXPECT_EQ(openBlasCoreFor(bf16), "SkylakeX");
  EXPECT_EQ(openBlasCoreFor(avx2()), "Haswell");
  CpuFeatures avxOnly;
  avxOnly.avx = true;
  EXPECT_EQ(openBlasCoreFor(avxOnly), "SandyBridge");
  // AVX2 without FMA (no such Intel CPU, but a VM may hide FMA).
  CpuFeatures noFma = avxOnly;
  noFma.avx2 = true;
  EXPECT_EQ(openBlasCoreFor(noFma), "SandyBridge");
  EXPECT_EQ(openBlasCoreFor(CpuFeatures()), "");
}

TEST(CpuKernelsTest, CoresNeedTheirInstructions) {
  EXPECT_TRUE(cpuCanRun(avx512(), "SkylakeX"));
  EXPECT_TRUE(cpuCanRun(avx512(), "skylakex"));
  EXPECT_FALSE(cpuCanRun(avx2(), "SkylakeX"));
  EXPECT_FALSE(cpuCanRun(avx2(), "Cooperlake"));
  EXPECT_TRUE(cpuCanRun(avx2(), "Haswell"));
  EXPECT_FALSE(cpuCanRun(CpuFeatures(), "Haswell"));
  EXPECT_FALSE(cpuCanRun(CpuFeatures(), "SandyBridge"));
  EXPECT_TRUE(cpuCanRun(CpuFeatures(), "Prescott"));
  EXPECT_EQ(instructionsNeededBy("Zen"), "AVX2+FMA");
  EXPECT_EQ(instructionsNeededBy("NoSuchCore"), "");
}

TEST(CpuKernelsTest, Descriptions) {
  CpuFeatures all = avx512();
  all.avx512bf16 = all.amx = true;
  EXPECT_EQ(describeCpu(all), "AVX-512 (+BF16, AMX)");
  EXPECT_EQ(describeCpu(avx512()), "AVX-512");
  EXPECT_EQ(describeCpu(avx2()), "AVX2+FMA");
  EXPECT_EQ(describeCpu(CpuFeatures()), "SSE");
}

#if defined(__x86_64__)
TEST(CpuKernelsTest, DetectionAgreesWithTheCompiler) {
  CpuFeatures cpu = detectCpuFeatures();
  EXPECT_EQ(cpu.avx, static_cast<bool>(__builtin_cpu_supports("avx")));
  EXPECT_EQ(cpu.avx2, static_cast<bool>(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(cpu.fma, static_cast<bool>(__builtin_cpu_supports("fma")));
  bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  EXPECT_EQ(cpu.avx512, avx512);
}
#endif

TEST(CpuKernelsTest, LoadsTheChosenLibraryWithTheChosenKernels) {
  // ctest sets no kernel choice but, for a second run of these tests,
  // PARALLAX_BLAS.
  if (std::getenv("PARALLAX_BLAS_CORE") || std::getenv("OPENBLAS_CORETYPE"))
    GTEST_SKIP() << "a kernel choice is set in the environment";
  const char *setting = std::getenv("PARALLAX_BLAS");
  std::string mode = setting ? setting : "auto";
  const BlasLibrary &blas = blasLibrary();
  if (mode == "onednn" && !blas.gemm)
    GTEST_SKIP() << blas.error;
  ASSERT_NE(blas.gemm, nullptr) << blas.error;
  bool oneDnn = blas.version.rfind("oneDNN ", 0) == 0;
  if (mode == "openblas" || !oneDnn) {
    EXPECT_NE(mode, "onednn");
    EXPECT_EQ(blas.version.rfind("OpenBLAS ", 0), 0u) << blas.version;
    std::string wanted = openBlasCoreFor(detectCpuFeatures());
    bool libraryHasIt = blas.reason.find("kernels") == std::string::npos;
    if (!wanted.empty() && libraryHasIt) {
      EXPECT_EQ(strcasecmp(blas.core.c_str(), wanted.c_str()), 0)
          << blas.core << " vs " << wanted;
    }
    // Under auto, OpenBLAS only where oneDNN could not be used.
    if (mode == "auto") {
      EXPECT_NE(blas.reason.find("not oneDNN: "), std::string::npos)
          << blas.reason;
    }
  } else {
    EXPECT_NE(mode, "openblas");
    EXPECT_NE(blas.core.find("avx"), std::string::npos) << blas.core;
    // Small tiles go to OpenBLAS under auto, never when oneDNN is asked for.
    if (mode == "onednn") {
      EXPECT_EQ(blas.smallGemm, nullptr);
    } else if (blas.smallGemm) {
      EXPECT_EQ(blas.smallVersion.rfind("OpenBLAS ", 0), 0u);
    }
    EXPECT_EQ(blas.gemmFor(64, 128, 64, 100, 100, 100),
              blas.smallGemm ? blas.smallGemm : blas.gemm);
    EXPECT_EQ(blas.gemmFor(128, 128, 64, 100, 100, 100), blas.gemm);
    // Rows of a multiple of 256 elements go to OpenBLAS under auto where
    // oneDNN has only AVX2 kernels, and only there.
    bool avx2Only = blas.core.find("avx512") == std::string::npos;
    EXPECT_EQ(blas.smallLeadingMultiple,
              mode == "auto" && blas.smallGemm && avx2Only ? 256 : 0);
    for (auto [lda, ldb, ldc] :
         {std::tuple<int64_t, int64_t, int64_t>{1024, 100, 100},
          {100, 2048, 100},
          {100, 100, 512}})
      EXPECT_EQ(blas.gemmFor(128, 128, 64, lda, ldb, ldc),
                blas.smallLeadingMultiple ? blas.smallGemm : blas.gemm)
          << lda << " " << ldb << " " << ldc;
  }
  // C += A B with A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]], and with A
  // read transposed.
  float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, c[4] = {1, 1, 1, 1};
  blas.gemm(false, false, 2, 2, 2, a, 2, b, 2, 1.0f, c, 2);
  EXPECT_EQ(c[0], 20);
  EXPECT_EQ(c[1], 23);
  EXPECT_EQ(c[2], 44);
  EXPECT_EQ(c[3], 51);
  float t[4] = {};
  blas.gemm(true, false, 2, 2, 2, a, 2, b, 2, 1.0f, t, 2);
  EXPECT_EQ(t[0], 26);
  EXPECT_EQ(t[1], 30);
  EXPECT_EQ(t[2], 38);
  EXPECT_EQ(t[3], 44);
  // beta 0: C = A B, its old contents (here NaN) never read.
  float o[4] = {NAN, NAN, NAN, NAN};
  blas.gemm(false, false, 2, 2, 2, a, 2, b, 2, 0.0f, o, 2);
  EXPECT_EQ(o[0], 19);
  EXPECT_EQ(o[1], 22);
  EXPECT_EQ(o[2], 43);
  EXPECT_EQ(o[3], 50);
  EXPECT_NE(
      describeKernels().find(blas.version + ", " + blas.core + " kernels"),
      std::string::npos)
      << describeKernels();
}

} // namespace
