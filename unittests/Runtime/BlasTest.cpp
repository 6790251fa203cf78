//===- BlasTest.cpp - Matrix products cut into tiles ----------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "Threads.h"
#include "parallax/Runtime/Runtime.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace parallax::runtime;

namespace {

struct Shape {
  int64_t m, n, k;
  bool transposeA, transposeB;
};

/// "300x5000x40_Bt": the test's name and its printed parameter (gtest's
/// default prints the struct's bytes, padding included, which differ from
/// one run to another and so did the ctest names).
std::string describe(const Shape &s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k) + (s.transposeA ? "_At" : "") +
         (s.transposeB ? "_Bt" : "");
}

void PrintTo(const Shape &s, std::ostream *os) { *os << describe(s); }

/// Row-major A (m x k) and B (k x n), or their transposes read through
/// swapped strides, and C (m x n) as the runtime's products take them.
struct Operands {
  StridedMemRefType<float, 2> A, B, C;
};

Operands viewOperands(const Shape &s, const std::vector<float> &a,
                      const std::vector<float> &b, std::vector<float> &c) {
  auto view = [](const std::vector<float> &data, int64_t rows, int64_t cols,
                 bool transposed) {
    // A transposed operand is the row-major cols x rows matrix read with
    // swapped strides.
    float *p = const_cast<float *>(data.data());
    return transposed
               ? StridedMemRefType<float, 2>{p, p, 0, {rows, cols}, {1, rows}}
               : StridedMemRefType<float, 2>{p, p, 0, {rows, cols}, {cols, 1}};
  };
  return {view(a, s.m, s.k, s.transposeA), view(b, s.k, s.n, s.transposeB),
          view(c, s.m, s.n, false)};
}

/// C = start + A B through parallax_rt_matmul_f32 (the runtime accumulates
/// into C, as linalg does), A and B row-major or viewed transposed; with
/// `overwrite`, C = A B through parallax_rt_matmul_into_f32 (C's old
/// contents, `start`, never read).
std::vector<float> product(const Shape &s, const std::vector<float> &a,
                           const std::vector<float> &b,
                           std::vector<float> start, bool overwrite = false) {
  Operands o = viewOperands(s, a, b, start);
  if (overwrite)
    parallax_rt_matmul_into_f32(2, &o.A, 2, &o.B, 2, &o.C);
  else
    parallax_rt_matmul_f32(2, &o.A, 2, &o.B, 2, &o.C);
  return start;
}

std::vector<float> product(const Shape &s, const std::vector<float> &a,
                           const std::vector<float> &b, float start = 0.5f,
                           bool overwrite = false) {
  return product(s, a, b, std::vector<float>(s.m * s.n, start), overwrite);
}

/// A (m x k) and B (k x n), uniform in [-1, 1).
std::pair<std::vector<float>, std::vector<float>>
randomOperands(const Shape &s, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> a(s.m * s.k), b(s.k * s.n);
  for (float &x : a)
    x = value(rng);
  for (float &x : b)
    x = value(rng);
  return {a, b};
}

class BlasTest : public testing::TestWithParam<Shape> {
protected:
  void SetUp() override {
    if (!blasLibrary().error.empty())
      GTEST_SKIP() << blasLibrary().error;
  }
};

TEST_P(BlasTest, TilesGiveTheProductOnAnyThreadCount) {
  const Shape &s = GetParam();
  auto [a, b] = randomOperands(s, 7);
  configureThreads(1);
  std::vector<float> one = product(s, a, b);
  configureThreads(3);
  std::vector<float> three = product(s, a, b);
  configureThreads(0);
  // Every element by the same call, whatever the thread count.
  EXPECT_EQ(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)),
            0);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double want = 0.5;
      for (int64_t p = 0; p < s.k; ++p)
        want += double(s.transposeA ? a[p * s.m + i] : a[i * s.k + p]) *
                double(s.transposeB ? b[j * s.k + p] : b[p * s.n + j]);
      ASSERT_NEAR(one[i * s.n + j], want, 1e-4 * std::sqrt(double(s.k)))
          << "element (" << i << ", " << j << ")";
    }
}

// C = A B over whatever C held (NaN here) is C = 0, then C += A B, bit
// for bit (up to the sign of zero), on any thread count: the fill before a
// product can go.
TEST_P(BlasTest, OverwritingIsAccumulatingOntoZeros) {
  const Shape &s = GetParam();
  auto [a, b] = randomOperands(s, 11);
  for (int threads : {1, 3}) {
    configureThreads(threads);
    std::vector<float> accumulated = product(s, a, b, 0.0f);
    std::vector<float> overwritten = product(s, a, b, NAN, true);
    for (size_t i = 0; i < accumulated.size(); ++i)
      ASSERT_EQ(accumulated[i], overwritten[i])
          << "element " << i << ", " << threads << " threads";
  }
  configureThreads(0);
}

// C = A B + bias over whatever C held (NaN here) is the bias broadcast
// into C, then C += A B, bit for bit, along the columns or the rows, on
// any thread count: the broadcast before a product can go.
TEST_P(BlasTest, BiasStartIsAccumulatingOntoTheBroadcast) {
  const Shape &s = GetParam();
  auto [a, b] = randomOperands(s, 13);
  for (bool perColumn : {true, false}) {
    // Every other element of a longer buffer: a strided bias.
    std::vector<float> bias(2 * (perColumn ? s.n : s.m));
    for (size_t i = 0; i < bias.size(); ++i)
      bias[i] = 0.25f * float(i % 7) - 0.5f;
    std::vector<float> broadcast(s.m * s.n);
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j)
        broadcast[i * s.n + j] = bias[2 * (perColumn ? j : i)];
    StridedMemRefType<float, 1> biasView{
        bias.data(), bias.data(), 0, {int64_t(bias.size() / 2)}, {2}};
    for (int threads : {1, 3}) {
      configureThreads(threads);
      std::vector<float> accumulated = product(s, a, b, broadcast);
      std::vector<float> started(s.m * s.n, NAN);
      Operands o = viewOperands(s, a, b, started);
      parallax_rt_matmul_bias_f32(2, &o.A, 2, &o.B, 1, &biasView, 2, &o.C,
                                  perColumn);
      for (size_t i = 0; i < accumulated.size(); ++i)
        ASSERT_EQ(accumulated[i], started[i])
            << "element " << i << ", " << threads << " threads, bias along "
            << (perColumn ? "columns" : "rows");
    }
  }
  configureThreads(0);
}

// Single tiles, tiles along one edge, a grid of tiles with ragged edges,
// transposed operands, a product large enough for 512-wide tiles, and
// products of few tiles cut along their depth too (one block in 16 slices;
// two ragged blocks of transposed operands in 4 slices), and a product of
// depth 0, which leaves C as it was (or zeroes it, overwriting, or
// writes the bias).
INSTANTIATE_TEST_SUITE_P(Shapes, BlasTest,
                         testing::Values(Shape{1, 1, 1, false, false},
                                         Shape{64, 2048, 576, false, false},
                                         Shape{300, 5000, 40, false, true},
                                         Shape{700, 900, 300, true, false},
                                         Shape{1000, 1100, 200, true, true},
                                         Shape{2048, 2048, 16, false, true},
                                         Shape{64, 64, 20000, false, false},
                                         Shape{300, 100, 5000, true, true},
                                         Shape{5, 7, 0, false, false}),
                         [](const testing::TestParamInfo<Shape> &info) {
                           return describe(info.param);
                         });

} // namespace
