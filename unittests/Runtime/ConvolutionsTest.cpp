//===- ConvolutionsTest.cpp - The runtime's 2-d convolution calls ---------===//
//
// Part of the Parallax project.
//
// The conv2d calls of RuntimeABI.def against convolutions summed one
// multiply-add at a time in double: the CPU equivalents (--target
// cuda-sim) and, with the fake driver and cuDNN of test/FakeCudaDriver on
// the library path (the fake computes each convolution from the
// descriptors it was given), the cuDNN calls of --target cuda, whose
// descriptors, algorithm choice and workspace this checks.
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

struct Shape {
  int64_t n, c, h, w, m, kh, kw, stride[2], pad[2], dilation[2], groups;
  int64_t out(int d) const {
    int64_t in = d ? w : h, k = d ? kw : kh;
    return (in + 2 * pad[d] - dilation[d] * (k - 1) - 1) / stride[d] + 1;
  }
};

/// A contiguous NCHW tensor with its memref descriptor.
struct Tensor {
  std::vector<float> data;
  StridedMemRefType<float, 4> descriptor;
  Tensor(int64_t a, int64_t b, int64_t c, int64_t d, std::mt19937 &random)
      : data(a * b * c * d) {
    std::uniform_real_distribution<float> values(-1.0f, 1.0f);
    for (float &v : data)
      v = values(random);
    int64_t sizes[4] = {a, b, c, d};
    descriptor.basePtr = descriptor.data = data.data();
    descriptor.offset = 0;
    int64_t stride = 1;
    for (int i = 3; i >= 0; --i) {
      descriptor.sizes[i] = sizes[i];
      descriptor.strides[i] = stride;
      stride *= sizes[i];
    }
  }
  void *memref() { return &descriptor; }
};

enum class Pass { Forward, Data, Filter };

/// The pass's result, summed in double from x, w and y.
std::vector<double> reference(Pass pass, const Shape &s, const Tensor &x,
                              const Tensor &w, const Tensor &y) {
  int64_t oh = s.out(0), ow = s.out(1), cg = s.c / s.groups,
          mg = s.m / s.groups;
  std::vector<double> sums(pass == Pass::Forward ? y.data.size()
                           : pass == Pass::Data  ? x.data.size()
                                                 : w.data.size());
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox)
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t j = 0; j < s.kw; ++j) {
                int64_t iy = oy * s.stride[0] - s.pad[0] + i * s.dilation[0];
                int64_t ix = ox * s.stride[1] - s.pad[1] + j * s.dilation[1];
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                  continue;
                int64_t xAt =
                    ((n * s.c + m / mg * cg + c) * s.h + iy) * s.w + ix;
                int64_t wAt = ((m * cg + c) * s.kh + i) * s.kw + j;
                int64_t yAt = ((n * s.m + m) * oh + oy) * ow + ox;
                if (pass == Pass::Forward)
                  sums[yAt] += double(x.data[xAt]) * w.data[wAt];
                else if (pass == Pass::Data)
                  sums[xAt] += double(w.data[wAt]) * y.data[yAt];
                else
                  sums[wAt] += double(x.data[xAt]) * y.data[yAt];
              }
  return sums;
}

using ConvCall = void (*)(int64_t, void *, int64_t, void *, int64_t, void *,
                          int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                          int64_t);

/// Runs the three calls of one library on `s` and compares each result
/// (whose buffer first holds garbage: the calls overwrite it) with the
/// reference.
void checkLibrary(const Shape &s, ConvCall forward, ConvCall filterGrad,
                  ConvCall inputGrad) {
  std::mt19937 random(7);
  Tensor x(s.n, s.c, s.h, s.w, random),
      w(s.m, s.c / s.groups, s.kh, s.kw, random),
      y(s.n, s.m, s.out(0), s.out(1), random);
  auto compare = [&](Pass pass, const std::vector<float> &got) {
    std::vector<double> want = reference(pass, s, x, w, y);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i])))
          << "element " << i << " of pass " << int(pass);
  };
  auto call = [&](ConvCall f, Tensor &a, Tensor &b, Tensor &c) {
    f(4, a.memref(), 4, b.memref(), 4, c.memref(), s.stride[0], s.stride[1],
      s.pad[0], s.pad[1], s.dilation[0], s.dilation[1], s.groups);
  };
  // y = conv(x, w): y's old values must not matter.
  Tensor out = y;
  out.descriptor.basePtr = out.descriptor.data = out.data.data();
  call(forward, x, w, out);
  compare(Pass::Forward, out.data);
  Tensor dx = x;
  dx.descriptor.basePtr = dx.descriptor.data = dx.data.data();
  call(inputGrad, y, w, dx);
  compare(Pass::Data, dx.data);
  Tensor dw = w;
  dw.descriptor.basePtr = dw.descriptor.data = dw.data.data();
  call(filterGrad, x, y, dw);
  compare(Pass::Filter, dw.data);
}

/// Strided, padded, dilated, grouped and depthwise convolutions, with
/// odd sizes (an output row the stride leaves ragged).
const Shape kShapes[] = {
    {2, 3, 8, 8, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1},
    {2, 4, 9, 7, 6, 3, 3, {2, 2}, {1, 1}, {1, 1}, 1},
    {1, 6, 10, 10, 4, 3, 2, {1, 2}, {2, 0}, {2, 1}, 2},
    {3, 8, 6, 6, 8, 3, 3, {2, 1}, {1, 1}, {1, 1}, 8},
    {2, 5, 5, 5, 7, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1},
    {1, 2, 4, 4, 3, 5, 5, {1, 1}, {2, 2}, {1, 1}, 1},
};

TEST(ConvolutionsTest, CpuEquivalentsMatchTheDefinition) {
  for (const Shape &s : kShapes)
    checkLibrary(s, parallax_rt_conv2d_f32, parallax_rt_conv2d_filter_grad_f32,
                 parallax_rt_conv2d_input_grad_f32);
}

TEST(ConvolutionsTest, CudnnCallsMatchTheDefinition) {
  const char *path = std::getenv("LD_LIBRARY_PATH");
  if (!path || std::string(path).find("fake-cuda-driver") == std::string::npos)
    GTEST_SKIP() << "needs test/FakeCudaDriver's libcuda.so.1 and "
                    "libcudnn.so.9 on LD_LIBRARY_PATH (ctest sets it)";
  for (const Shape &s : kShapes)
    checkLibrary(s, parallax_rt_cuda_conv2d_f32,
                 parallax_rt_cuda_conv2d_filter_grad_f32,
                 parallax_rt_cuda_conv2d_input_grad_f32);
}

} // namespace
