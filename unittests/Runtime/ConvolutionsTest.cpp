//===- ConvolutionsTest.cpp - The runtime's convolution calls -------------===//
//
// Part of the Parallax project.
//
// The conv2d and conv3d calls of RuntimeABI.def against convolutions
// summed one multiply-add at a time in double: the CPU equivalents
// (--target cuda-sim) and, with the fake driver and cuDNN of
// test/FakeCudaDriver on the library path (the fake computes each
// convolution from the descriptors it was given), the cuDNN calls of
// --target cuda, whose descriptors (4-d for conv2d, Nd for conv3d),
// algorithm choice and workspace this checks.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

/// A convolution over D, H and W; a 2-d one has d = kd = 1 and D's
/// stride and dilation 1, pad 0, and goes through the conv2d calls.
struct Shape {
  bool threeD;
  int64_t n, c, m, groups;
  int64_t in[3], kernel[3], stride[3], pad[3], dilation[3];
  int64_t out(int d) const {
    return (in[d] + 2 * pad[d] - dilation[d] * (kernel[d] - 1) - 1) /
               stride[d] +
           1;
  }
};

/// A contiguous tensor of rank 4 (NCHW) or 5 (NCDHW) with its memref
/// descriptor.
struct Tensor {
  std::vector<float> data;
  std::vector<int64_t> descriptor; // StridedMemRefType's layout, rank 5 max
  int64_t rank;
  Tensor(int64_t rank, std::vector<int64_t> sizes, std::mt19937 &random)
      : rank(rank) {
    int64_t count = 1;
    for (int64_t size : sizes)
      count *= size;
    data.resize(count);
    std::uniform_real_distribution<float> values(-1.0f, 1.0f);
    for (float &v : data)
      v = values(random);
    // {allocated, aligned, offset, sizes[rank], strides[rank]}
    descriptor.assign(3 + 2 * rank, 0);
    int64_t stride = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
      descriptor[3 + i] = sizes[i];
      descriptor[3 + rank + i] = stride;
      stride *= sizes[i];
    }
  }
  Tensor(const Tensor &other) = default;
  void *memref() {
    auto *pointer = reinterpret_cast<float **>(descriptor.data());
    pointer[0] = pointer[1] = data.data();
    return descriptor.data();
  }
};

/// Sizes of x's, w's or y's tensor: the 2-d ones without D.
std::vector<int64_t> sizesOf(const Shape &s, int64_t a, int64_t b,
                             const int64_t *spatial) {
  std::vector<int64_t> sizes = {a, b};
  for (int d = s.threeD ? 0 : 1; d < 3; ++d)
    sizes.push_back(spatial[d]);
  return sizes;
}

enum class Pass { Forward, Data, Filter };

/// The pass's result, summed in double from x, w and y.
std::vector<double> reference(Pass pass, const Shape &s, const Tensor &x,
                              const Tensor &w, const Tensor &y) {
  int64_t out[3] = {s.out(0), s.out(1), s.out(2)};
  int64_t cg = s.c / s.groups, mg = s.m / s.groups;
  std::vector<double> sums(pass == Pass::Forward ? y.data.size()
                           : pass == Pass::Data  ? x.data.size()
                                                 : w.data.size());
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t oz = 0; oz < out[0]; ++oz)
        for (int64_t oy = 0; oy < out[1]; ++oy)
          for (int64_t ox = 0; ox < out[2]; ++ox)
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t a = 0; a < s.kernel[0]; ++a)
                for (int64_t i = 0; i < s.kernel[1]; ++i)
                  for (int64_t j = 0; j < s.kernel[2]; ++j) {
                    int64_t at[3] = {oz, oy, ox}, tap[3] = {a, i, j}, from[3];
                    bool inside = true;
                    for (int d = 0; d < 3; ++d) {
                      from[d] = at[d] * s.stride[d] - s.pad[d] +
                                tap[d] * s.dilation[d];
                      inside &= from[d] >= 0 && from[d] < s.in[d];
                    }
                    if (!inside)
                      continue;
                    int64_t xAt =
                        (((n * s.c + m / mg * cg + c) * s.in[0] + from[0]) *
                             s.in[1] +
                         from[1]) *
                            s.in[2] +
                        from[2];
                    int64_t wAt =
                        (((m * cg + c) * s.kernel[0] + a) * s.kernel[1] + i) *
                            s.kernel[2] +
                        j;
                    int64_t yAt =
                        (((n * s.m + m) * out[0] + oz) * out[1] + oy) * out[2] +
                        ox;
                    if (pass == Pass::Forward)
                      sums[yAt] += double(x.data[xAt]) * w.data[wAt];
                    else if (pass == Pass::Data)
                      sums[xAt] += double(w.data[wAt]) * y.data[yAt];
                    else
                      sums[wAt] += double(x.data[xAt]) * y.data[yAt];
                  }
  return sums;
}

using Conv2dCall = void (*)(int64_t, void *, int64_t, void *, int64_t, void *,
                            int64_t, int64_t, int64_t, int64_t, int64_t,
                            int64_t, int64_t);
using Conv3dCall = void (*)(int64_t, void *, int64_t, void *, int64_t, void *,
                            int64_t, int64_t, int64_t, int64_t, int64_t,
                            int64_t, int64_t, int64_t, int64_t, int64_t);

/// One library's forward, filter-gradient and input-gradient calls, 2-d
/// and 3-d.
struct Library {
  Conv2dCall forward2d, filterGrad2d, inputGrad2d;
  Conv3dCall forward3d, filterGrad3d, inputGrad3d;
};

/// Runs the three calls of `library` on `s` and compares each result
/// (whose buffer first holds garbage: the calls overwrite it) with the
/// reference.
void checkLibrary(const Shape &s, const Library &library) {
  std::mt19937 random(7);
  int64_t rank = s.threeD ? 5 : 4;
  int64_t out[3] = {s.out(0), s.out(1), s.out(2)};
  Tensor x(rank, sizesOf(s, s.n, s.c, s.in), random),
      w(rank, sizesOf(s, s.m, s.c / s.groups, s.kernel), random),
      y(rank, sizesOf(s, s.n, s.m, out), random);
  auto compare = [&](Pass pass, const std::vector<float> &got) {
    std::vector<double> want = reference(pass, s, x, w, y);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i])))
          << "element " << i << " of pass " << int(pass)
          << (s.threeD ? " (3-d)" : " (2-d)");
  };
  auto call = [&](Conv2dCall f2, Conv3dCall f3, Tensor &a, Tensor &b,
                  Tensor &c) {
    if (s.threeD)
      f3(5, a.memref(), 5, b.memref(), 5, c.memref(), s.stride[0], s.stride[1],
         s.stride[2], s.pad[0], s.pad[1], s.pad[2], s.dilation[0],
         s.dilation[1], s.dilation[2], s.groups);
    else
      f2(4, a.memref(), 4, b.memref(), 4, c.memref(), s.stride[1], s.stride[2],
         s.pad[1], s.pad[2], s.dilation[1], s.dilation[2], s.groups);
  };
  // y = conv(x, w): y's old values must not matter.
  Tensor result = y;
  call(library.forward2d, library.forward3d, x, w, result);
  compare(Pass::Forward, result.data);
  Tensor dx = x;
  call(library.inputGrad2d, library.inputGrad3d, y, w, dx);
  compare(Pass::Data, dx.data);
  Tensor dw = w;
  call(library.filterGrad2d, library.filterGrad3d, x, y, dw);
  compare(Pass::Filter, dw.data);
}

/// Strided, padded, dilated, grouped and depthwise convolutions, with
/// odd sizes (an output row the stride leaves ragged), 2-d and 3-d.
const Shape kShapes[] = {
    // n, c, m, groups, in, kernel, stride, pad, dilation
    {false, 2, 3, 4, 1, {1, 8, 8}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}},
    {false, 2, 4, 6, 1, {1, 9, 7}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}, {1, 1, 1}},
    {false,
     1,
     6,
     4,
     2,
     {1, 10, 10},
     {1, 3, 2},
     {1, 1, 2},
     {0, 2, 0},
     {1, 2, 1}},
    {false, 3, 8, 8, 8, {1, 6, 6}, {1, 3, 3}, {1, 2, 1}, {0, 1, 1}, {1, 1, 1}},
    {false, 2, 5, 7, 1, {1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}},
    {false, 1, 2, 3, 1, {1, 4, 4}, {1, 5, 5}, {1, 1, 1}, {0, 2, 2}, {1, 1, 1}},
    {true, 2, 3, 4, 1, {5, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
    {true, 1, 4, 6, 2, {7, 5, 6}, {3, 2, 3}, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}},
    {true, 2, 6, 6, 6, {4, 4, 4}, {3, 3, 1}, {1, 2, 1}, {2, 1, 0}, {2, 1, 1}},
};

TEST(ConvolutionsTest, CpuEquivalentsMatchTheDefinition) {
  Library cpu = {parallax_rt_conv2d_f32,
                 parallax_rt_conv2d_filter_grad_f32,
                 parallax_rt_conv2d_input_grad_f32,
                 parallax_rt_conv3d_f32,
                 parallax_rt_conv3d_filter_grad_f32,
                 parallax_rt_conv3d_input_grad_f32};
  for (const Shape &s : kShapes)
    checkLibrary(s, cpu);
}

/// A geometry no convolution has (a stride of 0, no groups) or operands of
/// the wrong rank end the program with a message naming them, before any
/// size is divided by a stride or the groups.
TEST(ConvolutionsTest, AnInvalidGeometryIsAnError) {
  std::mt19937 random(7);
  Tensor x(4, {1, 2, 4, 4}, random), w(4, {2, 2, 3, 3}, random),
      y(4, {1, 2, 2, 2}, random);
  EXPECT_EXIT(parallax_rt_conv2d_f32(4, x.memref(), 4, w.memref(), 4,
                                     y.memref(), 0, 1, 0, 0, 1, 1, 1),
              testing::ExitedWithCode(1),
              "a convolution of stride 0 pad 0 dilation 1, stride 1 pad 0 "
              "dilation 1, 1 groups \\(input 1x2x4x4, filter 2x2x3x3, "
              "output 1x2x2x2\\)");
  EXPECT_EXIT(parallax_rt_conv3d_filter_grad_f32(4, x.memref(), 4, y.memref(),
                                                 4, w.memref(), 1, 1, 1, 0, 0,
                                                 0, 1, 1, 1, 1),
              testing::ExitedWithCode(1),
              "operands of rank 4, 4 and 4 \\(a 3-d convolution needs 5\\)");
  Tensor x5(5, {1, 2, 3, 4, 4}, random), w5(5, {2, 2, 1, 3, 3}, random),
      y5(5, {1, 2, 3, 2, 2}, random);
  EXPECT_EXIT(parallax_rt_conv3d_f32(5, x5.memref(), 5, w5.memref(), 5,
                                     y5.memref(), 1, 1, 1, 0, 0, 0, 1, 1, 1, 0),
              testing::ExitedWithCode(1), "0 groups");
}

TEST(ConvolutionsTest, CudnnCallsMatchTheDefinition) {
  const char *path = std::getenv("LD_LIBRARY_PATH");
  if (!path || std::string(path).find("fake-cuda-driver") == std::string::npos)
    GTEST_SKIP() << "needs test/FakeCudaDriver's libcuda.so.1 and "
                    "libcudnn.so.9 on LD_LIBRARY_PATH (ctest sets it)";
  Library cudnn = {parallax_rt_cuda_conv2d_f32,
                   parallax_rt_cuda_conv2d_filter_grad_f32,
                   parallax_rt_cuda_conv2d_input_grad_f32,
                   parallax_rt_cuda_conv3d_f32,
                   parallax_rt_cuda_conv3d_filter_grad_f32,
                   parallax_rt_cuda_conv3d_input_grad_f32};
  for (const Shape &s : kShapes)
    checkLibrary(s, cudnn);
}

} // namespace
