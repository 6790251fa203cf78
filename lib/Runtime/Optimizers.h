//===- Optimizers.h - Optimizer kernels shared with the parameter store ---===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_OPTIMIZERS_H
#define PARALLAX_LIB_RUNTIME_OPTIMIZERS_H

#include "RowKernels.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace parallax::runtime {

struct Hyper {
  float lr, momentum, beta1, beta2, epsilon, weightDecay, lrDecay;
  bool nesterov;
  int64_t step; // 1-based
};

/// A variable and its (up to two) state tensors of the same shape.
struct Slots {
  float *w;
  float *state[2];

  Slots offset(int64_t elements) const {
    return {w + elements,
            {state[0] ? state[0] + elements : nullptr,
             state[1] ? state[1] + elements : nullptr}};
  }
};

/// One update rule applied to `n` consecutive elements.
using Kernel = void (*)(const Slots &, const float *gradient, int64_t n,
                        const Hyper &);

/// The host's kernel of `rule`.
Kernel hostKernel(rowkernels::Rule rule);

/// What `rule` derives from `h` for one step (the host's kernels and the
/// GPU's compute it here).
rowkernels::RuleScalars ruleScalars(rowkernels::Rule rule, const Hyper &h);

/// A contiguous f32 buffer from a memref descriptor (generated code passes
/// identity layouts); `what` and `name` only name it in errors.
float *contiguousF32(const char *name, const char *what, int64_t rank,
                     void *descriptor);

/// Number of elements, of rows (leading dimension) and of elements per row
/// of a memref.
int64_t elementCount(int64_t rank, void *descriptor);
int64_t leadingRows(int64_t rank, void *descriptor);
int64_t rowWidth(int64_t rank, void *descriptor);

/// The first element of an i64 memref of row ids.
const int64_t *rowIds(int64_t rank, void *descriptor);

/// The variable (and its state) of an update call, checked contiguous.
Slots slotsOf(const char *name, int64_t rankW, void *w, int states,
              void *const *state);

/// Sorts `ids` and sums the rows of repeated ids: on return, ids[0..u) are
/// the distinct ids in ascending order and values[0..u*width) their summed
/// rows (both resized to u). Returns u.
int64_t sumRepeatedRows(std::vector<int64_t> &ids, std::vector<float> &values,
                        int64_t width);

/// Positions 0..k-1 in the order of `key(position)` (stable), and the
/// segments of equal keys: offsets into the positions, one past the end
/// last. How the lazy updates, on the host and on the GPUs, find each
/// distinct row's gradient rows.
struct Segments {
  std::vector<int64_t> positions, offsets;
};

template <typename Key> Segments segmentsBy(int64_t k, Key key) {
  Segments s;
  s.positions.resize(k);
  std::iota(s.positions.begin(), s.positions.end(), int64_t{0});
  std::stable_sort(s.positions.begin(), s.positions.end(),
                   [&](int64_t a, int64_t b) { return key(a) < key(b); });
  for (int64_t i = 0; i < k; ++i)
    if (i == 0 || key(s.positions[i]) != key(s.positions[i - 1]))
      s.offsets.push_back(i);
  s.offsets.push_back(k);
  return s;
}

/// Row `id` of a variable `name` of `rows` rows, a negative id counted
/// from the end (as the gather it comes from allows); dies on any other.
int64_t rowIndex(const std::string &name, int64_t id, int64_t rows);

/// The rows of the `k` ids `ids` of a variable of `rows` rows (rowIndex of
/// each).
std::vector<int64_t> rowIdsOf(const char *name, const int64_t *ids, int64_t k,
                              int64_t rows);

/// Applies `rule` to rows `ids[i]` (distinct) of `base`, a variable of
/// `rows` rows of `width` floats, with gradient rows `values[i]` times
/// `scale`. Each id goes through rowIndex.
void applyRows(rowkernels::Rule rule, const std::string &name,
               const Slots &base, int64_t rows, int64_t width,
               const int64_t *ids, int64_t k, const float *values, float scale,
               const Hyper &h);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_OPTIMIZERS_H
