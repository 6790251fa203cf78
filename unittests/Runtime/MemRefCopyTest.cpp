//===- MemRefCopyTest.cpp - The runtime's strided memref copy -------------===//
//
// Part of the Parallax project.
//
// parallax_rt_memref_copy copies between memrefs of any strides (generated
// code calls it where a copy is not contiguous: a dilation, a strided
// slice, a pad's interior). Each case is checked against an
// element-by-element copy.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

namespace {

/// A rank-3 strided view of `data`, as MLIR lays out its descriptor.
template <typename T> struct View3D {
  T *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
  View3D(std::vector<T> &data, int64_t offset, std::array<int64_t, 3> sizes,
         std::array<int64_t, 3> strides)
      : allocated(data.data()), aligned(data.data()),
        offset(offset), sizes{sizes[0], sizes[1], sizes[2]}, strides{
                                                                 strides[0],
                                                                 strides[1],
                                                                 strides[2]} {}
  T &at(int64_t i, int64_t j, int64_t k) {
    return aligned[offset + i * strides[0] + j * strides[1] + k * strides[2]];
  }
};

/// Copies `from` into `to` through the runtime and checks every element
/// of the target's buffer: the view's elements equal the source's, the
/// rest is untouched.
template <typename T>
void checkCopy(std::vector<T> &source, View3D<T> from, std::vector<T> &target,
               View3D<T> to) {
  std::vector<T> expected = target;
  View3D<T> expectedView = to;
  expectedView.allocated = expectedView.aligned = expected.data();
  for (int64_t i = 0; i < from.sizes[0]; ++i)
    for (int64_t j = 0; j < from.sizes[1]; ++j)
      for (int64_t k = 0; k < from.sizes[2]; ++k)
        expectedView.at(i, j, k) = from.at(i, j, k);
  UnrankedMemRefType<T> src{3, &from}, dst{3, &to};
  parallax_rt_memref_copy(sizeof(T), &src, &dst);
  EXPECT_EQ(target, expected);
}

TEST(MemRefCopyTest, ContiguousIsOneRun) {
  std::vector<float> source(24), target(24, -1);
  std::iota(source.begin(), source.end(), 0.0f);
  checkCopy(source, View3D<float>(source, 0, {2, 3, 4}, {12, 4, 1}), target,
            View3D<float>(target, 0, {2, 3, 4}, {12, 4, 1}));
}

TEST(MemRefCopyTest, ContiguousRowsIntoAPaddedInterior) {
  // A 2x3x4 block into the interior of a 2x5x6 buffer (a pad's copy).
  std::vector<float> source(24), target(60, 0);
  std::iota(source.begin(), source.end(), 1.0f);
  checkCopy(source, View3D<float>(source, 0, {2, 3, 4}, {12, 4, 1}), target,
            View3D<float>(target, 7, {2, 3, 4}, {30, 6, 1}));
}

TEST(MemRefCopyTest, StridedInnermostDimension) {
  // Every second element of each row (a stride-2 dilation's scatter),
  // for 4-, 8-, 2- and 1-byte elements.
  std::vector<float> f(24), ft(48, 0);
  std::iota(f.begin(), f.end(), 1.0f);
  checkCopy(f, View3D<float>(f, 0, {2, 3, 4}, {12, 4, 1}), ft,
            View3D<float>(ft, 0, {2, 3, 4}, {24, 8, 2}));
  std::vector<int64_t> l(24), lt(48, 0);
  std::iota(l.begin(), l.end(), 1);
  checkCopy(l, View3D<int64_t>(l, 0, {2, 3, 4}, {12, 4, 1}), lt,
            View3D<int64_t>(lt, 1, {2, 3, 4}, {24, 8, 2}));
  std::vector<int16_t> h(24), ht(48, 0);
  std::iota(h.begin(), h.end(), 1);
  checkCopy(h, View3D<int16_t>(h, 0, {2, 3, 4}, {12, 4, 1}), ht,
            View3D<int16_t>(ht, 0, {2, 3, 4}, {24, 8, 2}));
  std::vector<int8_t> b(24), bt(48, 0);
  std::iota(b.begin(), b.end(), 1);
  checkCopy(b, View3D<int8_t>(b, 0, {2, 3, 4}, {12, 4, 1}), bt,
            View3D<int8_t>(bt, 0, {2, 3, 4}, {24, 8, 2}));
}

TEST(MemRefCopyTest, TransposedAndReversedSource) {
  // The source read transposed (its outer dimensions swapped) and its
  // innermost dimension reversed (negative stride).
  std::vector<float> source(24), target(24, -1);
  std::iota(source.begin(), source.end(), 0.0f);
  checkCopy(source, View3D<float>(source, 3, {3, 2, 4}, {4, 12, -1}), target,
            View3D<float>(target, 0, {3, 2, 4}, {8, 4, 1}));
}

TEST(MemRefCopyTest, EmptyViewCopiesNothing) {
  std::vector<float> source(4, 1), target(4, -1);
  checkCopy(source, View3D<float>(source, 0, {2, 0, 2}, {0, 2, 1}), target,
            View3D<float>(target, 0, {2, 0, 2}, {0, 2, 1}));
}

} // namespace
