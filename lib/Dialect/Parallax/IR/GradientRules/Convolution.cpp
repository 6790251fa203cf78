//===- Convolution.cpp - Gradients of convolution and pooling -------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::gradients;

/// The largest window (elements) of the general pooling gradient, which
/// builds a few ops per window element.
static constexpr int64_t kMaxPoolWindow = 256;

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// The filter of a convolution's input gradient: `w` [M, C/G, K...] with
/// each group's in and out channels swapped, [C, M/G, K...]. A reshape to
/// [G, M/G, C/G, K...], a transpose of the two channel dimensions, a
/// reshape back: no per-group slices.
static Value swapChannelsPerGroup(GradBuilder &g, Value w, int64_t groups) {
  auto type = tensorType(w);
  int64_t rank = type.getRank();
  int64_t perGroup = type.getDimSize(0) / groups, channels = type.getDimSize(1);
  Shape grouped{groups, perGroup, channels};
  llvm::append_range(grouped, type.getShape().drop_front(2));
  Shape perm(rank + 1);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[1], perm[2]);
  Shape swapped{groups * channels, perGroup};
  llvm::append_range(swapped, type.getShape().drop_front(2));
  return g.reshape(g.transpose(g.reshape(w, grouped), perm), swapped);
}

Value mlir::parallax::buildTransposedConvolution(
    OpBuilder &builder, Location loc, Value input, Value filter, Value bias,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
    ArrayRef<int64_t> leadingPads, ArrayRef<int64_t> outSpatial,
    int64_t groups) {
  GradBuilder g{builder, loc};
  auto wType = tensorType(filter);
  int64_t rank = wType.getRank(), spatial = rank - 2;
  Shape ones(spatial, 1), zeros(2 * spatial, 0);
  Value dilated = input;
  for (int64_t d = 0; d < spatial; ++d)
    dilated = g.dilate(dilated, d + 2, strides[d]);
  Shape low(rank, 0), high(rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t reach = dilations[d] * (wType.getDimSize(d + 2) - 1);
    low[d + 2] = reach - leadingPads[d];
    high[d + 2] = outSpatial[d] + reach - low[d + 2] -
                  tensorType(dilated).getDimSize(d + 2);
  }
  dilated = g.padOrCrop(dilated, low, high);
  Shape flipOffsets(rank, 0), flipStrides(rank, 1);
  for (int64_t d = 2; d < rank; ++d) {
    flipOffsets[d] = wType.getDimSize(d) - 1;
    flipStrides[d] = -1;
  }
  Value flipped = swapChannelsPerGroup(
      g, g.slice(filter, flipOffsets, wType.getShape(), flipStrides), groups);
  return ConvOp::create(g.b, g.loc, dilated, flipped, bias, ones, zeros,
                        dilations, groups);
}

/// Whether an ungrouped convolution's input gradient is better one
/// conv_input_grad (a product with the filter read as it is, then col2im)
/// than a transposed convolution: when the convolution is strided (the
/// transposed convolution would multiply the zeros its input is dilated
/// with) or its filter is larger than its input (the transposed
/// convolution copies the whole filter, flipped, which then costs more
/// than col2im's passes over the input).
static bool prefersColumnsToImage(RankedTensorType x, RankedTensorType w,
                                  ArrayRef<int64_t> strides, int64_t groups) {
  if (groups != 1 || !x.hasStaticShape() || !w.hasStaticShape())
    return false;
  return llvm::any_of(strides, [](int64_t s) { return s > 1; }) ||
         w.getNumElements() > x.getNumElements();
}

/// dx and dw of a convolution: dx is a conv_input_grad or a transposed
/// convolution with as many groups, dw one conv_filter_grad.
static std::pair<Value, Value>
convGradients(GradBuilder &g, Value x, Value w, Value dy,
              ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
              ArrayRef<int64_t> pads, int64_t groups) {
  auto xType = tensorType(x), wType = tensorType(w);
  int64_t rank = xType.getRank(), spatial = rank - 2;
  Value dx =
      prefersColumnsToImage(xType, wType, strides, groups)
          ? ConvInputGradOp::create(g.b, g.loc, dy, w,
                                    xType.getShape().drop_front(2), strides,
                                    pads, dilations)
          : buildTransposedConvolution(g.b, g.loc, dy, w, Value(), strides,
                                       dilations, pads.take_front(spatial),
                                       xType.getShape().drop_front(2), groups);

  // dw: the padded input's patches against dy (conv_filter_grad).
  Shape padLow(rank, 0), padHigh(rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    padLow[d + 2] = pads[d];
    padHigh[d + 2] = pads[d + spatial];
  }
  Value padded = g.padOrCrop(x, padLow, padHigh);
  Value dw = ConvFilterGradOp::create(g.b, g.loc, padded, dy,
                                      wType.getShape().drop_front(2), strides,
                                      dilations, groups);
  return {dx, dw};
}

LogicalResult ConvOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                Value x = getInput(), w = getFilter();
                int64_t rank = tensorType(x).getRank();
                auto [dx, dw] =
                    convGradients(g, x, w, dy, getStrides(), getDilations(),
                                  getPads(), getGroups());
                out.push_back(dx);
                out.push_back(dw);
                if (getBias()) {
                  Shape axes{0};
                  for (int64_t d = 2; d < rank; ++d)
                    axes.push_back(d);
                  out.push_back(g.sum(dy, axes, false));
                }
                return success();
              });
}

/// The adjoint of taking, for each window offset `k` along `axis`, the
/// strided slice `[k : k + (O - 1) * stride + 1 : stride]` of an extent
/// `(O - 1) * stride + K`: sums `parts[k]` ([..., O, ...] each, K of them)
/// into that extent. An extent element `q * stride + r` receives
/// `parts[r + j * stride][q - j]`: per residue `r` the parts are shifted
/// along the axis by padding and summed, and the residues are interleaved
/// by stacking them on a new axis after `axis` and merging the two. Every
/// op works on window-sized tensors; no zero-dilated copies of the input.
static Value scatterWindowAxis(GradBuilder &g, ArrayRef<Value> parts,
                               int64_t axis, int64_t stride) {
  auto type = tensorType(parts.front());
  int64_t rank = type.getRank(), windows = type.getDimSize(axis);
  int64_t kernel = parts.size();
  int64_t extent = (windows - 1) * stride + kernel;
  int64_t rows = (extent + stride - 1) / stride;
  int64_t residues = std::min(kernel, stride);
  SmallVector<Value> byResidue;
  for (int64_t r = 0; r < residues; ++r) {
    Value sum;
    for (int64_t k = r; k < kernel; k += stride) {
      Shape low(rank, 0), high(rank, 0);
      low[axis] = k / stride;
      high[axis] = rows - windows - k / stride;
      Value shifted = g.padOrCrop(parts[k], low, high);
      sum = sum ? g.add(sum, shifted) : shifted;
    }
    Shape stacked(tensorType(sum).getShape());
    stacked.insert(stacked.begin() + axis + 1, 1);
    byResidue.push_back(g.reshape(sum, stacked));
  }
  Value interleaved =
      byResidue.size() == 1
          ? byResidue.front()
          : Value(ConcatOp::create(g.b, g.loc, byResidue, axis + 1));
  // Residues past the kernel (a stride longer than the window) get zeros.
  Shape low(rank + 1, 0), high(rank + 1, 0);
  high[axis + 1] = stride - residues;
  interleaved = g.padOrCrop(interleaved, low, high);
  Shape flat(type.getShape());
  flat[axis] = rows * stride;
  Shape cropLow(rank, 0), cropHigh(rank, 0);
  cropHigh[axis] = extent - rows * stride;
  return g.padOrCrop(g.reshape(interleaved, flat), cropLow, cropHigh);
}

/// Average pooling whose windows overlap, are padded or do not tile the
/// input: every window offset's strided slice of the (padded) input gets
/// its window's share of dy, scattered back through the adjoint of the
/// slice.
static Value averagePoolGradient(GradBuilder &g, PoolOp op, Value dy) {
  Value x = op.getInput(), y = op.getResult();
  auto xType = tensorType(x), yType = tensorType(y);
  int64_t rank = xType.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    pads = op.getPads();
  // Pad to exactly the extent the windows cover (ceil_mode may reach past
  // the declared pads; unused trailing input is cropped).
  Shape low(rank, 0), high(rank, 0), declaredHigh(rank, 0);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t extent = (yType.getDimSize(d + 2) - 1) * strides[d] + kernel[d];
    low[d + 2] = pads[d];
    high[d + 2] = extent - xType.getDimSize(d + 2) - pads[d];
    declaredHigh[d + 2] = std::min(high[d + 2], pads[d + spatial]);
  }
  auto padWith = [&](Value v, double value, ArrayRef<int64_t> lo,
                     ArrayRef<int64_t> hi) {
    Shape crop(rank, 0), padLo(lo), padHi(hi);
    for (int64_t d = 0; d < rank; ++d) {
      crop[d] = std::min<int64_t>(0, hi[d]);
      padHi[d] = std::max<int64_t>(0, hi[d]);
    }
    v = g.padOrCrop(v, Shape(rank, 0), crop);
    return Value(PadOp::create(g.b, g.loc, PadMode::Constant, v, padLo, padHi,
                               APFloat(value)));
  };
  // Every window offset as a multi-index, the first kernel dimension
  // slowest.
  int64_t offsets = std::accumulate(kernel.begin(), kernel.end(), int64_t{1},
                                    std::multiplies<>());
  auto offsetOf = [&](int64_t k) {
    Shape at(rank, 0);
    for (int64_t d = spatial - 1; d >= 0; --d) {
      at[d + 2] = k % kernel[d];
      k /= kernel[d];
    }
    return at;
  };
  auto windowSlice = [&](Value padded, int64_t k) {
    Shape sliceStrides(rank, 1);
    for (int64_t d = 0; d < spatial; ++d)
      sliceStrides[d + 2] = strides[d];
    return g.slice(padded, offsetOf(k), yType.getShape(), sliceStrides);
  };
  // Divide by the number of elements the forward pass averaged: the
  // window's elements inside the input, plus its declared pads with
  // count_include_pad.
  Value ones = arith::ConstantOp::create(
      g.b, g.loc,
      DenseElementsAttr::get(
          xType, g.b.getFloatAttr(xType.getElementType(), 1.0).getValue()));
  Value counted = ones;
  Shape rest(rank, 0), restHigh(rank, 0);
  if (op.getCountIncludePad()) {
    counted = padWith(ones, 1.0, low, declaredHigh);
    for (int64_t d = 0; d < rank; ++d)
      restHigh[d] = high[d] - declaredHigh[d];
    counted = padWith(counted, 0.0, rest, restHigh);
  } else {
    counted = padWith(ones, 0.0, low, high);
  }
  Value divisor;
  for (int64_t k = 0; k < offsets; ++k) {
    Value part = windowSlice(counted, k);
    divisor = divisor ? g.add(divisor, part) : part;
  }
  SmallVector<Value> shares(offsets, g.div(dy, divisor));
  // Scatter the shares back, the last window dimension first: each pass
  // sums one kernel dimension's shares into the windows' extent along it.
  for (int64_t d = spatial - 1; d >= 0; --d) {
    SmallVector<Value> merged;
    for (size_t first = 0; first < shares.size(); first += kernel[d])
      merged.push_back(scatterWindowAxis(
          g, ArrayRef(shares).slice(first, kernel[d]), d + 2, strides[d]));
    shares = std::move(merged);
  }
  Value dxPadded = shares.front();
  Shape cropLow(rank, 0), cropHigh(rank, 0);
  for (int64_t d = 0; d < rank; ++d) {
    cropLow[d] = -low[d];
    cropHigh[d] = -high[d];
  }
  return g.padOrCrop(dxPadded, cropLow, cropHigh);
}

LogicalResult PoolOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        Value x = getInput();
        auto xType = tensorType(x);
        int64_t rank = xType.getRank();
        ArrayRef<int64_t> kernel = getKernel(), strides = getStrides();
        bool tiles = true;
        for (int64_t d = 0; d + 2 < rank; ++d)
          tiles &= kernel[d] == strides[d] &&
                   xType.getDimSize(d + 2) % kernel[d] == 0 && !getPads()[d] &&
                   !getPads()[d + rank - 2];
        if (!tiles) {
          int64_t offsets = std::accumulate(kernel.begin(), kernel.end(),
                                            int64_t{1}, std::multiplies<>());
          if (offsets > kMaxPoolWindow)
            return emitOpError()
                   << "has a gradient rule for overlapping or padded "
                      "windows of at most "
                   << kMaxPoolWindow << " elements, got " << offsets;
          if (getKind() == PoolKind::Max)
            out.push_back(MaxPoolGradOp::create(g.b, g.loc, x, getResult(), dy,
                                                kernel, strides, getPads(),
                                                getCeilMode()));
          else
            out.push_back(averagePoolGradient(g, *this, dy));
          return success();
        }
        // Non-overlapping windows tiling the input exactly: every input
        // element lies in one window, so the windows become reshaped
        // dimensions.
        Shape windows{xType.getDimSize(0), xType.getDimSize(1)}, axes;
        for (int64_t d = 0; d + 2 < rank; ++d) {
          windows.push_back(xType.getDimSize(d + 2) / kernel[d]);
          windows.push_back(kernel[d]);
          axes.push_back(windows.size() - 1);
        }
        Shape perWindow(windows);
        for (int64_t axis : axes)
          perWindow[axis] = 1;
        auto windowType = xType.clone(windows);
        Value spread = g.expand(g.reshape(dy, perWindow), windowType);
        Value dx;
        if (getKind() == PoolKind::Average) {
          int64_t size = std::accumulate(kernel.begin(), kernel.end(),
                                         int64_t{1}, std::multiplies<>());
          dx = g.div(spread, g.scalar(x, size));
        } else {
          // Shared evenly among tied maxima of a window.
          Value xw = g.reshape(x, windows);
          Value hit = CastOp::create(
              g.b, g.loc, windowType,
              EqualOp::create(
                  g.b, g.loc, xw,
                  g.expand(g.reshape(getResult(), perWindow), windowType)));
          Value ties = g.expand(g.sum(hit, axes, true), windowType);
          dx = g.div(g.mul(spread, hit), ties);
        }
        out.push_back(g.reshape(dx, xType.getShape()));
        return success();
      });
}
