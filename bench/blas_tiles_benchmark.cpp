//===- blas_tiles_benchmark.cpp - oneDNN against OpenBLAS per tile --------===//
//
// Part of the Parallax project.
//
// Times one tile product C += A B (row-major, f32) through the two
// libraries the runtime loads, with the runtime's own wrappers (so each
// call pays what a tile of a program pays): oneDNN's dnnl_sgemm and
// OpenBLAS's cblas_sgemm, on shapes from 8^3 to 1024^3 and the skinny ones
// of the example models' tiles. Best of 3 rounds that alternate the
// libraries, each round long enough to take about 0.1 s per shape. The
// crossover is where the runtime's default (PARALLAX_BLAS=auto) moves a
// tile from OpenBLAS to oneDNN (CpuKernels.cpp). One thread. Never asserts
// timings.
//
// Usage: build/bin/parallax-blas-tiles-bench (with both libraries
// installed: Debian's libdnnl2 and libopenblas0)
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace parallax::runtime;

namespace {

double secondsPerCall(TileGemmFn gemm, int64_t m, int64_t n, int64_t k,
                      int64_t calls, const std::vector<float> &a,
                      const std::vector<float> &b, std::vector<float> &c) {
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i)
    gemm(false, false, m, n, k, a.data(), k, b.data(), n, 1.0f, c.data(), n);
  std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count() / calls;
}

} // namespace

int main() {
  setenv("PARALLAX_BLAS", "auto", /*overwrite=*/1);
  const BlasLibrary &blas = blasLibrary();
  if (!blas.gemm || !blas.smallGemm) {
    std::fprintf(stderr,
                 "parallax-blas-tiles-bench: needs oneDNN and OpenBLAS "
                 "(the runtime chose: %s)\n",
                 describeKernels().c_str());
    return 2;
  }
  std::printf("%s\n\n", describeKernels().c_str());
  std::printf("%6s %6s %6s %12s %12s %8s %12s %8s %8s\n", "m", "n", "k",
              "mult-adds", "OpenBLAS us", "GFLOP/s", "oneDNN us", "GFLOP/s",
              "ratio");
  const int64_t shapes[][3] = {
      {8, 8, 8},       {16, 16, 16},      {32, 32, 32},    {8, 64, 16},
      {32, 128, 32},   {64, 64, 64},      {64, 128, 64},   {96, 96, 96},
      {128, 128, 64},  {64, 64, 256},     {32, 512, 64},   {128, 128, 128},
      {32, 32, 2048},  {128, 256, 128},   {256, 256, 256}, {320, 512, 128},
      {512, 512, 512}, {1024, 1024, 1024}};
  for (const auto &shape : shapes) {
    int64_t m = shape[0], n = shape[1], k = shape[2];
    std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n, 0.0f);
    int64_t calls = std::max<int64_t>(3, int64_t(5e7) / (m * n * k));
    double openBlas = 1e30, oneDnn = 1e30;
    for (int round = 0; round < 3; ++round) {
      openBlas = std::min(
          openBlas, secondsPerCall(blas.smallGemm, m, n, k, calls, a, b, c));
      oneDnn =
          std::min(oneDnn, secondsPerCall(blas.gemm, m, n, k, calls, a, b, c));
    }
    double flops = 2.0 * m * n * k;
    std::printf("%6ld %6ld %6ld %12ld %12.2f %8.1f %12.2f %8.1f %8.2f\n",
                long(m), long(n), long(k), long(m * n * k), openBlas * 1e6,
                flops / openBlas / 1e9, oneDnn * 1e6, flops / oneDnn / 1e9,
                oneDnn / openBlas);
  }
  std::printf("\nratio: oneDNN's time over OpenBLAS's (below 1: oneDNN "
              "faster); the runtime gives oneDNN tiles of %ld multiply-adds "
              "or more\n",
              long(blas.smallTileWork));
  return 0;
}
