//===- Convolutions.h - The operands of a convolution call ------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// What the conv2d and conv3d calls of RuntimeABI.def receive, read once
// and checked the same way by the CPU equivalents (Convolutions.cpp) and
// by cuDNN's (CudnnConvolutions.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_CONVOLUTIONS_H
#define PARALLAX_LIB_RUNTIME_CONVOLUTIONS_H

#include "Descriptor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace parallax::runtime {

/// A grouped convolution y = conv(x, w) over `spatial` (2 or 3) dimensions
/// D, H, W: x is n x c x in[...], w is m x c/groups x kernel[...], y is
/// n x m x out[...], each contiguous. A 2-d convolution is held as a 3-d
/// one of unit depth (D's sizes, stride and dilation 1, its pad 0), so one
/// loop nest serves both.
struct Convolution {
  int spatial = 2;
  int64_t n = 0, c = 0, m = 0, groups = 1;
  int64_t in[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  float *x = nullptr, *filter = nullptr, *y = nullptr;
  /// Why the operands do not make such a convolution, or "".
  std::string error;

  int64_t inputPoints() const { return in[0] * in[1] * in[2]; }
  int64_t kernelPoints() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t outputPoints() const { return out[0] * out[1] * out[2]; }
};

/// `sizes` as "AxBxC".
inline std::string joinedSizes(const std::vector<int64_t> &sizes) {
  std::string text;
  for (int64_t size : sizes)
    text += (text.empty() ? "" : "x") + std::to_string(size);
  return text;
}

/// "NxCxHxW by MxC/GxKHxKW" (with D and KD for 3-d): the shapes of a
/// convolution, for messages and profile sites.
inline std::string describeShapes(const Convolution &conv) {
  auto shape = [&](int64_t a, int64_t b, const int64_t *spatial) {
    std::vector<int64_t> sizes = {a, b};
    sizes.insert(sizes.end(), spatial + 3 - conv.spatial, spatial + 3);
    return joinedSizes(sizes);
  };
  return shape(conv.n, conv.c, conv.in) + " by " +
         shape(conv.m, conv.groups ? conv.c / conv.groups : 0, conv.kernel);
}

/// Reads the memrefs of a conv2d (`spatial` 2) or conv3d (3) call: the
/// input (or, for an input gradient, its gradient dx), the filter (or dw)
/// and the output (or dy), whichever of them the call reads or writes;
/// `strides`, `pads` and `dilations` hold `spatial` values each.
inline Convolution readConvolution(int spatial, int64_t rankX, void *x,
                                   int64_t rankW, void *w, int64_t rankY,
                                   void *y, const int64_t *strides,
                                   const int64_t *pads,
                                   const int64_t *dilations, int64_t groups) {
  Convolution conv;
  conv.spatial = spatial;
  int64_t rank = spatial + 2;
  if (rankX != rank || rankW != rank || rankY != rank) {
    conv.error = "operands of rank " + std::to_string(rankX) + ", " +
                 std::to_string(rankW) + " and " + std::to_string(rankY) +
                 " (a " + std::to_string(spatial) + "-d convolution needs " +
                 std::to_string(rank) + ")";
    return conv;
  }
  StridedView views[3] = {viewDescriptor(rank, x, sizeof(float)),
                          viewDescriptor(rank, w, sizeof(float)),
                          viewDescriptor(rank, y, sizeof(float))};
  for (const StridedView &view : views) {
    int64_t expected = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (view.sizes[d] > 1 && view.strides[d] != expected)
        conv.error = "an operand that is not contiguous";
      expected *= view.sizes[d];
    }
  }
  const std::vector<int64_t> &xs = views[0].sizes, &ws = views[1].sizes,
                             &ys = views[2].sizes;
  conv.n = xs[0], conv.c = xs[1], conv.m = ws[0], conv.groups = groups;
  bool geometry = groups >= 1;
  for (int d = 0; d < spatial; ++d) {
    int slot = d + 3 - spatial;
    conv.in[slot] = xs[d + 2], conv.kernel[slot] = ws[d + 2];
    conv.out[slot] = ys[d + 2];
    conv.stride[slot] = strides[d], conv.pad[slot] = pads[d];
    conv.dilation[slot] = dilations[d];
    geometry &= strides[d] >= 1 && pads[d] >= 0 && dilations[d] >= 1;
  }
  conv.x = reinterpret_cast<float *>(views[0].data);
  conv.filter = reinterpret_cast<float *>(views[1].data);
  conv.y = reinterpret_cast<float *>(views[2].data);
  if (!conv.error.empty())
    return conv;
  // The shapes are checked against a valid geometry only (its strides and
  // groups divide).
  auto matching = [&] {
    bool matches = conv.c == ws[1] * groups && conv.m % groups == 0 &&
                   ys[0] == conv.n && ys[1] == conv.m;
    for (int d = 0; d < 3; ++d) {
      int64_t reach = conv.in[d] + 2 * conv.pad[d] -
                      conv.dilation[d] * (conv.kernel[d] - 1) - 1;
      matches &= reach >= 0 && reach / conv.stride[d] + 1 == conv.out[d];
    }
    return matches;
  };
  if (!geometry) {
    for (int d = 0; d < spatial; ++d)
      conv.error += std::string(d ? ", " : "") + "stride " +
                    std::to_string(strides[d]) + " pad " +
                    std::to_string(pads[d]) + " dilation " +
                    std::to_string(dilations[d]);
    conv.error += ", " + std::to_string(groups) + " groups";
  } else if (!matching()) {
    conv.error = "shapes that do not match";
  }
  if (!conv.error.empty())
    conv.error += " (input " + joinedSizes(xs) + ", filter " + joinedSizes(ws) +
                  ", output " + joinedSizes(ys) + ")";
  return conv;
}

/// readConvolution of a conv2d call's operands and scalars.
inline Convolution readConvolution2d(int64_t rankX, void *x, int64_t rankW,
                                     void *w, int64_t rankY, void *y,
                                     int64_t strideH, int64_t strideW,
                                     int64_t padH, int64_t padW,
                                     int64_t dilationH, int64_t dilationW,
                                     int64_t groups) {
  int64_t strides[] = {strideH, strideW}, pads[] = {padH, padW},
          dilations[] = {dilationH, dilationW};
  return readConvolution(2, rankX, x, rankW, w, rankY, y, strides, pads,
                         dilations, groups);
}

/// readConvolution of a conv3d call's operands and scalars.
inline Convolution
readConvolution3d(int64_t rankX, void *x, int64_t rankW, void *w, int64_t rankY,
                  void *y, int64_t strideD, int64_t strideH, int64_t strideW,
                  int64_t padD, int64_t padH, int64_t padW, int64_t dilationD,
                  int64_t dilationH, int64_t dilationW, int64_t groups) {
  int64_t strides[] = {strideD, strideH, strideW}, pads[] = {padD, padH, padW},
          dilations[] = {dilationD, dilationH, dilationW};
  return readConvolution(3, rankX, x, rankW, w, rankY, y, strides, pads,
                         dilations, groups);
}

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_CONVOLUTIONS_H
