//===- Optimizers.cpp - In-place optimizer updates ------------------------===//
//
// Part of the Parallax project.
//
// The update rules of #parallax.optimizer with PyTorch's semantics, applied
// in place to a variable and its state. One kernel per rule works on a
// contiguous span; a dense update is one span over the whole variable, a
// row-sparse (lazy) update one span per distinct row after summing
// repeated rows.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Descriptor.h"
#include "Support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

using namespace parallax::runtime;

namespace {

struct Hyper {
  float lr, momentum, beta1, beta2, epsilon, weightDecay, lrDecay;
  bool nesterov;
  int64_t step; // 1-based
};

/// The variable and its state tensors, viewed as rows of `width` floats.
struct Slots {
  float *w;
  float *state[2];
};

void sgdKernel(const Slots &s, const float *g, int64_t n, const Hyper &h) {
  float *w = s.w;
  for (int64_t i = 0; i < n; ++i)
    w[i] -= h.lr * (g[i] + h.weightDecay * w[i]);
}

void momentumKernel(const Slots &s, const float *g, int64_t n, const Hyper &h) {
  float *w = s.w, *v = s.state[0];
  for (int64_t i = 0; i < n; ++i) {
    float grad = g[i] + h.weightDecay * w[i];
    v[i] = h.momentum * v[i] + grad;
    w[i] -= h.lr * (h.nesterov ? grad + h.momentum * v[i] : v[i]);
  }
}

void adagradKernel(const Slots &s, const float *g, int64_t n, const Hyper &h) {
  float *w = s.w, *sum = s.state[0];
  float clr = h.lr / (1.0f + static_cast<float>(h.step - 1) * h.lrDecay);
  for (int64_t i = 0; i < n; ++i) {
    float grad = g[i] + h.weightDecay * w[i];
    sum[i] += grad * grad;
    w[i] -= clr * grad / (std::sqrt(sum[i]) + h.epsilon);
  }
}

template <bool decoupled>
void adamKernel(const Slots &s, const float *g, int64_t n, const Hyper &h) {
  float *w = s.w, *m = s.state[0], *v = s.state[1];
  float correction1 = 1.0f - std::pow(h.beta1, static_cast<float>(h.step));
  float correction2 = 1.0f - std::pow(h.beta2, static_cast<float>(h.step));
  float stepSize = h.lr / correction1;
  float rootCorrection2 = std::sqrt(correction2);
  for (int64_t i = 0; i < n; ++i) {
    float grad = g[i];
    if (decoupled)
      w[i] *= 1.0f - h.lr * h.weightDecay;
    else
      grad += h.weightDecay * w[i];
    m[i] = h.beta1 * m[i] + (1.0f - h.beta1) * grad;
    v[i] = h.beta2 * v[i] + (1.0f - h.beta2) * grad * grad;
    w[i] -= stepSize * m[i] / (std::sqrt(v[i]) / rootCorrection2 + h.epsilon);
  }
}

using Kernel = void (*)(const Slots &, const float *, int64_t, const Hyper &);

int64_t countOf(const StridedView &view) {
  return std::accumulate(view.sizes.begin(), view.sizes.end(), int64_t{1},
                         std::multiplies<>());
}

/// A contiguous f32 buffer (generated code passes identity layouts).
float *contiguous(const char *name, const char *what, int64_t rank,
                  void *descriptor) {
  StridedView view = viewDescriptor(rank, descriptor, sizeof(float));
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (view.sizes[d] != 1 && view.strides[d] != expected)
      die(std::string("internal error: the ") + what + " of '" + name +
          "' is not contiguous");
    expected *= view.sizes[d];
  }
  return reinterpret_cast<float *>(view.data);
}

Hyper hyper(double lr, double momentum, double beta1, double beta2,
            double epsilon, double weightDecay, double lrDecay,
            double nesterov) {
  return {static_cast<float>(lr),      static_cast<float>(momentum),
          static_cast<float>(beta1),   static_cast<float>(beta2),
          static_cast<float>(epsilon), static_cast<float>(weightDecay),
          static_cast<float>(lrDecay), nesterov != 0.0,
          parallax_rt_current_step()};
}

void denseUpdate(Kernel kernel, const char *name, int64_t rankW, void *w,
                 int states, void *const *state, int64_t rankG, void *g,
                 const Hyper &h) {
  StridedView view = viewDescriptor(rankW, w, sizeof(float));
  Slots slots{contiguous(name, "variable", rankW, w), {nullptr, nullptr}};
  for (int i = 0; i < states; ++i)
    slots.state[i] = contiguous(name, "optimizer state", rankW, state[i]);
  kernel(slots, contiguous(name, "gradient", rankG, g), countOf(view), h);
}

/// Sums the rows of repeated indices, then applies `kernel` to each
/// distinct row: only rows with a gradient change.
void sparseUpdate(Kernel kernel, const char *name, int64_t rankW, void *w,
                  int states, void *const *state, int64_t rankI, void *ids,
                  int64_t rankV, void *values, const Hyper &h) {
  StridedView view = viewDescriptor(rankW, w, sizeof(float));
  int64_t rows = view.sizes.empty() ? 1 : view.sizes.front();
  int64_t width = rows ? countOf(view) / rows : 0;
  StridedView idView = viewDescriptor(rankI, ids, sizeof(int64_t));
  const int64_t *index = reinterpret_cast<const int64_t *>(idView.data);
  int64_t k = countOf(idView);
  const float *rowValues = contiguous(name, "gradient rows", rankV, values);

  std::vector<int64_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return index[a] < index[b]; });
  Slots base{contiguous(name, "variable", rankW, w), {nullptr, nullptr}};
  for (int i = 0; i < states; ++i)
    base.state[i] = contiguous(name, "optimizer state", rankW, state[i]);
  std::vector<float> summed(width);
  for (int64_t first = 0; first < k;) {
    int64_t row = index[order[first]];
    if (row < 0 || row >= rows)
      die("row index " + std::to_string(row) + " is out of range for '" + name +
          "', which has " + std::to_string(rows) + " rows");
    std::memcpy(summed.data(), rowValues + order[first] * width,
                width * sizeof(float));
    int64_t last = first + 1;
    for (; last < k && index[order[last]] == row; ++last)
      for (int64_t j = 0; j < width; ++j)
        summed[j] += rowValues[order[last] * width + j];
    Slots slots{base.w + row * width,
                {base.state[0] ? base.state[0] + row * width : nullptr,
                 base.state[1] ? base.state[1] + row * width : nullptr}};
    kernel(slots, summed.data(), width, h);
    first = last;
  }
}

} // namespace

// Entry points: (name, variable, state..., gradient | indices + rows,
// hyper-parameters), memrefs as (rank, descriptor). The state memrefs have
// the variable's shape, so their ranks are not needed.
#define PARALLAX_HYPER_PARAMS                                                  \
  double lr, double momentum, double beta1, double beta2, double epsilon,      \
      double weightDecay, double lrDecay, double nesterov
#define PARALLAX_HYPER                                                         \
  hyper(lr, momentum, beta1, beta2, epsilon, weightDecay, lrDecay, nesterov)
#define PARALLAX_DENSE_ARGS int64_t rankG, void *g, PARALLAX_HYPER_PARAMS
#define PARALLAX_SPARSE_ARGS                                                   \
  int64_t rankI, void *ids, int64_t rankV, void *values, PARALLAX_HYPER_PARAMS

extern "C" {

void parallax_rt_update_sgd_f32(const char *name, int64_t rankW, void *w,
                                PARALLAX_DENSE_ARGS) {
  denseUpdate(sgdKernel, name, rankW, w, 0, nullptr, rankG, g, PARALLAX_HYPER);
}
void parallax_rt_update_sgd_sparse_f32(const char *name, int64_t rankW, void *w,
                                       PARALLAX_SPARSE_ARGS) {
  sparseUpdate(sgdKernel, name, rankW, w, 0, nullptr, rankI, ids, rankV, values,
               PARALLAX_HYPER);
}

void parallax_rt_update_momentum_f32(const char *name, int64_t rankW, void *w,
                                     int64_t, void *s0, PARALLAX_DENSE_ARGS) {
  void *state[] = {s0};
  denseUpdate(momentumKernel, name, rankW, w, 1, state, rankG, g,
              PARALLAX_HYPER);
}
void parallax_rt_update_momentum_sparse_f32(const char *name, int64_t rankW,
                                            void *w, int64_t, void *s0,
                                            PARALLAX_SPARSE_ARGS) {
  void *state[] = {s0};
  sparseUpdate(momentumKernel, name, rankW, w, 1, state, rankI, ids, rankV,
               values, PARALLAX_HYPER);
}

void parallax_rt_update_adagrad_f32(const char *name, int64_t rankW, void *w,
                                    int64_t, void *s0, PARALLAX_DENSE_ARGS) {
  void *state[] = {s0};
  denseUpdate(adagradKernel, name, rankW, w, 1, state, rankG, g,
              PARALLAX_HYPER);
}
void parallax_rt_update_adagrad_sparse_f32(const char *name, int64_t rankW,
                                           void *w, int64_t, void *s0,
                                           PARALLAX_SPARSE_ARGS) {
  void *state[] = {s0};
  sparseUpdate(adagradKernel, name, rankW, w, 1, state, rankI, ids, rankV,
               values, PARALLAX_HYPER);
}

void parallax_rt_update_adam_f32(const char *name, int64_t rankW, void *w,
                                 int64_t, void *s0, int64_t, void *s1,
                                 PARALLAX_DENSE_ARGS) {
  void *state[] = {s0, s1};
  denseUpdate(adamKernel<false>, name, rankW, w, 2, state, rankG, g,
              PARALLAX_HYPER);
}
void parallax_rt_update_adam_sparse_f32(const char *name, int64_t rankW,
                                        void *w, int64_t, void *s0, int64_t,
                                        void *s1, PARALLAX_SPARSE_ARGS) {
  void *state[] = {s0, s1};
  sparseUpdate(adamKernel<false>, name, rankW, w, 2, state, rankI, ids, rankV,
               values, PARALLAX_HYPER);
}

void parallax_rt_update_adamw_f32(const char *name, int64_t rankW, void *w,
                                  int64_t, void *s0, int64_t, void *s1,
                                  PARALLAX_DENSE_ARGS) {
  void *state[] = {s0, s1};
  denseUpdate(adamKernel<true>, name, rankW, w, 2, state, rankG, g,
              PARALLAX_HYPER);
}
void parallax_rt_update_adamw_sparse_f32(const char *name, int64_t rankW,
                                         void *w, int64_t, void *s0, int64_t,
                                         void *s1, PARALLAX_SPARSE_ARGS) {
  void *state[] = {s0, s1};
  sparseUpdate(adamKernel<true>, name, rankW, w, 2, state, rankI, ids, rankV,
               values, PARALLAX_HYPER);
}

} // extern "C"
