//===- Convolutions.h - The operands of a 2-d convolution call --*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// What the conv2d calls of RuntimeABI.def receive, read once and checked
// the same way by the CPU equivalents (Convolutions.cpp) and by cuDNN's
// (CudnnConvolutions.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_CONVOLUTIONS_H
#define PARALLAX_LIB_RUNTIME_CONVOLUTIONS_H

#include "Descriptor.h"

#include <cstdint>
#include <initializer_list>
#include <string>

namespace parallax::runtime {

/// A grouped NCHW convolution y = conv(x, w): x is n x c x h x w, w is
/// m x c/groups x kh x kw, y is n x m x oh x ow, each contiguous.
struct Convolution {
  int64_t n = 0, c = 0, h = 0, w = 0, m = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t groups = 1;
  float *x = nullptr, *filter = nullptr, *y = nullptr;
  /// Why the operands do not make such a convolution, or "".
  std::string error;
};

/// "NxCxHxW by MxC/GxKHxKW": the shapes of a convolution, for messages and
/// profile sites.
inline std::string describeShapes(const Convolution &conv) {
  auto dims = [](std::initializer_list<int64_t> sizes) {
    std::string text;
    for (int64_t size : sizes)
      text += (text.empty() ? "" : "x") + std::to_string(size);
    return text;
  };
  return dims({conv.n, conv.c, conv.h, conv.w}) + " by " +
         dims({conv.m, conv.groups ? conv.c / conv.groups : 0, conv.kh,
               conv.kw});
}

/// Reads the memrefs of a conv2d call: the input (or, for an input
/// gradient, its gradient dx), the filter (or dw) and the output (or dy),
/// whichever of them the call reads or writes.
inline Convolution readConvolution(int64_t rankX, void *x, int64_t rankW,
                                   void *w, int64_t rankY, void *y,
                                   int64_t strideH, int64_t strideW,
                                   int64_t padH, int64_t padW,
                                   int64_t dilationH, int64_t dilationW,
                                   int64_t groups) {
  Convolution conv;
  if (rankX != 4 || rankW != 4 || rankY != 4) {
    conv.error = "operands of rank " + std::to_string(rankX) + ", " +
                 std::to_string(rankW) + " and " + std::to_string(rankY) +
                 " (NCHW needs 4)";
    return conv;
  }
  StridedView views[3] = {viewDescriptor(4, x, sizeof(float)),
                          viewDescriptor(4, w, sizeof(float)),
                          viewDescriptor(4, y, sizeof(float))};
  for (const StridedView &view : views) {
    int64_t expected = 1;
    for (int d = 3; d >= 0; --d) {
      if (view.sizes[d] > 1 && view.strides[d] != expected)
        conv.error = "an operand that is not contiguous";
      expected *= view.sizes[d];
    }
  }
  const std::vector<int64_t> &xs = views[0].sizes, &ws = views[1].sizes,
                             &ys = views[2].sizes;
  conv.n = xs[0], conv.c = xs[1], conv.h = xs[2], conv.w = xs[3];
  conv.m = ws[0], conv.kh = ws[2], conv.kw = ws[3];
  conv.oh = ys[2], conv.ow = ys[3];
  conv.stride[0] = strideH, conv.stride[1] = strideW;
  conv.pad[0] = padH, conv.pad[1] = padW;
  conv.dilation[0] = dilationH, conv.dilation[1] = dilationW;
  conv.groups = groups;
  conv.x = reinterpret_cast<float *>(views[0].data);
  conv.filter = reinterpret_cast<float *>(views[1].data);
  conv.y = reinterpret_cast<float *>(views[2].data);
  auto extent = [&](int64_t in, int64_t k, int d) {
    int64_t reach = in + 2 * conv.pad[d] - conv.dilation[d] * (k - 1) - 1;
    return reach < 0 ? int64_t(-1) : reach / conv.stride[d] + 1;
  };
  if (!conv.error.empty())
    return conv;
  if (groups < 1 || strideH < 1 || strideW < 1 || dilationH < 1 ||
      dilationW < 1 || padH < 0 || padW < 0)
    conv.error = "strides " + std::to_string(strideH) + "x" +
                 std::to_string(strideW) + ", pads " + std::to_string(padH) +
                 "x" + std::to_string(padW) + ", dilations " +
                 std::to_string(dilationH) + "x" + std::to_string(dilationW) +
                 ", " + std::to_string(groups) + " groups";
  else if (conv.c != ws[1] * groups || conv.m % groups || ys[0] != conv.n ||
           ys[1] != conv.m || extent(conv.h, conv.kh, 0) != conv.oh ||
           extent(conv.w, conv.kw, 1) != conv.ow)
    conv.error = "shapes that do not match";
  if (!conv.error.empty())
    conv.error +=
        " (input " + std::to_string(conv.n) + "x" + std::to_string(conv.c) +
        "x" + std::to_string(conv.h) + "x" + std::to_string(conv.w) +
        ", filter " + std::to_string(conv.m) + "x" + std::to_string(ws[1]) +
        "x" + std::to_string(conv.kh) + "x" + std::to_string(conv.kw) +
        ", output " + std::to_string(ys[0]) + "x" + std::to_string(ys[1]) +
        "x" + std::to_string(conv.oh) + "x" + std::to_string(conv.ow) + ")";
  return conv;
}

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_CONVOLUTIONS_H
