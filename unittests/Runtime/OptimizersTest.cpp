//===- OptimizersTest.cpp - In-place optimizer updates of the runtime -----===//
//
// Part of the Parallax project.
//
// The runtime's update entry points against hand-computed PyTorch
// formulas, dense and row-sparse (lazy), called as generated code calls
// them: memrefs as (rank, descriptor).
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

/// A rank-2 strided memref descriptor over a vector, as MLIR lays it out.
template <typename T> struct Memref2D {
  T *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
  Memref2D(std::vector<T> &data, int64_t rows, int64_t cols)
      : allocated(data.data()), aligned(data.data()),
        offset(0), sizes{rows, cols}, strides{cols, 1} {}
};

template <typename T> struct Memref1D {
  T *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
  explicit Memref1D(std::vector<T> &data)
      : allocated(data.data()), aligned(data.data()),
        offset(0), sizes{static_cast<int64_t>(data.size())}, strides{1} {}
};

/// Defaults of the tests: lr 0.1, momentum 0, betas 0.9 and 0.999, epsilon
/// 1e-8, no decay, no Nesterov.
struct Hyper : ParallaxHyperParameters {
  Hyper() : ParallaxHyperParameters{0.1, 0, 0.9, 0.999, 1e-8, 0, 0, 0} {}
};

void setStep(int64_t step) { parallax_rt_load_batch(step - 1); }

TEST(OptimizersTest, SgdWithWeightDecay) {
  std::vector<float> w{1.0f, -2.0f}, g{0.5f, 0.25f};
  Memref1D<float> wd(w), gd(g);
  Hyper h;
  h.weight_decay = 0.1;
  parallax_rt_update_sgd_f32("w", 1, &wd, 1, &gd, &h);
  EXPECT_FLOAT_EQ(w[0], 1.0f - 0.1f * (0.5f + 0.1f * 1.0f));
  EXPECT_FLOAT_EQ(w[1], -2.0f - 0.1f * (0.25f - 0.1f * 2.0f));
}

TEST(OptimizersTest, MomentumAndNesterovOverTwoSteps) {
  for (bool nesterov : {false, true}) {
    std::vector<float> w{1.0f}, v{0.0f}, g{0.5f};
    Memref1D<float> wd(w), vd(v), gd(g);
    Hyper h;
    h.momentum = 0.9;
    h.nesterov = nesterov;
    float expectW = 1.0f, expectV = 0.0f;
    for (int step = 0; step < 2; ++step) {
      parallax_rt_update_momentum_f32("w", 1, &wd, 1, &vd, 1, &gd, &h);
      expectV = 0.9f * expectV + 0.5f; // torch: buf = g on the first step
      expectW -= 0.1f * (nesterov ? 0.5f + 0.9f * expectV : expectV);
    }
    EXPECT_FLOAT_EQ(v[0], expectV);
    EXPECT_FLOAT_EQ(w[0], expectW);
  }
}

TEST(OptimizersTest, SparseAdagradSumsRepeatedRowsAndMatchesDense) {
  // 4 rows of 2; gradient rows for ids {2, 0, 2}: row 2 appears twice.
  std::vector<float> w{1, 2, 3, 4, 5, 6, 7, 8}, sum(8, 0.0f);
  std::vector<float> wDense = w, sumDense = sum;
  std::vector<int64_t> ids{2, 0, 2};
  std::vector<float> rows{0.5f, 1.0f, -1.0f, 0.25f, 0.5f, 1.0f};
  std::vector<float> dense{-1.0f, 0.25f, 0, 0, 1.0f, 2.0f, 0, 0};
  Memref2D<float> wd(w, 4, 2), sd(sum, 4, 2), rd(rows, 3, 2);
  Memref2D<float> wdd(wDense, 4, 2), sdd(sumDense, 4, 2), gdd(dense, 4, 2);
  Memref1D<int64_t> idd(ids);
  Hyper h;
  h.epsilon = 1e-10;
  h.lr_decay = 0.5;
  setStep(3); // clr = lr / (1 + 2 * lr_decay)
  parallax_rt_update_adagrad_sparse_f32("emb", 2, &wd, 2, &sd, 1, &idd, 2, &rd,
                                        &h);
  parallax_rt_update_adagrad_f32("emb", 2, &wdd, 2, &sdd, 2, &gdd, &h);
  setStep(1);
  // Untouched rows 1 and 3 are unchanged; for Adagrad lazy == dense.
  EXPECT_EQ(w[2], 3.0f);
  EXPECT_EQ(w[7], 8.0f);
  EXPECT_FLOAT_EQ(sum[4], 1.0f); // (0.5 + 0.5)^2
  EXPECT_FLOAT_EQ(w[4], 5.0f - 0.05f * 1.0f / (1.0f + 1e-10f));
  for (int i = 0; i < 8; ++i) {
    EXPECT_FLOAT_EQ(w[i], wDense[i]) << i;
    EXPECT_FLOAT_EQ(sum[i], sumDense[i]) << i;
  }
}

TEST(OptimizersTest, AdamBiasCorrectionAndAdamWDecay) {
  for (bool decoupled : {false, true}) {
    std::vector<float> w{1.0f}, m{0.0f}, v{0.0f}, g{0.5f};
    Memref1D<float> wd(w), md(m), vd(v), gd(g);
    Hyper h;
    h.lr = 0.01;
    h.weight_decay = 0.1;
    setStep(1);
    (decoupled ? parallax_rt_update_adamw_f32 : parallax_rt_update_adam_f32)(
        "w", 1, &wd, 1, &md, 1, &vd, 1, &gd, &h);
    float grad = decoupled ? 0.5f : 0.5f + 0.1f * 1.0f;
    float w0 = decoupled ? 1.0f * (1.0f - 0.01f * 0.1f) : 1.0f;
    float mExpect = 0.1f * grad, vExpect = 0.001f * grad * grad;
    // Step 1: m / (1 - beta1) = grad, sqrt(v / (1 - beta2)) = |grad|.
    EXPECT_NEAR(m[0], mExpect, 1e-6);
    EXPECT_NEAR(v[0], vExpect, 1e-8);
    EXPECT_NEAR(w[0], w0 - 0.01f * grad / (std::fabs(grad) + 1e-8f), 1e-6);
  }
}

TEST(OptimizersTest, LazyAdamLeavesRowsWithoutGradientAlone) {
  // Dense Adam would keep moving row 1 (its m decays but stays non-zero);
  // the lazy update leaves the row and its state as they are.
  std::vector<float> w{1, 1}, m{0.5f, 0.5f}, v{0.25f, 0.25f};
  std::vector<int64_t> ids{0};
  std::vector<float> rows{0.5f};
  Memref2D<float> wd(w, 2, 1), md(m, 2, 1), vd(v, 2, 1), rd(rows, 1, 1);
  Memref1D<int64_t> idd(ids);
  Hyper h;
  setStep(2);
  parallax_rt_update_adam_sparse_f32("emb", 2, &wd, 2, &md, 2, &vd, 1, &idd, 2,
                                     &rd, &h);
  setStep(1);
  EXPECT_NE(w[0], 1.0f);
  EXPECT_EQ(w[1], 1.0f);
  EXPECT_EQ(m[1], 0.5f);
  EXPECT_EQ(v[1], 0.25f);
}

TEST(OptimizersTest, NegativeIdIsItsRowFromTheEndAndSumsWithIt) {
  // Ids -1 and 1 of a 2-row table are one row: Adagrad sees the summed
  // gradient once, as a dense update by the same gradient would.
  std::vector<float> w{1, 2}, sum(2, 0.0f), wDense = w, sumDense = sum;
  std::vector<int64_t> ids{-1, 1};
  std::vector<float> rows{0.5f, 0.25f}, dense{0.0f, 0.75f};
  Memref2D<float> wd(w, 2, 1), sd(sum, 2, 1), rd(rows, 2, 1);
  Memref1D<int64_t> idd(ids);
  Memref1D<float> wdd(wDense), sdd(sumDense), gd(dense);
  Hyper h;
  parallax_rt_update_adagrad_sparse_f32("emb", 2, &wd, 2, &sd, 1, &idd, 2, &rd,
                                        &h);
  parallax_rt_update_adagrad_f32("emb", 1, &wdd, 1, &sdd, 1, &gd, &h);
  EXPECT_EQ(w, wDense);
  EXPECT_EQ(sum, sumDense);
}

TEST(OptimizersTest, RowSegmentsSortStablyByRow) {
  // Rows of ids {2, -4, 2, 3, 0} in a 4-row table: 2, 0, 2, 3, 0.
  std::vector<int64_t> ids{2, -4, 2, 3, 0}, order(5, -1), starts(6, -1),
      targets(5, -1);
  Memref1D<int64_t> idd(ids), od(order), sd(starts), td(targets);
  int64_t count =
      parallax_rt_row_segments("emb", 4, 1, &idd, 1, &od, 1, &sd, 1, &td);
  EXPECT_EQ(count, 3);
  EXPECT_EQ(order, (std::vector<int64_t>{1, 4, 0, 2, 3}));
  EXPECT_EQ(std::vector<int64_t>(targets.begin(), targets.begin() + 3),
            (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(std::vector<int64_t>(starts.begin(), starts.begin() + 4),
            (std::vector<int64_t>{0, 2, 4, 5}));
}

TEST(OptimizersDeathTest, RowSegmentsNameTheVariableOfABadId) {
  std::vector<int64_t> ids{1, -3}, order(2), starts(3), targets(2);
  Memref1D<int64_t> idd(ids), od(order), sd(starts), td(targets);
  EXPECT_EXIT(
      parallax_rt_row_segments("emb", 2, 1, &idd, 1, &od, 1, &sd, 1, &td),
      ::testing::ExitedWithCode(1),
      "row index -3 is out of range for 'emb', which has 2 rows");
}

TEST(OptimizersDeathTest, OutOfRangeRowNamesTheVariable) {
  std::vector<float> w(4, 0.0f), sum(4, 0.0f), rows{1, 1};
  std::vector<int64_t> ids{5};
  Memref2D<float> wd(w, 2, 2), sd(sum, 2, 2), rd(rows, 1, 2);
  Memref1D<int64_t> idd(ids);
  Hyper h;
  EXPECT_EXIT(parallax_rt_update_adagrad_sparse_f32("emb", 2, &wd, 2, &sd, 1,
                                                    &idd, 2, &rd, &h),
              ::testing::ExitedWithCode(1),
              "row index 5 is out of range for 'emb', which has 2 rows");
}

} // namespace
