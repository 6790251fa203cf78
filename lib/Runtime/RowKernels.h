//===- RowKernels.h - Row sums and optimizer rules, host and device -------===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// The arithmetic of the parameter store's rows, written once for both
// sides: the host's optimizer kernels (Optimizers.cpp) and the GPU
// parameter store's kernels (RowKernels.cu, compiled to PTX at build time
// and loaded by the CUDA runtime) apply the same rule to each element, so
// a row updated on a GPU owner equals one updated on a CPU owner. The fake
// CUDA driver and PARALLAX_SIMULATE_GPU_COMM run the device kernels
// through these functions too.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_ROWKERNELS_H
#define PARALLAX_LIB_RUNTIME_ROWKERNELS_H

#include <stdint.h>

#ifdef __CUDA__
#define PARALLAX_ROWS_FUNCTION __device__ inline
#else
#define PARALLAX_ROWS_FUNCTION inline
#endif

namespace parallax::runtime::rowkernels {

enum Rule : int32_t { Sgd, Momentum, Adagrad, Adam, AdamW };

/// A rule's hyperparameters for one step, with what the rules derive from
/// the step computed once on the host (ruleScalars in Optimizers.h).
struct RuleScalars {
  float lr, momentum, beta1, beta2, epsilon, weightDecay;
  int32_t nesterov;
  float adagradLr;           // lr / (1 + (step - 1) * lr_decay)
  float adamStep;            // lr / (1 - beta1^step)
  float adamRootCorrection2; // sqrt(1 - beta2^step)
};

/// Element `i` of a variable (`w`, and its state `s0`, `s1` where the rule
/// has them) updated by gradient `g`.
template <Rule rule>
PARALLAX_ROWS_FUNCTION void applyRule(const RuleScalars &h, float *w, float *s0,
                                      float *s1, int64_t i, float g) {
  if constexpr (rule == Sgd) {
    w[i] -= h.lr * (g + h.weightDecay * w[i]);
  } else if constexpr (rule == Momentum) {
    float grad = g + h.weightDecay * w[i];
    s0[i] = h.momentum * s0[i] + grad;
    w[i] -= h.lr * (h.nesterov ? grad + h.momentum * s0[i] : s0[i]);
  } else if constexpr (rule == Adagrad) {
    float grad = g + h.weightDecay * w[i];
    s0[i] += grad * grad;
    w[i] -= h.adagradLr * grad / (__builtin_sqrtf(s0[i]) + h.epsilon);
  } else {
    float grad = g;
    if constexpr (rule == AdamW)
      w[i] *= 1.0f - h.lr * h.weightDecay;
    else
      grad += h.weightDecay * w[i];
    s0[i] = h.beta1 * s0[i] + (1.0f - h.beta1) * grad;
    s1[i] = h.beta2 * s1[i] + (1.0f - h.beta2) * grad * grad;
    w[i] -= h.adamStep * s0[i] /
            (__builtin_sqrtf(s1[i]) / h.adamRootCorrection2 + h.epsilon);
  }
}

PARALLAX_ROWS_FUNCTION void applyRule(Rule rule, const RuleScalars &h, float *w,
                                      float *s0, float *s1, int64_t i,
                                      float g) {
  switch (rule) {
  case Sgd:
    return applyRule<Sgd>(h, w, s0, s1, i, g);
  case Momentum:
    return applyRule<Momentum>(h, w, s0, s1, i, g);
  case Adagrad:
    return applyRule<Adagrad>(h, w, s0, s1, i, g);
  case Adam:
    return applyRule<Adam>(h, w, s0, s1, i, g);
  case AdamW:
    return applyRule<AdamW>(h, w, s0, s1, i, g);
  }
}

/// Rows summed by segment: target row s is `scale` times the sum of the
/// source rows positions[offsets[s]] .. positions[offsets[s+1] - 1], in
/// that order; without `offsets`, row s is source row positions[s] times
/// `scale` (a gather); without `positions` either, source row s. A
/// segment's first row is added to zero, so a sum in the same order
/// equals the host's bit for bit.
struct RowSum {
  const float *source;
  const int64_t *positions; // or null: position t is t
  const int64_t *offsets;   // segments + 1 entries, or null
  float *target;
  int64_t segments, width;
  float scale;
};

/// The sum of element `j` of segment `s` (times the scale).
PARALLAX_ROWS_FUNCTION float segmentSum(const RowSum &a, int64_t s, int64_t j) {
  int64_t begin = a.offsets ? a.offsets[s] : s;
  int64_t end = a.offsets ? a.offsets[s + 1] : s + 1;
  float total = 0.0f;
  for (int64_t t = begin; t < end; ++t)
    total += a.source[(a.positions ? a.positions[t] : t) * a.width + j];
  return a.scale == 1.0f ? total : total * a.scale;
}

/// Element i of the target (i < segments * width).
PARALLAX_ROWS_FUNCTION void sumRowsElement(const RowSum &a, int64_t i) {
  a.target[i] = segmentSum(a, i / a.width, i % a.width);
}

/// The lazy update of `rows` of a variable: each segment of `gradient`
/// (its target unused) summed, then applied to variable row rows[s] (row s
/// without `rows`: consecutive rows from `w`).
struct RowUpdate {
  RowSum gradient;
  const int64_t *rows; // or null
  float *w, *s0, *s1;
  Rule rule;
  RuleScalars h;
};

/// Element i of the updated rows (i < gradient.segments * gradient.width).
PARALLAX_ROWS_FUNCTION void updateRowsElement(const RowUpdate &a, int64_t i) {
  int64_t width = a.gradient.width, s = i / width, j = i % width;
  applyRule(a.rule, a.h, a.w, a.s0, a.s1, (a.rows ? a.rows[s] : s) * width + j,
            segmentSum(a.gradient, s, j));
}

#ifndef __CUDA__
/// The kernels' elements one after the other, for hosts that stand in for
/// a GPU (the fake driver, PARALLAX_SIMULATE_GPU_COMM).
inline void sumRowsOnHost(const RowSum &a) {
  for (int64_t i = 0; i < a.segments * a.width; ++i)
    sumRowsElement(a, i);
}
inline void updateRowsOnHost(const RowUpdate &a) {
  for (int64_t i = 0; i < a.gradient.segments * a.gradient.width; ++i)
    updateRowsElement(a, i);
}
#endif

// The kernels take these by value: the host (GCC or clang, x86-64 or
// AArch64) and NVPTX must lay them out alike.
static_assert(sizeof(RowSum) == 56 && sizeof(RuleScalars) == 40 &&
                  sizeof(RowUpdate) == 136,
              "the row kernels' arguments changed layout");

/// The kernels' names in the PTX module (RowKernels.cu); each takes its
/// struct by value and covers `segments * width` elements.
constexpr const char *kSumRowsKernel = "parallax_rows_sum";
constexpr const char *kUpdateRowsKernel = "parallax_rows_update";

} // namespace parallax::runtime::rowkernels

#endif // PARALLAX_LIB_RUNTIME_ROWKERNELS_H
