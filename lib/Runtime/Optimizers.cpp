//===- Optimizers.cpp - In-place optimizer updates ------------------------===//
//
// Part of the Parallax project.
//
// The update rules of #parallax.optimizer with PyTorch's semantics, applied
// in place to a variable and its state. One kernel per rule works on a
// contiguous span; a dense update is one span over the whole variable, a
// row-sparse (lazy) update one span per distinct row after summing
// repeated rows. A push hands the gradient to the parameter store, whose
// servers apply the same kernels to the rows they own.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Descriptor.h"
#include "Optimizers.h"
#include "ParameterStore.h"
#include "Support.h"
#include "Threads.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

using namespace parallax::runtime;

rowkernels::RuleScalars parallax::runtime::ruleScalars(rowkernels::Rule rule,
                                                       const Hyper &h) {
  rowkernels::RuleScalars scalars{h.lr,      h.momentum,    h.beta1,    h.beta2,
                                  h.epsilon, h.weightDecay, h.nesterov, 0.0f,
                                  0.0f,      0.0f};
  if (rule == rowkernels::Adagrad)
    scalars.adagradLr =
        h.lr / (1.0f + static_cast<float>(h.step - 1) * h.lrDecay);
  if (rule == rowkernels::Adam || rule == rowkernels::AdamW) {
    float correction1 = 1.0f - std::pow(h.beta1, static_cast<float>(h.step));
    float correction2 = 1.0f - std::pow(h.beta2, static_cast<float>(h.step));
    scalars.adamStep = h.lr / correction1;
    scalars.adamRootCorrection2 = std::sqrt(correction2);
  }
  return scalars;
}

namespace {

template <rowkernels::Rule rule>
void ruleKernel(const Slots &s, const float *g, int64_t n, const Hyper &h) {
  rowkernels::RuleScalars scalars = ruleScalars(rule, h);
  float *w = s.w, *s0 = s.state[0], *s1 = s.state[1];
  for (int64_t i = 0; i < n; ++i)
    rowkernels::applyRule<rule>(scalars, w, s0, s1, i, g[i]);
}

} // namespace

Kernel parallax::runtime::hostKernel(rowkernels::Rule rule) {
  switch (rule) {
  case rowkernels::Sgd:
    return ruleKernel<rowkernels::Sgd>;
  case rowkernels::Momentum:
    return ruleKernel<rowkernels::Momentum>;
  case rowkernels::Adagrad:
    return ruleKernel<rowkernels::Adagrad>;
  case rowkernels::Adam:
    return ruleKernel<rowkernels::Adam>;
  case rowkernels::AdamW:
    return ruleKernel<rowkernels::AdamW>;
  }
  die("internal error: an unknown update rule");
}

namespace {

Hyper hyper(const ParallaxHyperParameters &p) {
  return {static_cast<float>(p.lr),       static_cast<float>(p.momentum),
          static_cast<float>(p.beta1),    static_cast<float>(p.beta2),
          static_cast<float>(p.epsilon),  static_cast<float>(p.weight_decay),
          static_cast<float>(p.lr_decay), p.nesterov != 0.0,
          parallax_rt_current_step()};
}

/// Elements per chunk of a dense update on the worker's threads: each
/// element's update is independent of the others.
constexpr int64_t kUpdateChunk = 32768;

void updateDense(rowkernels::Rule rule, const char *name, int64_t rankW,
                 void *w, int states, void *const *state, int64_t rankG,
                 void *g, const Hyper &h) {
  Slots slots = slotsOf(name, rankW, w, states, state);
  const float *gradient = contiguousF32(name, "gradient", rankG, g);
  Kernel kernel = hostKernel(rule);
  parallelChunks(
      elementCount(rankW, w), kUpdateChunk, [&](int64_t begin, int64_t end) {
        kernel(slots.offset(begin), gradient + begin, end - begin, h);
      });
}

/// Sums the rows of repeated indices, then applies `rule` to each
/// distinct row: only rows with a gradient change.
void updateSparse(rowkernels::Rule rule, const char *name, int64_t rankW,
                  void *w, int states, void *const *state, int64_t rankI,
                  void *ids, int64_t rankV, void *values, const Hyper &h) {
  int64_t width = rowWidth(rankW, w);
  // Rows, not raw ids: a negative id and its row from the start sum too.
  int64_t rows = leadingRows(rankW, w);
  std::vector<int64_t> index =
      rowIdsOf(name, rowIds(rankI, ids), elementCount(rankI, ids), rows);
  const float *rowValues = contiguousF32(name, "gradient rows", rankV, values);
  std::vector<float> summed(rowValues, rowValues + index.size() * width);
  int64_t k = sumRepeatedRows(index, summed, width);
  applyRows(rule, name, slotsOf(name, rankW, w, states, state), rows, width,
            index.data(), k, summed.data(), 1.0f, h);
}

void pushDense(rowkernels::Rule rule, const char *name, int64_t partitions,
               int64_t firstServer, int64_t rankW, void *w, int states,
               void *const *state, int64_t rankG, void *g, const Hyper &h) {
  pushDenseGradient(rule, name, partitions, firstServer,
                    slotsOf(name, rankW, w, states, state),
                    leadingRows(rankW, w), rowWidth(rankW, w),
                    contiguousF32(name, "gradient", rankG, g), h);
}

void pushSparse(rowkernels::Rule rule, const char *name, int64_t partitions,
                int64_t firstServer, int64_t rankW, void *w, int states,
                void *const *state, int64_t rankI, void *ids, int64_t rankV,
                void *values, const Hyper &h) {
  pushSparseGradient(rule, name, partitions, firstServer,
                     slotsOf(name, rankW, w, states, state),
                     leadingRows(rankW, w), rowWidth(rankW, w),
                     rowIds(rankI, ids), elementCount(rankI, ids),
                     contiguousF32(name, "gradient rows", rankV, values), h);
}

} // namespace

float *parallax::runtime::contiguousF32(const char *name, const char *what,
                                        int64_t rank, void *descriptor) {
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

int64_t parallax::runtime::elementCount(int64_t rank, void *descriptor) {
  const int64_t *sizes = sizesOf(rank, descriptor);
  return std::accumulate(sizes, sizes + rank, int64_t{1}, std::multiplies<>());
}

int64_t parallax::runtime::leadingRows(int64_t rank, void *descriptor) {
  return rank ? sizesOf(rank, descriptor)[0] : 1;
}

int64_t parallax::runtime::rowWidth(int64_t rank, void *descriptor) {
  int64_t rows = leadingRows(rank, descriptor);
  return rows ? elementCount(rank, descriptor) / rows : 0;
}

const int64_t *parallax::runtime::rowIds(int64_t rank, void *descriptor) {
  return reinterpret_cast<const int64_t *>(
      viewDescriptor(rank, descriptor, sizeof(int64_t)).data);
}

Slots parallax::runtime::slotsOf(const char *name, int64_t rankW, void *w,
                                 int states, void *const *state) {
  Slots slots{contiguousF32(name, "variable", rankW, w), {nullptr, nullptr}};
  for (int i = 0; i < states; ++i)
    slots.state[i] = contiguousF32(name, "optimizer state", rankW, state[i]);
  return slots;
}

int64_t parallax::runtime::sumRepeatedRows(std::vector<int64_t> &ids,
                                           std::vector<float> &values,
                                           int64_t width) {
  Segments segments = segmentsBy(static_cast<int64_t>(ids.size()),
                                 [&](int64_t i) { return ids[i]; });
  int64_t distinct = static_cast<int64_t>(segments.offsets.size()) - 1;
  std::vector<int64_t> rows(distinct);
  std::vector<float> summed(distinct * width);
  for (int64_t s = 0; s < distinct; ++s) {
    const int64_t *first = segments.positions.data() + segments.offsets[s];
    const int64_t *end = segments.positions.data() + segments.offsets[s + 1];
    rows[s] = ids[*first];
    float *into = summed.data() + s * width;
    std::copy_n(values.data() + *first * width, width, into);
    for (const int64_t *at = first + 1; at != end; ++at)
      for (int64_t j = 0; j < width; ++j)
        into[j] += values[*at * width + j];
  }
  ids = std::move(rows);
  values = std::move(summed);
  return distinct;
}

int64_t parallax::runtime::rowIndex(const std::string &name, int64_t id,
                                    int64_t rows) {
  int64_t row = id < 0 ? id + rows : id;
  if (row < 0 || row >= rows)
    die("row index " + std::to_string(id) + " is out of range for '" + name +
        "', which has " + std::to_string(rows) + " rows");
  return row;
}

std::vector<int64_t> parallax::runtime::rowIdsOf(const char *name,
                                                 const int64_t *ids, int64_t k,
                                                 int64_t rows) {
  std::vector<int64_t> result(ids, ids + k);
  for (int64_t &id : result)
    id = rowIndex(name, id, rows);
  return result;
}

void parallax::runtime::applyRows(rowkernels::Rule rule,
                                  const std::string &name, const Slots &base,
                                  int64_t rows, int64_t width,
                                  const int64_t *ids, int64_t k,
                                  const float *values, float scale,
                                  const Hyper &h) {
  Kernel kernel = hostKernel(rule);
  std::vector<float> scaled(scale == 1.0f ? 0 : width);
  for (int64_t i = 0; i < k; ++i) {
    int64_t row = rowIndex(name, ids[i], rows);
    const float *gradient = values + i * width;
    if (scale != 1.0f) {
      for (int64_t j = 0; j < width; ++j)
        scaled[j] = gradient[j] * scale;
      gradient = scaled.data();
    }
    kernel(base.offset(row * width), gradient, width, h);
  }
}

// Entry points, one set per rule: (name, variable, state..., gradient |
// indices + rows, hyper-parameters) for a local update, and the same after
// (name, partitions, first server) for a push to the variable's servers.
// Memrefs arrive as (rank, descriptor); the state memrefs have the variable's
// shape, so their ranks are not needed.
#define PARALLAX_HYPER_PARAMS const ParallaxHyperParameters *hp
#define PARALLAX_HYPER hyper(*hp)
#define PARALLAX_DENSE_ARGS int64_t rankG, void *g, PARALLAX_HYPER_PARAMS
#define PARALLAX_SPARSE_ARGS                                                   \
  int64_t rankI, void *ids, int64_t rankV, void *values, PARALLAX_HYPER_PARAMS
#define PARALLAX_STATE_PARAMS_0
#define PARALLAX_STATE_PARAMS_1 , int64_t, void *s0
#define PARALLAX_STATE_PARAMS_2 , int64_t, void *s0, int64_t, void *s1
#define PARALLAX_STATE_0 nullptr
#define PARALLAX_STATE_1 s0
#define PARALLAX_STATE_2 s0, s1

#define PARALLAX_OPTIMIZER_ENTRY_POINTS(rule, ruleId, states)                  \
  void parallax_rt_update_##rule##_f32(const char *name, int64_t rankW,        \
                                       void *w PARALLAX_STATE_PARAMS_##states, \
                                       PARALLAX_DENSE_ARGS) {                  \
    void *state[] = {PARALLAX_STATE_##states};                                 \
    updateDense(ruleId, name, rankW, w, states, state, rankG, g,               \
                PARALLAX_HYPER);                                               \
  }                                                                            \
  void parallax_rt_update_##rule##_sparse_f32(                                 \
      const char *name, int64_t rankW, void *w PARALLAX_STATE_PARAMS_##states, \
      PARALLAX_SPARSE_ARGS) {                                                  \
    void *state[] = {PARALLAX_STATE_##states};                                 \
    updateSparse(ruleId, name, rankW, w, states, state, rankI, ids, rankV,     \
                 values, PARALLAX_HYPER);                                      \
  }                                                                            \
  void parallax_rt_push_##rule##_f32(const char *name, int64_t partitions,     \
                                     int64_t firstServer, int64_t rankW,       \
                                     void *w PARALLAX_STATE_PARAMS_##states,   \
                                     PARALLAX_DENSE_ARGS) {                    \
    void *state[] = {PARALLAX_STATE_##states};                                 \
    pushDense(ruleId, name, partitions, firstServer, rankW, w, states, state,  \
              rankG, g, PARALLAX_HYPER);                                       \
  }                                                                            \
  void parallax_rt_push_##rule##_sparse_f32(                                   \
      const char *name, int64_t partitions, int64_t firstServer,               \
      int64_t rankW, void *w PARALLAX_STATE_PARAMS_##states,                   \
      PARALLAX_SPARSE_ARGS) {                                                  \
    void *state[] = {PARALLAX_STATE_##states};                                 \
    pushSparse(ruleId, name, partitions, firstServer, rankW, w, states, state, \
               rankI, ids, rankV, values, PARALLAX_HYPER);                     \
  }

extern "C" {
int64_t parallax_rt_row_segments(const char *name, int64_t rows, int64_t rankI,
                                 void *ids, int64_t rankO, void *order,
                                 int64_t rankS, void *starts, int64_t rankT,
                                 void *targets) {
  int64_t k = elementCount(rankI, ids);
  if (elementCount(rankO, order) != k || elementCount(rankS, starts) != k + 1 ||
      elementCount(rankT, targets) != k)
    die(std::string("internal error: the row segments of '") + name +
        "' do not match its " + std::to_string(k) + " ids");
  std::vector<int64_t> row = rowIdsOf(name, rowIds(rankI, ids), k, rows);
  // The outputs: fresh, contiguous buffers of the generated code.
  auto written = [](int64_t rank, void *descriptor) {
    return reinterpret_cast<int64_t *>(
        viewDescriptor(rank, descriptor, sizeof(int64_t)).data);
  };
  Segments segments = segmentsBy(k, [&](int64_t i) { return row[i]; });
  int64_t count = static_cast<int64_t>(segments.offsets.size()) - 1;
  std::copy(segments.positions.begin(), segments.positions.end(),
            written(rankO, order));
  std::copy(segments.offsets.begin(), segments.offsets.end(),
            written(rankS, starts));
  int64_t *distinct = written(rankT, targets);
  for (int64_t s = 0; s < count; ++s)
    distinct[s] = row[segments.positions[segments.offsets[s]]];
  return count;
}

PARALLAX_OPTIMIZER_ENTRY_POINTS(sgd, rowkernels::Sgd, 0)
PARALLAX_OPTIMIZER_ENTRY_POINTS(momentum, rowkernels::Momentum, 1)
PARALLAX_OPTIMIZER_ENTRY_POINTS(adagrad, rowkernels::Adagrad, 1)
PARALLAX_OPTIMIZER_ENTRY_POINTS(adam, rowkernels::Adam, 2)
PARALLAX_OPTIMIZER_ENTRY_POINTS(adamw, rowkernels::AdamW, 2)
} // extern "C"
