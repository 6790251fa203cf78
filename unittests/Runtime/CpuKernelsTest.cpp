//===- CpuKernelsTest.cpp - CPU features and the BLAS kernels chosen ------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <gtest/gtest.h>

#include <strings.h>

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

TEST(CpuKernelsTest, LoadsOpenBlasWithTheChosenKernels) {
  // This process sets neither PARALLAX_BLAS_CORE nor OPENBLAS_CORETYPE
  // (ctest's environment does not), so the choice is by features.
  if (std::getenv("PARALLAX_BLAS_CORE") || std::getenv("OPENBLAS_CORETYPE"))
    GTEST_SKIP() << "a kernel choice is set in the environment";
  const BlasLibrary &blas = blasLibrary();
  ASSERT_NE(blas.sgemm, nullptr) << blas.error;
  EXPECT_EQ(blas.version.rfind("OpenBLAS ", 0), 0u) << blas.version;
  std::string wanted = openBlasCoreFor(detectCpuFeatures());
  bool libraryHasIt = blas.reason.find("kernels") == std::string::npos;
  if (!wanted.empty() && libraryHasIt) {
    EXPECT_EQ(strcasecmp(blas.core.c_str(), wanted.c_str()), 0)
        << blas.core << " vs " << wanted;
  }
  // C = A B with A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]].
  float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, c[4] = {};
  blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0f, a, 2, b,
             2, 0.0f, c, 2);
  EXPECT_EQ(c[0], 19);
  EXPECT_EQ(c[1], 22);
  EXPECT_EQ(c[2], 43);
  EXPECT_EQ(c[3], 50);
  EXPECT_NE(describeKernels().find(blas.core + " kernels"), std::string::npos);
}

} // namespace
