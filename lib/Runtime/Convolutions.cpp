//===- Convolutions.cpp - cuDNN's convolutions, on the CPU ----------------===//
//
// Part of the Parallax project.
//
// The conv2d and conv3d calls of RuntimeABI.def for --target cuda-sim, where a
// --target cuda program calls cuDNN (CudnnConvolutions.cpp): each image
// and group's patches (im2col) times the filter with the runtime's matrix
// products, and for the input gradient the products' columns summed back
// into the image (col2im). The sums over images of a filter gradient run
// in image order, so the results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Convolutions.h"
#include "CpuKernels.h"
#include "Support.h"
#include "Threads.h"

#include <algorithm>
#include <functional>
#include <vector>

using namespace parallax::runtime;

namespace {

/// Calls visit(column, point) for every element of one image and group's
/// patch matrix, row (channel, tap) holding for every output position
/// what filter tap (a, i, j) (depth, height, width) reads there: `column`
/// the element's index in the matrix, `point` the index of the input
/// element it reads among the image's c/groups channels, or -1 in the
/// padding.
template <typename Visit>
void forEachPatchElement(const Convolution &conv, Visit visit) {
  int64_t channels = conv.c / conv.groups, positions = conv.outputPoints();
  const int64_t *in = conv.in, *k = conv.kernel, *out = conv.out;
  int64_t row = 0;
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t a = 0; a < k[0]; ++a)
      for (int64_t i = 0; i < k[1]; ++i)
        for (int64_t j = 0; j < k[2]; ++j, row += positions) {
          int64_t column = row;
          for (int64_t oz = 0; oz < out[0]; ++oz) {
            int64_t iz =
                oz * conv.stride[0] - conv.pad[0] + a * conv.dilation[0];
            for (int64_t oy = 0; oy < out[1]; ++oy) {
              int64_t iy =
                  oy * conv.stride[1] - conv.pad[1] + i * conv.dilation[1];
              bool plane = iz >= 0 && iz < in[0] && iy >= 0 && iy < in[1];
              for (int64_t ox = 0; ox < out[2]; ++ox, ++column) {
                int64_t ix =
                    ox * conv.stride[2] - conv.pad[2] + j * conv.dilation[2];
                bool inside = plane && ix >= 0 && ix < in[2];
                visit(column,
                      inside ? ((ch * in[0] + iz) * in[1] + iy) * in[2] + ix
                             : int64_t(-1));
              }
            }
          }
        }
}

/// The patch matrix of `image` (zero in the padding).
void imageToColumns(const Convolution &conv, const float *image,
                    float *columns) {
  forEachPatchElement(conv, [&](int64_t column, int64_t pixel) {
    columns[column] = pixel < 0 ? 0.0f : image[pixel];
  });
}

/// The adjoint of imageToColumns: adds every column element into the input
/// element it was read from.
void columnsToImage(const Convolution &conv, const float *columns,
                    float *image) {
  forEachPatchElement(conv, [&](int64_t column, int64_t pixel) {
    if (pixel >= 0)
      image[pixel] += columns[column];
  });
}

/// Sizes of one image and group's matrices: the filter's rows (outputs)
/// and columns (patch length), the output positions.
struct GroupMatrices {
  int64_t outputs, patch, positions;
  explicit GroupMatrices(const Convolution &conv)
      : outputs(conv.m / conv.groups),
        patch(conv.c / conv.groups * conv.kernelPoints()),
        positions(conv.outputPoints()) {}
};

void checked(const char *what, const Convolution &conv) {
  if (!conv.error.empty())
    die(std::string(what) + " of " + conv.error);
}

/// Runs body(image, group, columns) for every image and group on the
/// worker's threads, `columns` a scratch buffer of one patch matrix.
void forEachImageAndGroup(
    const Convolution &conv, const GroupMatrices &g,
    const std::function<void(int64_t, int64_t, float *)> &body) {
  parallelTasks(conv.n * conv.groups, [&](int64_t task) {
    thread_local std::vector<float> columns;
    columns.resize(g.patch * g.positions);
    body(task / conv.groups, task % conv.groups, columns.data());
  });
}

/// The first element of `image`'s channels of `group` in an NC[D]HW tensor
/// of `channels` channels of `positions` points each.
float *groupOf(const Convolution &conv, float *tensor, int64_t channels,
               int64_t image, int64_t group, int64_t positions) {
  return tensor +
         (image * channels + group * (channels / conv.groups)) * positions;
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
          float *c, int64_t ldc) {
  requireBlasLibrary().gemmFor(m, n, k, lda, ldb, ldc)(
      transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void forward(const Convolution &conv) {
  checked("a convolution", conv);
  GroupMatrices g(conv);
  int64_t points = conv.inputPoints();
  forEachImageAndGroup(
      conv, g, [&](int64_t image, int64_t group, float *columns) {
        imageToColumns(
            conv, groupOf(conv, conv.x, conv.c, image, group, points), columns);
        gemm(false, false, g.outputs, g.positions, g.patch,
             conv.filter + group * g.outputs * g.patch, g.patch, columns,
             g.positions, 0.0f,
             groupOf(conv, conv.y, conv.m, image, group, g.positions),
             g.positions);
      });
}

void filterGradient(const Convolution &conv) {
  checked("a convolution's filter gradient", conv);
  GroupMatrices g(conv);
  int64_t points = conv.inputPoints();
  // Groups in parallel, images in order within each.
  parallelTasks(conv.groups, [&](int64_t group) {
    thread_local std::vector<float> columns;
    columns.resize(g.patch * g.positions);
    for (int64_t image = 0; image < conv.n; ++image) {
      imageToColumns(conv, groupOf(conv, conv.x, conv.c, image, group, points),
                     columns.data());
      gemm(false, true, g.outputs, g.patch, g.positions,
           groupOf(conv, conv.y, conv.m, image, group, g.positions),
           g.positions, columns.data(), g.positions, image ? 1.0f : 0.0f,
           conv.filter + group * g.outputs * g.patch, g.patch);
    }
  });
}

void inputGradient(const Convolution &conv) {
  checked("a convolution's input gradient", conv);
  GroupMatrices g(conv);
  int64_t points = conv.inputPoints();
  forEachImageAndGroup(
      conv, g, [&](int64_t image, int64_t group, float *columns) {
        gemm(true, false, g.patch, g.positions, g.outputs,
             conv.filter + group * g.outputs * g.patch, g.patch,
             groupOf(conv, conv.y, conv.m, image, group, g.positions),
             g.positions, 0.0f, columns, g.positions);
        float *slice = groupOf(conv, conv.x, conv.c, image, group, points);
        std::fill_n(slice, conv.c / conv.groups * points, 0.0f);
        columnsToImage(conv, columns, slice);
      });
}

} // namespace

extern "C" void parallax_rt_conv2d_f32(int64_t rankX, void *x, int64_t rankW,
                                       void *w, int64_t rankY, void *y,
                                       int64_t strideH, int64_t strideW,
                                       int64_t padH, int64_t padW,
                                       int64_t dilationH, int64_t dilationW,
                                       int64_t groups) {
  forward(readConvolution2d(rankX, x, rankW, w, rankY, y, strideH, strideW,
                            padH, padW, dilationH, dilationW, groups));
}

extern "C" void parallax_rt_conv2d_filter_grad_f32(
    int64_t rankX, void *x, int64_t rankDy, void *dy, int64_t rankDw, void *dw,
    int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,
    int64_t dilationH, int64_t dilationW, int64_t groups) {
  filterGradient(readConvolution2d(rankX, x, rankDw, dw, rankDy, dy, strideH,
                                   strideW, padH, padW, dilationH, dilationW,
                                   groups));
}

extern "C" void parallax_rt_conv2d_input_grad_f32(
    int64_t rankDy, void *dy, int64_t rankW, void *w, int64_t rankDx, void *dx,
    int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,
    int64_t dilationH, int64_t dilationW, int64_t groups) {
  inputGradient(readConvolution2d(rankDx, dx, rankW, w, rankDy, dy, strideH,
                                  strideW, padH, padW, dilationH, dilationW,
                                  groups));
}

extern "C" void parallax_rt_conv3d_f32(int64_t rankX, void *x, int64_t rankW,
                                       void *w, int64_t rankY, void *y,
                                       int64_t strideD, int64_t strideH,
                                       int64_t strideW, int64_t padD,
                                       int64_t padH, int64_t padW,
                                       int64_t dilationD, int64_t dilationH,
                                       int64_t dilationW, int64_t groups) {
  forward(readConvolution3d(rankX, x, rankW, w, rankY, y, strideD, strideH,
                            strideW, padD, padH, padW, dilationD, dilationH,
                            dilationW, groups));
}

extern "C" void parallax_rt_conv3d_filter_grad_f32(
    int64_t rankX, void *x, int64_t rankDy, void *dy, int64_t rankDw, void *dw,
    int64_t strideD, int64_t strideH, int64_t strideW, int64_t padD,
    int64_t padH, int64_t padW, int64_t dilationD, int64_t dilationH,
    int64_t dilationW, int64_t groups) {
  filterGradient(readConvolution3d(rankX, x, rankDw, dw, rankDy, dy, strideD,
                                   strideH, strideW, padD, padH, padW,
                                   dilationD, dilationH, dilationW, groups));
}

extern "C" void parallax_rt_conv3d_input_grad_f32(
    int64_t rankDy, void *dy, int64_t rankW, void *w, int64_t rankDx, void *dx,
    int64_t strideD, int64_t strideH, int64_t strideW, int64_t padD,
    int64_t padH, int64_t padW, int64_t dilationD, int64_t dilationH,
    int64_t dilationW, int64_t groups) {
  inputGradient(readConvolution3d(rankDx, dx, rankW, w, rankDy, dy, strideD,
                                  strideH, strideW, padD, padH, padW, dilationD,
                                  dilationH, dilationW, groups));
}
