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
#include "mlir/Dialect/Utils/IndexingUtils.h"
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
      Shape positions = delinearize(flat, computeStrides(kernel));
      for (int64_t d = 0; d < k; ++d) {
        int64_t tap = positions[d];
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

/// Windows of at most this many elements are unrolled into the loop body
/// of a pooling and of a max pooling's gradient.
static constexpr int64_t kUnrolledWindow = 16;

/// A max pooling and its gradient run with the channels innermost where
/// there are at least kMinChannelsLast of them, the window is unrolled, and
/// a stride is above 1 or the output's rows are shorter than
/// kMinChannelsLastRow: along such rows a kernel reads every other element
/// of a few points, which LLVM leaves scalar (ResNet-18's stem pool: rows
/// of 8), while along the channels every operand is a run.
static constexpr int64_t kMinChannelsLast = 16, kMinChannelsLastRow = 8;
static bool poolsChannelsLast(ArrayRef<int64_t> kernel,
                              ArrayRef<int64_t> strides, RankedTensorType input,
                              RankedTensorType output) {
  return input.getDimSize(1) >= kMinChannelsLast &&
         ShapedType::getNumElements(kernel) <= kUnrolledWindow &&
         (llvm::any_of(strides, [](int64_t s) { return s > 1; }) ||
          output.getShape().back() < kMinChannelsLastRow);
}

/// The permutations of an (n, c, spatial...) tensor to (n, spatial..., c)
/// and back.
static std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
channelsLastPermutations(int64_t spatialDims) {
  SmallVector<int64_t> toLast{0}, toFirst{0, spatialDims + 1};
  for (int64_t d = 0; d < spatialDims; ++d) {
    toLast.push_back(2 + d);
    toFirst.push_back(1 + d);
  }
  toLast.push_back(1);
  return {toLast, toFirst};
}

/// A max pooling's input padded with -inf, its spatial dimensions from
/// `firstSpatial`: the forward and the gradient build it alike, so that
/// CSE leaves one.
static Value maxPoolInput(OpBuilder &b, Location loc, Value input,
                          ArrayRef<int64_t> pads, int64_t firstSpatial) {
  return padSpatial(b, loc, input, pads,
                    -std::numeric_limits<double>::infinity(), firstSpatial);
}

/// The loops (n, c, o..., k...) of a reduction over each window of the
/// padded input into a pooling's result: the maps reading the input at
/// o * s + k, the window's extent (a shape-only operand: its extent enters
/// no other map) and the result at o, and the iterators, the window's
/// loops reductions.
struct WindowReduction {
  Value kernelShape;
  AffineMap input, kernel, output;
  SmallVector<utils::IteratorType> iterators;
};
static WindowReduction windowReduction(OpBuilder &b, Location loc,
                                       ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> strides,
                                       Type elementType) {
  MLIRContext *ctx = b.getContext();
  int64_t k = kernel.size(), loops = 2 * k + 2;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> in{dim(0), dim(1)}, out{dim(0), dim(1)}, window;
  for (int64_t d = 0; d < k; ++d) {
    in.push_back(dim(2 + d) * strides[d] + dim(2 + k + d));
    out.push_back(dim(2 + d));
    window.push_back(dim(2 + k + d));
  }
  SmallVector<utils::IteratorType> iterators(k + 2,
                                             utils::IteratorType::parallel);
  iterators.append(k, utils::IteratorType::reduction);
  return {tensor::EmptyOp::create(b, loc, kernel, elementType),
          AffineMap::get(loops, 0, in, ctx),
          AffineMap::get(loops, 0, window, ctx),
          AffineMap::get(loops, 0, out, ctx), iterators};
}

/// Every window's element at each position of the window (row-major), in
/// a loop nest over a pooling's result `type` (n, c, o... or, where
/// `firstSpatial` is 1, n, o..., c): the padded input and one map per
/// position, (n, c, o * s + position...), where the strides allow it, so
/// that a kernel sees one base pointer and strided loads of it (a strided
/// view per position would be as many pointers and gathers); else (a
/// stride of 1, where linalg wants a plain loop index to span its operand
/// exactly) one strided view of the input per position, read with the
/// identity.
static std::pair<SmallVector<Value>, SmallVector<AffineMap>>
windowOperands(OpBuilder &b, Location loc, Value padded,
               ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
               RankedTensorType type, int64_t firstSpatial = 2) {
  MLIRContext *ctx = b.getContext();
  int64_t k = kernel.size(), size = ShapedType::getNumElements(kernel);
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  bool oneBase = llvm::all_of(llvm::seq<int64_t>(0, k), [&](int64_t d) {
    return strides[d] > 1 || kernel[d] == 1;
  });
  AffineMap identity = AffineMap::getMultiDimIdentityMap(k + 2, ctx);
  if (oneBase) {
    for (int64_t i = 0; i < size; ++i) {
      SmallVector<AffineExpr> exprs(identity.getResults());
      for (auto [d, position] :
           llvm::enumerate(delinearize(i, computeStrides(kernel))))
        exprs[firstSpatial + d] =
            exprs[firstSpatial + d] * strides[d] + position;
      operands.push_back(padded);
      maps.push_back(AffineMap::get(k + 2, 0, exprs, ctx));
    }
    return {operands, maps};
  }
  SmallVector<OpFoldResult> sizes, strideAttrs(k + 2, b.getIndexAttr(1));
  for (int64_t extent : type.getShape())
    sizes.push_back(b.getIndexAttr(extent));
  for (auto [d, stride] : llvm::enumerate(strides))
    strideAttrs[firstSpatial + d] = b.getIndexAttr(stride);
  for (int64_t i = 0; i < size; ++i) {
    SmallVector<OpFoldResult> offsets(k + 2, b.getIndexAttr(0));
    for (auto [d, position] :
         llvm::enumerate(delinearize(i, computeStrides(kernel))))
      offsets[firstSpatial + d] = b.getIndexAttr(position);
    operands.push_back(tensor::ExtractSliceOp::create(
        b, loc, type, padded, offsets, sizes, strideAttrs));
    maps.push_back(identity);
  }
  return {operands, maps};
}

/// The pooling's pads, the trailing ones grown where ceil_mode windows
/// start in the trailing padding, so that the last window fits.
static Shape windowPads(ArrayRef<int64_t> declared, ArrayRef<int64_t> kernel,
                        ArrayRef<int64_t> strides, RankedTensorType inputType,
                        RankedTensorType outputType) {
  Shape pads(declared);
  int64_t k = kernel.size();
  for (int64_t d = 0; d < k; ++d) {
    int64_t needed =
        (outputType.getDimSize(2 + d) - 1) * strides[d] + kernel[d];
    int64_t have = inputType.getDimSize(2 + d) + pads[d] + pads[d + k];
    pads[d + k] += std::max<int64_t>(needed - have, 0);
  }
  return pads;
}

/// Windows over the padded input: max with -inf padding, or a sum divided
/// by the window size (count_include_pad) or by the number of input
/// elements in the window (the same window sum over a padded tensor of ones).
struct PoolLowering : OpConversionPattern<PoolOp> {
  using OpConversionPattern::OpConversionPattern;

  Value window(OpBuilder &b, Location loc, PoolOp op, Value input,
               RankedTensorType type, bool isMax,
               int64_t firstSpatial = 2) const {
    MLIRContext *ctx = b.getContext();
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides();
    int64_t k = type.getRank() - 2;
    auto combine = [&](OpBuilder &nb, Location l, Value acc, Value v) {
      return isMax ? maxOf(nb, l, acc, v) : addOf(nb, l, acc, v);
    };
    Type elementType = type.getElementType();
    int64_t size = ShapedType::getNumElements(kernel);
    if (size <= kUnrolledWindow) {
      // One operand per window position: an elementwise loop nest over the
      // output whose innermost loop vectorizes, instead of a short
      // reduction loop per element.
      auto [windows, maps] =
          windowOperands(b, loc, input, kernel, strides, type, firstSpatial);
      maps.push_back(AffineMap::getMultiDimIdentityMap(k + 2, ctx));
      return linalg::GenericOp::create(
                 b, loc, TypeRange{type}, windows,
                 ValueRange{emptyTensor(b, loc, type)}, maps,
                 SmallVector<utils::IteratorType>(
                     k + 2, utils::IteratorType::parallel),
                 [&](OpBuilder &nb, Location l, ValueRange v) {
                   Value r = v[0];
                   for (Value next : v.slice(1, size - 1))
                     r = combine(nb, l, r, next);
                   linalg::YieldOp::create(nb, l, r);
                 })
          .getResult(0);
    }
    WindowReduction loops =
        windowReduction(b, loc, kernel, strides, elementType);
    Value init = filledTensor(b, loc, type,
                              isMax ? lowest(b, loc, elementType)
                                    : scalarConstant(b, loc, elementType, 0));
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{input, loops.kernelShape},
               ValueRange{init},
               ArrayRef<AffineMap>{loops.input, loops.kernel, loops.output},
               loops.iterators,
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
    Shape pads = windowPads(op.getPads(), op.getKernel(), op.getStrides(),
                            inputType, type);
    bool isMax = op.getKind() == PoolKind::Max;
    if (isMax &&
        poolsChannelsLast(op.getKernel(), op.getStrides(), inputType, type)) {
      auto [toLast, toFirst] = channelsLastPermutations(type.getRank() - 2);
      Value input = maxPoolInput(
          rewriter, loc, transposed(rewriter, loc, adaptor.getInput(), toLast),
          pads, /*firstSpatial=*/1);
      RankedTensorType lastType = RankedTensorType::get(
          applyPermutation(type.getShape(), toLast), elementType);
      Value result = window(rewriter, loc, op, input, lastType, isMax,
                            /*firstSpatial=*/1);
      rewriter.replaceOp(op, transposed(rewriter, loc, result, toFirst));
      return success();
    }
    Value input = isMax
                      ? maxPoolInput(rewriter, loc, adaptor.getInput(), pads,
                                     /*firstSpatial=*/2)
                      : padSpatial(rewriter, loc, adaptor.getInput(), pads, 0);
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

/// dX of a max pooling: each window's dY shared evenly among the window's
/// elements equal to its maximum. One elementwise pass over the output
/// counts every window's maxima, reading the padded input as the forward
/// does (the same pad, which CSE merges), and divides dY by the count.
/// Then one pass per residue class of the input positions (modulo the
/// stride, per dimension) writes the class's strided part of dX: each
/// element adds the shares of the windows whose maximum it is, at most
/// ceil(kernel / stride) windows per dimension, in row-major order of
/// their window positions. A pooling of stride 2 has 4 such passes (a 2-d
/// 3x3 one: of 4, 2, 2 and 1 windows), where one pass per window position
/// would be 9 passes over strided parts of dX.
struct MaxPoolGradLowering : OpConversionPattern<MaxPoolGradOp> {
  using OpConversionPattern::OpConversionPattern;

  /// dY divided by the number of each window's elements equal to Y.
  Value shares(OpBuilder &b, Location loc, MaxPoolGradOp op, Value padded,
               Value y, Value dy, int64_t firstSpatial) const {
    MLIRContext *ctx = b.getContext();
    RankedTensorType type = tensorTypeOf(y);
    Type elementType = type.getElementType();
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides();
    Value one = scalarConstant(b, loc, elementType, 1),
          zero = scalarConstant(b, loc, elementType, 0);
    auto hit = [&](OpBuilder &nb, Location l, Value element, Value max) {
      Value equal =
          arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, element, max);
      return arith::SelectOp::create(nb, l, equal, one, zero);
    };
    auto divide = [](OpBuilder &nb, Location l, ValueRange v) -> Value {
      return arith::DivFOp::create(nb, l, v[0], v[1]);
    };
    int64_t taps = ShapedType::getNumElements(kernel);
    if (taps <= kUnrolledWindow) {
      auto [windows, windowMaps] =
          windowOperands(b, loc, padded, kernel, strides, type, firstSpatial);
      SmallVector<Value> operands{y, dy};
      llvm::append_range(operands, windows);
      SmallVector<AffineMap> maps(
          2, AffineMap::getMultiDimIdentityMap(type.getRank(), ctx));
      llvm::append_range(maps, windowMaps);
      maps.push_back(maps.front());
      return linalg::GenericOp::create(
                 b, loc, TypeRange{type}, operands,
                 ValueRange{emptyTensor(b, loc, type)}, maps,
                 SmallVector<utils::IteratorType>(
                     type.getRank(), utils::IteratorType::parallel),
                 [&](OpBuilder &nb, Location l, ValueRange v) {
                   Value count = hit(nb, l, v[2], v[0]);
                   for (Value element : v.slice(3, taps - 1))
                     count = arith::AddFOp::create(nb, l, count,
                                                   hit(nb, l, element, v[0]));
                   linalg::YieldOp::create(
                       nb, l, Value(arith::DivFOp::create(nb, l, v[1], count)));
                 })
          .getResult(0);
    }
    // count[n, c, o] += in[n, c, o * s + k] == y[n, c, o] (NCHW only).
    assert(firstSpatial == 2 && "channels-last windows are unrolled");
    WindowReduction loops =
        windowReduction(b, loc, kernel, strides, elementType);
    Value zeros = filledTensor(b, loc, type, zero);
    Value count =
        linalg::GenericOp::create(
            b, loc, TypeRange{type}, ValueRange{padded, loops.kernelShape, y},
            ValueRange{zeros},
            ArrayRef<AffineMap>{loops.input, loops.kernel, loops.output,
                                loops.output},
            loops.iterators,
            [&](OpBuilder &nb, Location l, ValueRange v) {
              linalg::YieldOp::create(
                  nb, l,
                  Value(arith::AddFOp::create(nb, l, v[3],
                                              hit(nb, l, v[0], v[2]))));
            })
            .getResult(0);
    return elementwise(b, loc, type, ValueRange{dy, count}, divide);
  }

  LogicalResult
  matchAndRewrite(MaxPoolGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), y = adaptor.getOutput(),
          dy = adaptor.getOutputGrad();
    RankedTensorType inType = tensorTypeOf(x), outType = tensorTypeOf(y);
    Type elementType = inType.getElementType();
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides();
    ArrayRef<int64_t> inSpatial = inType.getShape().drop_front(2);
    ArrayRef<int64_t> outSpatial = outType.getShape().drop_front(2);
    int64_t k = inType.getRank() - 2;
    Shape pads = windowPads(op.getPads(), kernel, strides, inType, outType);

    // Where the forward pooling runs with the channels innermost, so do the
    // gradient's passes, over NHWC copies of X, Y and dY (the forward's own,
    // after CSE and the folding of transposes): two transposes of the
    // input's size pay for runs along the channels.
    bool channelsLast = poolsChannelsLast(kernel, strides, inType, outType);
    int64_t first = channelsLast ? 1 : 2, channel = channelsLast ? k + 1 : 1;
    auto [toLast, toFirst] = channelsLastPermutations(k);
    if (channelsLast) {
      x = transposed(rewriter, loc, x, toLast);
      y = transposed(rewriter, loc, y, toLast);
      dy = transposed(rewriter, loc, dy, toLast);
    }
    RankedTensorType type = tensorTypeOf(x);
    Value share =
        shares(rewriter, loc, op, maxPoolInput(rewriter, loc, x, pads, first),
               y, dy, first);

    // Per spatial dimension, the input positions i = q * s + r - pad of
    // residue r (mod s) are element r + s * j of window q - j, j = 0, 1,
    // ...: a strided part of dX, and shifted views of Y and the shares,
    // padded with zeros (no window) for the windows before the first and
    // after the last.
    struct Residue {
      int64_t residue, first, count, taps;
    };
    SmallVector<SmallVector<Residue>> residues(k);
    Shape before(k, 0), after(k, 0);
    for (int64_t d = 0; d < k; ++d) {
      for (int64_t r = 0; r < strides[d]; ++r) {
        int64_t lo = llvm::divideCeilSigned(pads[d] - r, strides[d]);
        int64_t hi =
            llvm::divideFloorSigned(pads[d] + inSpatial[d] - 1 - r, strides[d]);
        int64_t taps =
            r < kernel[d] ? llvm::divideCeil(kernel[d] - r, strides[d]) : 0;
        if (hi < lo)
          continue;
        residues[d].push_back({r, lo, hi - lo + 1, taps});
        if (taps) {
          before[d] = std::max(before[d], taps - 1 - lo);
          after[d] = std::max(after[d], hi - (outSpatial[d] - 1));
        }
      }
    }
    Shape windowPadding(before);
    windowPadding.append(after);
    Value paddedY = padSpatial(rewriter, loc, y, windowPadding, 0, first);
    Value paddedShare =
        padSpatial(rewriter, loc, share, windowPadding, 0, first);

    // Every position of dX lies in one residue class; those of a class with
    // no window element (a stride longer than the kernel) stay 0. The
    // classes' kernels add to the zeros they read, so that each writes its
    // part of dX in place.
    Value result = filledTensor(rewriter, loc, type,
                                scalarConstant(rewriter, loc, elementType, 0));
    SmallVector<utils::IteratorType> parallel(k + 2,
                                              utils::IteratorType::parallel);
    OpFoldResult zero = rewriter.getIndexAttr(0),
                 one = rewriter.getIndexAttr(1);
    // One kernel per class (a residue per spatial dimension): the element
    // at each of its positions sums the shares of the windows whose maximum
    // it is, its window elements in row-major order.
    Shape classCounts;
    for (auto &perDim : residues)
      classCounts.push_back(perDim.size());
    for (int64_t flat = 0, e = ShapedType::getNumElements(classCounts);
         flat < e; ++flat) {
      Shape which = delinearize(flat, computeStrides(classCounts)), tapCounts;
      SmallVector<OpFoldResult> offsets(k + 2, zero), sizes(k + 2),
          steps(k + 2, one);
      sizes[0] = rewriter.getIndexAttr(type.getDimSize(0));
      sizes[channel] = rewriter.getIndexAttr(type.getDimSize(channel));
      for (int64_t d = 0; d < k; ++d) {
        Residue r = residues[d][which[d]];
        tapCounts.push_back(r.taps);
        offsets[first + d] =
            rewriter.getIndexAttr(r.first * strides[d] + r.residue - pads[d]);
        sizes[first + d] = rewriter.getIndexAttr(r.count);
        steps[first + d] = rewriter.getIndexAttr(strides[d]);
      }
      int64_t taps = ShapedType::getNumElements(tapCounts);
      if (taps == 0)
        continue;
      // The input at the class's positions (a strided view), Y and the
      // shares at each element's windows (contiguous views).
      SmallVector<Value> operands{tensor::ExtractSliceOp::create(
          rewriter, loc, x, offsets, sizes, steps)};
      SmallVector<OpFoldResult> unit(k + 2, one);
      for (int64_t tap = 0; tap < taps; ++tap) {
        Shape j = delinearize(tap, computeStrides(tapCounts));
        SmallVector<OpFoldResult> windows(k + 2, zero);
        for (int64_t d = 0; d < k; ++d)
          windows[first + d] = rewriter.getIndexAttr(
              residues[d][which[d]].first - j[d] + before[d]);
        for (Value from : {paddedY, paddedShare})
          operands.push_back(tensor::ExtractSliceOp::create(
              rewriter, loc, from, windows, sizes, unit));
      }
      Value part = tensor::ExtractSliceOp::create(rewriter, loc, result,
                                                  offsets, sizes, steps);
      SmallVector<AffineMap> maps(
          operands.size() + 1, AffineMap::getMultiDimIdentityMap(k + 2, ctx));
      Value sum =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{part.getType()}, operands,
              ValueRange{part}, maps, parallel,
              [&](OpBuilder &nb, Location l, ValueRange v) {
                Value acc = v.back();
                for (int64_t tap = 0; tap < taps; ++tap) {
                  Value isMax = arith::CmpFOp::create(
                      nb, l, arith::CmpFPredicate::OEQ, v[0], v[1 + 2 * tap]);
                  acc = arith::SelectOp::create(
                      nb, l, isMax, addOf(nb, l, acc, v[2 + 2 * tap]), acc);
                }
                linalg::YieldOp::create(nb, l, acc);
              })
              .getResult(0);
      result = tensor::InsertSliceOp::create(rewriter, loc, sum, result,
                                             offsets, sizes, steps);
    }
    if (channelsLast)
      result = transposed(rewriter, loc, result, toFirst);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::parallax::populateParallaxConvolutionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ConvLowering, ConvFilterGradLowering, ConvInputGradLowering,
               PoolLowering, MaxPoolGradLowering>(patterns.getContext());
}
