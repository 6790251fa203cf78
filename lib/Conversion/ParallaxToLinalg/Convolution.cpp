//===- Convolution.cpp - Convolutions and pooling to linalg ---------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// Ungrouped f32 convolutions as one matrix product over the whole batch
// (im2col), grouped ones as a linalg.generic, the filter gradient
// (conv_filter_grad) as one product with the forward's patches (grouped: a
// linalg.generic), the input gradient (conv_input_grad) as one product and
// col2im, pooling as windowed loops.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::to_linalg;

namespace {

/// A matrix product's [A*S, M] (S the product of `spatial`, rows A-major)
/// as [A, M, spatial...]: a reshape to [A, spatial..., M], then a
/// transpose.
Value rowsToChannelFirst(OpBuilder &b, Location loc, Value rows, int64_t lead,
                         ArrayRef<int64_t> spatial) {
  int64_t k = spatial.size();
  Shape unflat{lead};
  llvm::append_range(unflat, spatial);
  unflat.push_back(tensorTypeOf(rows).getDimSize(1));
  SmallVector<int64_t> perm{0, k + 1};
  for (int64_t d = 0; d < k; ++d)
    perm.push_back(1 + d);
  return transposed(b, loc, reshapeTo(b, loc, rows, unflat), perm);
}

/// Whether an ungrouped convolution's patches are pixel-major: when the
/// kernel is wider than the output, the copy's innermost loop runs over
/// the kernel (see convolveAsMatmul). The forward convolution and its
/// filter gradient choose alike, so that CSE merges their patch copies.
bool usesPixelMajorPatches(ArrayRef<int64_t> kernel,
                           ArrayRef<int64_t> outSpatial) {
  return outSpatial.back() < kernel.back();
}

/// The patches of `input` (already padded), each an input element
/// in[n, c, o * s + k * d], K the product of `kernel` and O of
/// `outSpatial`:
/// - channel-major, [C*K, N*O]: loops (c, k..., n, o...), the output's
///   pixels innermost;
/// - pixel-major, [N*O, C*K]: loops (n, o..., c, k...), the kernel's
///   positions innermost.
Value convolutionPatches(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> kernel, ArrayRef<int64_t> outSpatial,
                         ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                         bool pixelMajor) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType inputType = tensorTypeOf(input);
  int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1);
  int64_t k = kernel.size();
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  // Loop positions of n, c, the first kernel and the first output
  // dimension; the patch tensor has the loops' shape.
  int64_t nAt, cAt, kAt, oAt;
  Shape patchShape;
  if (pixelMajor) {
    nAt = 0, oAt = 1, cAt = k + 1, kAt = k + 2;
    patchShape.push_back(n);
    llvm::append_range(patchShape, outSpatial);
    patchShape.push_back(c);
    llvm::append_range(patchShape, kernel);
  } else {
    cAt = 0, kAt = 1, nAt = k + 1, oAt = k + 2;
    patchShape.push_back(c);
    llvm::append_range(patchShape, kernel);
    patchShape.push_back(n);
    llvm::append_range(patchShape, outSpatial);
  }
  SmallVector<AffineExpr> in{dim(nAt), dim(cAt)};
  for (int64_t d = 0; d < k; ++d)
    in.push_back(dim(oAt + d) * strides[d] + dim(kAt + d) * dilations[d]);
  Value patches =
      remap(b, loc, input, AffineMap::get(patchShape.size(), 0, in, ctx),
            RankedTensorType::get(patchShape, inputType.getElementType()));
  int64_t ck = c * ShapedType::getNumElements(kernel);
  int64_t no = n * ShapedType::getNumElements(outSpatial);
  return pixelMajor ? reshapeTo(b, loc, patches, {no, ck})
                    : reshapeTo(b, loc, patches, {ck, no});
}

/// A zero-initialized matrix product `lhs` [M, K] x `rhs` [K, N].
Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Type elementType = tensorTypeOf(lhs).getElementType();
  auto type = RankedTensorType::get(
      {tensorTypeOf(lhs).getDimSize(0), tensorTypeOf(rhs).getDimSize(1)},
      elementType);
  return linalg::MatmulOp::create(
             b, loc, ValueRange{lhs, rhs},
             ValueRange{filledTensor(b, loc, type,
                                     scalarConstant(b, loc, elementType, 0))})
      .getResult(0);
}

/// A linalg.generic accumulating `lhs * rhs` into `init` over `maps`' loops,
/// the first `parallel` of them parallel and the rest reductions.
Value multiplyAccumulate(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Value init, ArrayRef<AffineMap> maps,
                         int64_t parallel) {
  SmallVector<utils::IteratorType> iterators(maps.front().getNumDims(),
                                             utils::IteratorType::reduction);
  std::fill_n(iterators.begin(), parallel, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{lhs, rhs},
             ValueRange{init}, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange v) {
               Value product = arith::MulFOp::create(nb, l, v[0], v[1]);
               linalg::YieldOp::create(
                   nb, l,
                   arith::AddFOp::create(nb, l, v[2], product).getResult());
             })
      .getResult(0);
}

/// DY [N, M, O...] as the rows [M, N*O] of a matrix product; the filter
/// gradient and the input gradient build the same transpose, which CSE
/// merges.
Value gradientRows(OpBuilder &b, Location loc, Value dy) {
  RankedTensorType type = tensorTypeOf(dy);
  int64_t n = type.getDimSize(0), m = type.getDimSize(1);
  int64_t o = ShapedType::getNumElements(type.getShape().drop_front(2));
  return reshapeTo(
      b, loc, transposed(b, loc, reshapeTo(b, loc, dy, {n, m, o}), {1, 0, 2}),
      {m, n * o});
}

/// The filter gradient of a grouped convolution as one loop nest
/// (f, c, k_1..k_k, n, o_1..o_k): dW[f, c, k] += X[n, group(f) * C/G + c,
/// o * s + k * d] * DY[n, f, o]. Depthwise filters have one channel per
/// group, so this is one pass over X and DY per kernel position.
Value groupedFilterGradient(OpBuilder &b, Location loc, ConvFilterGradOp op,
                            ConvFilterGradOp::Adaptor adaptor) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType type = tensorTypeOf(op.getResult());
  int64_t k = op.getKernel().size();
  int64_t perGroup = type.getDimSize(0) / op.getGroups();
  int64_t channels = type.getDimSize(1);
  int64_t loops = 2 * k + 3;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> in{dim(k + 2),
                             dim(0).floorDiv(perGroup) * channels + dim(1)};
  SmallVector<AffineExpr> grad{dim(k + 2), dim(0)};
  SmallVector<AffineExpr> out{dim(0), dim(1)};
  for (int64_t d = 0; d < k; ++d) {
    in.push_back(dim(k + 3 + d) * op.getStrides()[d] +
                 dim(2 + d) * op.getDilations()[d]);
    grad.push_back(dim(k + 3 + d));
    out.push_back(dim(2 + d));
  }
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, in, ctx),
                              AffineMap::get(loops, 0, grad, ctx),
                              AffineMap::get(loops, 0, out, ctx)};
  Value init = filledTensor(b, loc, type,
                            scalarConstant(b, loc, type.getElementType(), 0));
  return multiplyAccumulate(b, loc, adaptor.getInput(), adaptor.getOutputGrad(),
                            init, maps, /*parallel=*/k + 2);
}

/// dW [M, C, K...] from the forward convolution's own patches of the padded
/// input X [N, C, ...] (the same copy, which CSE merges with the
/// forward's): one matrix product over all images and pixels, DY as
/// [M, N*O] times the patches as [N*O, C*K] (channel-major patches are
/// read transposed, which BLAS does without a copy). No per-image
/// products to sum, no second patch tensor.
struct ConvFilterGradLowering : OpConversionPattern<ConvFilterGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvFilterGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    if (op.getGroups() != 1) {
      rewriter.replaceOp(op, groupedFilterGradient(rewriter, loc, op, adaptor));
      return success();
    }
    Value dy = adaptor.getOutputGrad();
    RankedTensorType dyType = tensorTypeOf(dy);
    ArrayRef<int64_t> kernel = op.getKernel();
    ArrayRef<int64_t> outSpatial = dyType.getShape().drop_front(2);
    bool pixelMajor = usesPixelMajorPatches(kernel, outSpatial);
    Value patches = convolutionPatches(rewriter, loc, adaptor.getInput(),
                                       kernel, outSpatial, op.getStrides(),
                                       op.getDilations(), pixelMajor);
    if (!pixelMajor)
      patches = transposed(rewriter, loc, patches, {1, 0});
    rewriter.replaceOp(
        op, reshapeTo(
                rewriter, loc,
                matmul(rewriter, loc, gradientRows(rewriter, loc, dy), patches),
                type.getShape()));
    return success();
  }
};

/// dX [N, C, I...] (col2im): the filter read transposed, [C*K, M] (a view
/// for BLAS, no copy), times DY as [M, N*O] gives every kernel position's
/// contribution from every output pixel, [C, K..., N, O...]. Each kernel
/// position's contributions are then added into the strided window of dX
/// they came from, dropping those that fall into the padding: one
/// accumulating pass per kernel position, each over at most the output's
/// size. Unlike a transposed convolution, it neither copies the filter
/// (flipped, channels swapped) nor multiplies the zeros a strided
/// convolution's gradient would be dilated with.
struct ConvInputGradLowering : OpConversionPattern<ConvInputGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvInputGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    Value dy = adaptor.getOutputGrad();
    RankedTensorType dyType = tensorTypeOf(dy);
    RankedTensorType filterType = tensorTypeOf(adaptor.getFilter());
    int64_t k = type.getRank() - 2;
    int64_t n = type.getDimSize(0), c = type.getDimSize(1);
    int64_t m = dyType.getDimSize(1);
    ArrayRef<int64_t> inSpatial = type.getShape().drop_front(2);
    ArrayRef<int64_t> outSpatial = dyType.getShape().drop_front(2);
    ArrayRef<int64_t> kernel = filterType.getShape().drop_front(2);
    ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads();
    ArrayRef<int64_t> dilations = op.getDilations();
    int64_t taps = ShapedType::getNumElements(kernel);

    Value weights = transposed(
        rewriter, loc,
        reshapeTo(rewriter, loc, adaptor.getFilter(), {m, c * taps}), {1, 0});
    Shape columnsShape{c};
    llvm::append_range(columnsShape, kernel);
    columnsShape.push_back(n);
    llvm::append_range(columnsShape, outSpatial);
    Value columns = reshapeTo(
        rewriter, loc,
        matmul(rewriter, loc, weights, gradientRows(rewriter, loc, dy)),
        columnsShape);

    Value result =
        filledTensor(rewriter, loc, type,
                     scalarConstant(rewriter, loc, type.getElementType(), 0));
    // Loops (n, c, o...) over a kernel position's window of dX, reading
    // that position's columns at [c, 0..., n, o...]: the same for every
    // position.
    SmallVector<AffineExpr> read{getAffineDimExpr(1, ctx)};
    read.append(k, getAffineConstantExpr(0, ctx));
    read.push_back(getAffineDimExpr(0, ctx));
    for (int64_t d = 0; d < k; ++d)
      read.push_back(getAffineDimExpr(2 + d, ctx));
    SmallVector<AffineMap> maps{AffineMap::get(k + 2, 0, read, ctx),
                                AffineMap::getMultiDimIdentityMap(k + 2, ctx)};
    SmallVector<utils::IteratorType> parallel(k + 2,
                                              utils::IteratorType::parallel);
    OpFoldResult zero = rewriter.getIndexAttr(0),
                 one = rewriter.getIndexAttr(1);
    for (int64_t flat = 0; flat < taps; ++flat) {
      // Per spatial dimension, the kernel position and the outputs o whose
      // input o * s + tap * d - pad lies inside the input, o in [lo, hi]:
      // the window of dX they reach ([N, C, count...] from lo * s + tap *
      // d - pad, step s) and their columns ([C, 1..., N, count...]).
      SmallVector<OpFoldResult> offsets(k + 2, zero), sizes(k + 2, zero),
          steps(k + 2, one);
      sizes[0] = rewriter.getIndexAttr(n);
      sizes[1] = rewriter.getIndexAttr(c);
      SmallVector<OpFoldResult> from(2 * k + 2, zero), part(2 * k + 2, one);
      part[0] = rewriter.getIndexAttr(c);
      part[k + 1] = rewriter.getIndexAttr(n);
      bool inside = true;
      for (int64_t d = k - 1, rest = flat; d >= 0; --d) {
        int64_t tap = rest % kernel[d];
        rest /= kernel[d];
        int64_t shift = tap * dilations[d] - pads[d];
        int64_t lo = shift >= 0 ? 0 : llvm::divideCeil(-shift, strides[d]);
        int64_t hi = std::min(
            outSpatial[d] - 1,
            llvm::divideFloorSigned(inSpatial[d] - 1 - shift, strides[d]));
        inside &= hi >= lo;
        OpFoldResult count = rewriter.getIndexAttr(hi - lo + 1);
        offsets[2 + d] = rewriter.getIndexAttr(lo * strides[d] + shift);
        sizes[2 + d] = count;
        steps[2 + d] = rewriter.getIndexAttr(strides[d]);
        from[1 + d] = rewriter.getIndexAttr(tap);
        from[k + 2 + d] = rewriter.getIndexAttr(lo);
        part[k + 2 + d] = count;
      }
      if (!inside)
        continue;
      Value tapColumns = tensor::ExtractSliceOp::create(
          rewriter, loc, columns, from, part,
          SmallVector<OpFoldResult>(2 * k + 2, one));
      Value window = tensor::ExtractSliceOp::create(rewriter, loc, result,
                                                    offsets, sizes, steps);
      Value sum =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{window.getType()},
              ValueRange{tapColumns}, ValueRange{window}, maps, parallel,
              [](OpBuilder &nb, Location l, ValueRange v) {
                linalg::YieldOp::create(nb, l, addOf(nb, l, v[1], v[0]));
              })
              .getResult(0);
      result = tensor::InsertSliceOp::create(rewriter, loc, sum, result,
                                             offsets, sizes, steps);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// An ungrouped convolution as one matrix product (im2col), which
/// --parallax-linalg-to-blas sends to BLAS: all images at once, so the
/// filter is read as it is (no copy per image) and BLAS gets one large
/// product. The patches' layout puts the longer of the last output and
/// kernel dimensions innermost in the copy (a contiguous, vectorizable run
/// of the input for unit strides and dilations):
/// - channel-major (outputs at least as wide as the kernel, the usual
///   case): the filter [M, C*K] times P [C*K, N*O] gives [M, N, O...]; a
///   transpose restores N x M x O;
/// - pixel-major (kernels wider than the output): P [N*O, C*K] times the
///   filter as [C*K, M] gives [N*O, M]; a transpose restores N x M x O.
Value convolveAsMatmul(OpBuilder &b, Location loc, ConvOp op, Value input,
                       Value filter, RankedTensorType type) {
  RankedTensorType filterType = tensorTypeOf(filter);
  int64_t k = type.getRank() - 2;
  int64_t n = type.getDimSize(0), m = type.getDimSize(1);
  int64_t c = filterType.getDimSize(1);
  ArrayRef<int64_t> outSpatial = type.getShape().drop_front(2);
  ArrayRef<int64_t> kernel = filterType.getShape().drop_front(2);
  int64_t ck = c * ShapedType::getNumElements(kernel);
  bool pixelMajor = usesPixelMajorPatches(kernel, outSpatial);
  Value patches =
      convolutionPatches(b, loc, input, kernel, outSpatial, op.getStrides(),
                         op.getDilations(), pixelMajor);
  Value weights = reshapeTo(b, loc, filter, {m, ck});
  if (pixelMajor)
    return rowsToChannelFirst(
        b, loc, matmul(b, loc, patches, transposed(b, loc, weights, {1, 0})), n,
        outSpatial);
  Shape unflat{m, n};
  llvm::append_range(unflat, outSpatial);
  SmallVector<int64_t> perm{1, 0};
  for (int64_t d = 0; d < k; ++d)
    perm.push_back(2 + d);
  return transposed(b, loc,
                    reshapeTo(b, loc, matmul(b, loc, weights, patches), unflat),
                    perm);
}

/// Loops (n, f, o_1..o_k, c, k_1..k_k) of a grouped N-d convolution:
/// out[n, f, o] += in[n, group(f) * C/g + c, o * s + k * d] * w[f, c, k].
/// Ungrouped convolutions go through convolveAsMatmul instead.
struct ConvLowering : OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    RankedTensorType filterType = tensorTypeOf(adaptor.getFilter());
    Type elementType = type.getElementType();
    int64_t k = type.getRank() - 2;
    int64_t groups = op.getGroups();
    int64_t featuresPerGroup = filterType.getDimSize(0) / groups;
    int64_t channelsPerGroup = filterType.getDimSize(1);
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPads(), 0);
    if (groups == 1 && type.getElementType().isF32()) {
      Value result =
          convolveAsMatmul(rewriter, loc, op, input, adaptor.getFilter(), type);
      if (Value bias = adaptor.getBias()) {
        Shape biasShape(k + 1, 1);
        biasShape[0] = type.getDimSize(1);
        result = elementwise(
            rewriter, loc, type,
            ValueRange{result, reshapeTo(rewriter, loc, bias, biasShape)},
            [](OpBuilder &b, Location l, ValueRange v) -> Value {
              return arith::AddFOp::create(b, l, v[0], v[1]);
            });
      }
      rewriter.replaceOp(op, result);
      return success();
    }
    // Loop dimensions: 0 = n, 1 = f, 2..k+1 = o, k+2 = c, k+3.. = kernel.
    int64_t loops = 2 * k + 3;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> in{
        dim(0),
        dim(1).floorDiv(featuresPerGroup) * channelsPerGroup + dim(k + 2)};
    SmallVector<AffineExpr> filter{dim(1), dim(k + 2)};
    SmallVector<AffineExpr> out{dim(0), dim(1)};
    for (int64_t d = 0; d < k; ++d) {
      in.push_back(dim(2 + d) * op.getStrides()[d] +
                   dim(k + 3 + d) * op.getDilations()[d]);
      filter.push_back(dim(k + 3 + d));
      out.push_back(dim(2 + d));
    }
    SmallVector<AffineMap> maps{AffineMap::get(loops, 0, in, ctx),
                                AffineMap::get(loops, 0, filter, ctx),
                                AffineMap::get(loops, 0, out, ctx)};
    Value init;
    if (Value bias = adaptor.getBias()) {
      Shape biasShape(k + 1, 1);
      biasShape[0] = type.getDimSize(1);
      init =
          broadcastTo(rewriter, loc, reshapeTo(rewriter, loc, bias, biasShape),
                      type.getShape());
    } else {
      init = filledTensor(rewriter, loc, type,
                          scalarConstant(rewriter, loc, elementType, 0));
    }
    rewriter.replaceOp(op, multiplyAccumulate(rewriter, loc, input,
                                              adaptor.getFilter(), init, maps,
                                              /*parallel=*/k + 2));
    return success();
  }
};

/// Windows over the padded input: max with -inf padding, or a sum divided
/// by the window size (count_include_pad) or by the number of input
/// elements in the window (the same window sum over a padded tensor of ones).
struct PoolLowering : OpConversionPattern<PoolOp> {
  using OpConversionPattern::OpConversionPattern;

  /// Windows of at most this many elements are unrolled into the loop
  /// body.
  static constexpr int64_t kUnrolledWindow = 16;

  Value window(OpBuilder &b, Location loc, PoolOp op, Value input,
               RankedTensorType type, bool isMax) const {
    MLIRContext *ctx = b.getContext();
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides();
    int64_t k = type.getRank() - 2;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    auto combine = [&](OpBuilder &nb, Location l, Value acc, Value v) {
      return isMax ? maxOf(nb, l, acc, v) : addOf(nb, l, acc, v);
    };
    Type elementType = type.getElementType();
    int64_t size = ShapedType::getNumElements(kernel);
    if (size <= kUnrolledWindow) {
      // One operand per window position, a strided slice of the input (a
      // view after bufferization): an elementwise loop nest over the
      // output whose innermost loop vectorizes, instead of a short
      // reduction loop per element.
      SmallVector<Value> windows;
      SmallVector<OpFoldResult> sizes, strideAttrs;
      for (int64_t extent : type.getShape())
        sizes.push_back(b.getIndexAttr(extent));
      strideAttrs.assign(2, b.getIndexAttr(1));
      for (int64_t stride : strides)
        strideAttrs.push_back(b.getIndexAttr(stride));
      for (int64_t i = 0; i < size; ++i) {
        SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0));
        for (int64_t d = 0, rest = i; d < k; ++d) {
          int64_t inner = ShapedType::getNumElements(kernel.drop_front(d + 1));
          offsets.push_back(b.getIndexAttr(rest / inner));
          rest %= inner;
        }
        windows.push_back(tensor::ExtractSliceOp::create(
            b, loc, type, input, offsets, sizes, strideAttrs));
      }
      return elementwise(b, loc, type, windows,
                         [&](OpBuilder &nb, Location l, ValueRange v) {
                           Value r = v[0];
                           for (Value next : v.drop_front())
                             r = combine(nb, l, r, next);
                           return r;
                         });
    }
    int64_t loops = 2 * k + 2;
    SmallVector<AffineExpr> in{dim(0), dim(1)}, out{dim(0), dim(1)};
    for (int64_t d = 0; d < k; ++d) {
      in.push_back(dim(2 + d) * strides[d] + dim(2 + k + d));
      out.push_back(dim(2 + d));
    }
    // The kernel extent enters through a shape-only operand.
    Value kernelShape = tensor::EmptyOp::create(b, loc, kernel, elementType);
    SmallVector<AffineExpr> kernelExprs;
    for (int64_t d = 0; d < k; ++d)
      kernelExprs.push_back(dim(2 + k + d));
    SmallVector<AffineMap> maps{AffineMap::get(loops, 0, in, ctx),
                                AffineMap::get(loops, 0, kernelExprs, ctx),
                                AffineMap::get(loops, 0, out, ctx)};
    SmallVector<utils::IteratorType> iterators(k + 2,
                                               utils::IteratorType::parallel);
    iterators.append(k, utils::IteratorType::reduction);
    Value init = filledTensor(b, loc, type,
                              isMax ? lowest(b, loc, elementType)
                                    : scalarConstant(b, loc, elementType, 0));
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{input, kernelShape},
               ValueRange{init}, maps, iterators,
               [&](OpBuilder &nb, Location l, ValueRange v) {
                 linalg::YieldOp::create(nb, l, combine(nb, l, v[2], v[0]));
               })
        .getResult(0);
  }

  LogicalResult
  matchAndRewrite(PoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    RankedTensorType inputType = tensorTypeOf(adaptor.getInput());
    Type elementType = type.getElementType();
    // ceil_mode windows may start in the trailing padding: pad enough for
    // the last window to fit.
    Shape pads(op.getPads());
    int64_t k = type.getRank() - 2;
    for (int64_t d = 0; d < k; ++d) {
      int64_t needed =
          (type.getDimSize(2 + d) - 1) * op.getStrides()[d] + op.getKernel()[d];
      int64_t have = inputType.getDimSize(2 + d) + pads[d] + pads[d + k];
      pads[d + k] += std::max<int64_t>(needed - have, 0);
    }
    bool isMax = op.getKind() == PoolKind::Max;
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), pads,
                   isMax ? -std::numeric_limits<double>::infinity() : 0);
    Value result = window(rewriter, loc, op, input, type, isMax);
    if (!isMax) {
      Value divisor;
      if (op.getCountIncludePad()) {
        int64_t size = 1;
        for (int64_t e : op.getKernel())
          size *= e;
        divisor =
            filledTensor(rewriter, loc, type,
                         scalarConstant(rewriter, loc, elementType, size));
      } else {
        Value ones =
            filledTensor(rewriter, loc, inputType,
                         scalarConstant(rewriter, loc, elementType, 1));
        divisor =
            window(rewriter, loc, op, padSpatial(rewriter, loc, ones, pads, 0),
                   type, /*isMax=*/false);
      }
      result = elementwise(rewriter, loc, type, ValueRange{result, divisor},
                           [](OpBuilder &b, Location l, ValueRange v) -> Value {
                             return arith::DivFOp::create(b, l, v[0], v[1]);
                           });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::parallax::populateParallaxConvolutionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ConvLowering, ConvFilterGradLowering, ConvInputGradLowering,
               PoolLowering>(patterns.getContext());
}
