//===- DataMovement.cpp - Data movement ops to linalg and tensor ----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// Ops that move elements without arithmetic: transpose, reshape, slice,
// concat, gather (with its index check), one_hot, expand, tile and pad.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::to_linalg;

namespace {

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, transposed(rewriter, op.getLoc(), adaptor.getInput(),
                                      op.getPermutation()));
    return success();
  }
};

struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(),
                                     tensorTypeOf(op.getResult()).getShape()));
    return success();
  }
};

/// A strided `tensor.extract_slice` of the window the slice reads; a
/// dimension with a negative stride is then reversed by a generic.
struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    SmallVector<AffineExpr> reversedExprs;
    bool reversed = false;
    for (auto [d, offset, size, stride] :
         llvm::enumerate(op.getOffsets(), op.getSizes(), op.getStrides())) {
      // A negative stride reads offset, offset+stride, ...: the same
      // elements as a positive one from the last of them, in reverse.
      int64_t first =
          stride < 0 && size > 0 ? offset + (size - 1) * stride : offset;
      offsets.push_back(rewriter.getIndexAttr(first));
      sizes.push_back(rewriter.getIndexAttr(size));
      strides.push_back(rewriter.getIndexAttr(std::abs(stride)));
      AffineExpr dim = getAffineDimExpr(d, ctx);
      reversedExprs.push_back(stride < 0 ? size - 1 - dim : dim);
      reversed |= stride < 0;
    }
    Value window = tensor::ExtractSliceOp::create(
        rewriter, loc, type, adaptor.getInput(), offsets, sizes, strides);
    if (reversed)
      window =
          remap(rewriter, loc, window,
                AffineMap::get(type.getRank(), 0, reversedExprs, ctx), type);
    rewriter.replaceOp(op, window);
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    Value result = emptyTensor(rewriter, loc, type);
    int64_t axis = op.getAxis(), offset = 0;
    for (Value input : adaptor.getInputs()) {
      RankedTensorType inputType = tensorTypeOf(input);
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes,
          strides(type.getRank(), rewriter.getIndexAttr(1));
      offsets[axis] = rewriter.getIndexAttr(offset);
      for (int64_t dim : inputType.getShape())
        sizes.push_back(rewriter.getIndexAttr(dim));
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result,
                                             offsets, sizes, strides);
      offset += inputType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// result[o..., j..., i...] = data[o..., indices[j...], i...], with negative
/// indices counted from the end, as ONNX specifies; any other index ends
/// the program with a message.
struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    RankedTensorType type = tensorTypeOf(op.getResult());
    RankedTensorType dataType = tensorTypeOf(data);
    int64_t axis = op.getAxis();
    int64_t indexRank = tensorTypeOf(indices).getRank();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t i = 0; i < indexRank; ++i)
      indexExprs.push_back(getAffineDimExpr(axis + i, ctx));
    SmallVector<AffineMap> maps{
        AffineMap::get(type.getRank(), 0, indexExprs, ctx),
        rewriter.getMultiDimIdentityMap(type.getRank())};
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    int64_t dim = dataType.getDimSize(axis);
    std::string what = "gather index (dimension " + std::to_string(axis) +
                       " of size " + std::to_string(dim) + ")";
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, indices,
            ValueRange{emptyTensor(rewriter, loc, type)}, maps, iterators,
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value index =
                  checkedIndex(b, nloc, op,
                               arith::IndexCastOp::create(
                                   b, nloc, b.getIndexType(), args[0]),
                               dim, what);
              SmallVector<Value> coords;
              for (int64_t d = 0; d < axis; ++d)
                coords.push_back(linalg::IndexOp::create(b, nloc, d));
              coords.push_back(index);
              for (int64_t d = axis + indexRank; d < type.getRank(); ++d)
                coords.push_back(linalg::IndexOp::create(b, nloc, d));
              Value element = tensor::ExtractOp::create(b, nloc, data, coords);
              linalg::YieldOp::create(b, nloc, element);
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// result[..., c, ...] = indices[...] == c: the indices are read without
/// the class dimension.
struct OneHotLowering : OpConversionPattern<OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    int64_t axis = op.getAxis();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis)
        indexExprs.push_back(rewriter.getAffineDimExpr(d));
    SmallVector<AffineMap> maps{
        AffineMap::get(type.getRank(), 0, indexExprs, getContext()),
        rewriter.getMultiDimIdentityMap(type.getRank())};
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    Type element = type.getElementType();
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, adaptor.getIndices(),
            ValueRange{emptyTensor(rewriter, loc, type)}, maps, iterators,
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value index = arith::IndexCastOp::create(
                  b, nloc, b.getIndexType(), args[0]);
              Value hit = arith::CmpIOp::create(
                  b, nloc, arith::CmpIPredicate::eq, index,
                  linalg::IndexOp::create(b, nloc, axis));
              linalg::YieldOp::create(
                  b, nloc,
                  arith::SelectOp::create(b, nloc, hit,
                                          scalarConstant(b, nloc, element, 1),
                                          scalarConstant(b, nloc, element, 0))
                      .getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ExpandLowering : OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       broadcastTo(rewriter, op.getLoc(), adaptor.getInput(),
                                   tensorTypeOf(op.getResult()).getShape()));
    return success();
  }
};

/// Reads input[i mod size] along each dimension.
struct TileLowering : OpConversionPattern<TileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = getContext();
    RankedTensorType type = tensorTypeOf(op.getResult());
    RankedTensorType inputType = tensorTypeOf(adaptor.getInput());
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < type.getRank(); ++d)
      exprs.push_back(getAffineDimExpr(d, ctx) % inputType.getDimSize(d));
    rewriter.replaceOp(op, remap(rewriter, op.getLoc(), adaptor.getInput(),
                                 AffineMap::get(type.getRank(), 0, exprs, ctx),
                                 type));
    return success();
  }
};

/// Constant padding is tensor.pad; reflect and edge read the input at a
/// mirrored or clamped index.
struct PadLowering : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType type = tensorTypeOf(op.getResult());
    RankedTensorType inputType = tensorTypeOf(input);
    Type elementType = type.getElementType();
    if (op.getMode() == PadMode::Constant) {
      Value value = scalarConstant(rewriter, loc, elementType,
                                   op.getValue().convertToDouble());
      SmallVector<OpFoldResult> low, high;
      for (auto [l, h] : llvm::zip(op.getLow(), op.getHigh())) {
        low.push_back(rewriter.getIndexAttr(l));
        high.push_back(rewriter.getIndexAttr(h));
      }
      rewriter.replaceOp(op, tensor::PadOp::create(rewriter, loc, type, input,
                                                   low, high, value));
      return success();
    }
    bool reflect = op.getMode() == PadMode::Reflect;
    ArrayRef<int64_t> low = op.getLow();
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ValueRange{},
            ValueRange{emptyTensor(rewriter, loc, type)},
            SmallVector<AffineMap>{
                rewriter.getMultiDimIdentityMap(type.getRank())},
            SmallVector<utils::IteratorType>(type.getRank(),
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange) {
              SmallVector<Value> coords;
              for (int64_t d = 0; d < type.getRank(); ++d) {
                Value i = linalg::IndexOp::create(b, l, d);
                Value shifted = arith::SubIOp::create(
                    b, l, i, arith::ConstantIndexOp::create(b, l, low[d]));
                Value zero = arith::ConstantIndexOp::create(b, l, 0);
                Value last = arith::ConstantIndexOp::create(
                    b, l, inputType.getDimSize(d) - 1);
                if (reflect) {
                  // -k -> k and last + k -> last - k.
                  Value abs = arith::MaxSIOp::create(
                      b, l, shifted,
                      arith::SubIOp::create(b, l, zero, shifted));
                  Value over = arith::SubIOp::create(b, l, abs, last);
                  Value mirrored = arith::SubIOp::create(b, l, last, over);
                  Value beyond = arith::CmpIOp::create(
                      b, l, arith::CmpIPredicate::sgt, abs, last);
                  coords.push_back(
                      arith::SelectOp::create(b, l, beyond, mirrored, abs));
                } else {
                  coords.push_back(arith::MinSIOp::create(
                      b, l, arith::MaxSIOp::create(b, l, shifted, zero), last));
                }
              }
              Value element = tensor::ExtractOp::create(b, l, input, coords);
              linalg::YieldOp::create(b, l, element);
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::parallax::populateParallaxDataMovementToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<TransposeLowering, ReshapeLowering, SliceLowering,
               ConcatLowering, GatherLowering, OneHotLowering, ExpandLowering,
               TileLowering, PadLowering>(patterns.getContext());
}
