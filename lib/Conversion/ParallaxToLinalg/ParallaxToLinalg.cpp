//===- ParallaxToLinalg.cpp - Parallax compute ops to linalg --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "../RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_CONVERTPARALLAXTOLINALG
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

using Shape = SmallVector<int64_t>;
using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

/// A scalar constant of `type` (float or integer).
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar) {
  return linalg::FillOp::create(b, loc, ValueRange{scalar},
                                ValueRange{emptyTensor(b, loc, type)})
      .getResult(0);
}

/// The indexing map reading an operand of `shape` broadcast (numpy style,
/// aligned on the right) into a loop nest over `resultShape`.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = resultShape.size() - shape.size();
  for (auto [i, dim] : llvm::enumerate(shape)) {
    int64_t loop = offset + i;
    exprs.push_back(dim == 1 && resultShape[loop] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(loop, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, ctx);
}

/// A `linalg.generic` computing `body(operands...)` elementwise into
/// `resultType`, broadcasting every operand.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange operands, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(broadcastMap(ctx, tensorTypeOf(operand).getShape(),
                                resultType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, operands,
             ValueRange{emptyTensor(b, loc, resultType)}, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value result = body(nb, nloc, args.drop_back());
               linalg::YieldOp::create(nb, nloc, result);
             })
      .getResult(0);
}

/// A `linalg.generic` whose result element at index i is `input` at
/// `inputMap(i)`: a gather of elements by an affine map.
Value remap(OpBuilder &b, Location loc, Value input, AffineMap inputMap,
            RankedTensorType resultType) {
  SmallVector<AffineMap> maps{inputMap,
                              b.getMultiDimIdentityMap(resultType.getRank())};
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, input,
             ValueRange{emptyTensor(b, loc, resultType)}, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, args[0]);
             })
      .getResult(0);
}

/// Reshapes a statically shaped tensor: collapse to 1-D, expand to `shape`.
Value reshapeTo(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorTypeOf(value);
  if (type.getShape() == shape)
    return value;
  auto all = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t i = 0; i < rank; ++i)
      group.push_back(i);
    return rank == 0 ? SmallVector<ReassociationIndices>{}
                     : SmallVector<ReassociationIndices>{group};
  };
  int64_t n = type.getNumElements();
  auto flatType = RankedTensorType::get({n}, type.getElementType());
  Value flat = value;
  if (type.getRank() == 0)
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, value,
                                         SmallVector<ReassociationIndices>{});
  else if (type.getRank() > 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, value,
                                           all(type.getRank()));
  if (shape.size() == 1)
    return flat;
  auto target = RankedTensorType::get(shape, type.getElementType());
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, target, flat,
                                           SmallVector<ReassociationIndices>{});
  return tensor::ExpandShapeOp::create(b, loc, target, flat, all(shape.size()));
}

//===----------------------------------------------------------------------===//
// Scalar bodies
//===----------------------------------------------------------------------===//

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

Value maxOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::MaximumFOp::create(b, loc, x, y))
                    : Value(arith::MaxSIOp::create(b, loc, x, y));
}

Value minOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::MinimumFOp::create(b, loc, x, y))
                    : Value(arith::MinSIOp::create(b, loc, x, y));
}

Value addOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::AddFOp::create(b, loc, x, y))
                    : Value(arith::AddIOp::create(b, loc, x, y));
}

Value mulOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isFloat(x) ? Value(arith::MulFOp::create(b, loc, x, y))
                    : Value(arith::MulIOp::create(b, loc, x, y));
}

Value castScalar(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  if (to.isInteger(1)) {
    Value zero = scalarConstant(b, loc, from, 0);
    return isFloat(x)
               ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                             x, zero))
               : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             x, zero));
  }
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  if (fromFloat && toFloat)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? Value(arith::ExtFOp::create(b, loc, to, x))
               : Value(arith::TruncFOp::create(b, loc, to, x));
  if (fromFloat)
    return arith::FPToSIOp::create(b, loc, to, x);
  if (toFloat)
    return from.isInteger(1) ? Value(arith::UIToFPOp::create(b, loc, to, x))
                             : Value(arith::SIToFPOp::create(b, loc, to, x));
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return from.isInteger(1) ? Value(arith::ExtUIOp::create(b, loc, to, x))
                             : Value(arith::ExtSIOp::create(b, loc, to, x));
  return arith::TruncIOp::create(b, loc, to, x);
}

template <typename FloatOp, typename IntOp>
Value floatOrInt(OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0]))
    return FloatOp::create(b, loc, args[0], args[1]);
  return IntOp::create(b, loc, args[0], args[1]);
}

Value compare(OpBuilder &b, Location loc, ValueRange args,
              arith::CmpFPredicate fp, arith::CmpIPredicate ip) {
  if (isFloat(args[0]))
    return arith::CmpFOp::create(b, loc, fp, args[0], args[1]);
  return arith::CmpIOp::create(b, loc, ip, args[0], args[1]);
}

/// The scalar computation of each elementwise op.
Value scalarBody(Operation *op, OpBuilder &b, Location loc, ValueRange a) {
  using CF = arith::CmpFPredicate;
  using CI = arith::CmpIPredicate;
  Type t = a[0].getType();
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](NegOp) -> Value {
        return isFloat(a[0]) ? Value(arith::NegFOp::create(b, loc, a[0]))
                             : Value(arith::SubIOp::create(
                                   b, loc, scalarConstant(b, loc, t, 0), a[0]));
      })
      .Case([&](AbsOp) -> Value {
        return isFloat(a[0]) ? Value(math::AbsFOp::create(b, loc, a[0]))
                             : Value(math::AbsIOp::create(b, loc, a[0]));
      })
      .Case([&](SignOp) -> Value {
        Value zero = scalarConstant(b, loc, t, 0);
        Value one = scalarConstant(b, loc, t, 1);
        Value minusOne = scalarConstant(b, loc, t, -1);
        Value pos = compare(b, loc, {a[0], zero}, CF::OGT, CI::sgt);
        Value neg = compare(b, loc, {a[0], zero}, CF::OLT, CI::slt);
        return arith::SelectOp::create(
            b, loc, pos, one,
            arith::SelectOp::create(b, loc, neg, minusOne, zero));
      })
      .Case([&](ReluOp) {
        return maxOf(b, loc, a[0], scalarConstant(b, loc, t, 0));
      })
      .Case([&](ExpOp) { return math::ExpOp::create(b, loc, a[0]); })
      .Case([&](LogOp) { return math::LogOp::create(b, loc, a[0]); })
      .Case([&](SqrtOp) { return math::SqrtOp::create(b, loc, a[0]); })
      .Case([&](ReciprocalOp) {
        return arith::DivFOp::create(b, loc, scalarConstant(b, loc, t, 1),
                                     a[0]);
      })
      .Case([&](SigmoidOp) -> Value {
        // 1 / (1 + exp(-x))
        Value one = scalarConstant(b, loc, t, 1);
        Value e =
            math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, a[0]));
        return arith::DivFOp::create(b, loc, one,
                                     arith::AddFOp::create(b, loc, one, e));
      })
      .Case([&](TanhOp) { return math::TanhOp::create(b, loc, a[0]); })
      .Case([&](ErfOp) { return math::ErfOp::create(b, loc, a[0]); })
      .Case([&](FloorOp) { return math::FloorOp::create(b, loc, a[0]); })
      .Case([&](CeilOp) { return math::CeilOp::create(b, loc, a[0]); })
      .Case([&](SinOp) { return math::SinOp::create(b, loc, a[0]); })
      .Case([&](CosOp) { return math::CosOp::create(b, loc, a[0]); })
      .Case([&](NotOp) {
        return arith::XOrIOp::create(b, loc, a[0],
                                     scalarConstant(b, loc, t, 1));
      })
      .Case([&](AddOp) { return addOf(b, loc, a[0], a[1]); })
      .Case([&](SubOp) {
        return floatOrInt<arith::SubFOp, arith::SubIOp>(b, loc, a);
      })
      .Case([&](MulOp) { return mulOf(b, loc, a[0], a[1]); })
      .Case([&](DivOp) {
        return floatOrInt<arith::DivFOp, arith::DivSIOp>(b, loc, a);
      })
      .Case([&](PowOp) { return math::PowFOp::create(b, loc, a[0], a[1]); })
      .Case([&](MaxOp) { return maxOf(b, loc, a[0], a[1]); })
      .Case([&](MinOp) { return minOf(b, loc, a[0], a[1]); })
      .Case([&](AndOp) { return arith::AndIOp::create(b, loc, a[0], a[1]); })
      .Case([&](OrOp) { return arith::OrIOp::create(b, loc, a[0], a[1]); })
      .Case([&](XorOp) { return arith::XOrIOp::create(b, loc, a[0], a[1]); })
      .Case([&](EqualOp) { return compare(b, loc, a, CF::OEQ, CI::eq); })
      .Case([&](LessOp) { return compare(b, loc, a, CF::OLT, CI::slt); })
      .Case([&](LessEqualOp) { return compare(b, loc, a, CF::OLE, CI::sle); })
      .Case([&](GreaterOp) { return compare(b, loc, a, CF::OGT, CI::sgt); })
      .Case(
          [&](GreaterEqualOp) { return compare(b, loc, a, CF::OGE, CI::sge); })
      .Case([&](WhereOp) {
        return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
      })
      .Case([&](CastOp cast) {
        return castScalar(b, loc, a[0],
                          tensorTypeOf(cast.getResult()).getElementType());
      })
      .Case([&](ClipOp clip) {
        Value x = a[0];
        if (std::optional<APFloat> max = clip.getMax())
          x = minOf(b, loc, x,
                    scalarConstant(b, loc, t, max->convertToDouble()));
        if (std::optional<APFloat> min = clip.getMin())
          x = maxOf(b, loc, x,
                    scalarConstant(b, loc, t, min->convertToDouble()));
        return x;
      });
}

/// Lowers every elementwise op through scalarBody.
template <typename OpT> struct ElementwiseLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Operation *raw = op.getOperation();
    Value result = elementwise(
        rewriter, op.getLoc(), tensorTypeOf(op->getResult(0)),
        adaptor.getOperands(), [&](OpBuilder &b, Location loc, ValueRange a) {
          return scalarBody(raw, b, loc, a);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// C[..., M, N] = A[..., M, K] @ B[..., K, N] with equal batch shapes.
Value batchedMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                    RankedTensorType resultType) {
  Type elementType = resultType.getElementType();
  int64_t rank = resultType.getRank();
  if (rank == 2) {
    Value init = filledTensor(b, loc, resultType,
                              scalarConstant(b, loc, elementType, 0));
    return linalg::MatmulOp::create(b, loc, ValueRange{lhs, rhs},
                                    ValueRange{init})
        .getResult(0);
  }
  ArrayRef<int64_t> shape = resultType.getShape();
  int64_t batch = ShapedType::getNumElements(shape.drop_back(2));
  auto l = tensorTypeOf(lhs), r = tensorTypeOf(rhs);
  Value lhs3 = reshapeTo(
      b, loc, lhs, {batch, l.getDimSize(rank - 2), l.getDimSize(rank - 1)});
  Value rhs3 = reshapeTo(
      b, loc, rhs, {batch, r.getDimSize(rank - 2), r.getDimSize(rank - 1)});
  auto type3 = RankedTensorType::get({batch, shape[rank - 2], shape[rank - 1]},
                                     elementType);
  Value init =
      filledTensor(b, loc, type3, scalarConstant(b, loc, elementType, 0));
  Value product = linalg::BatchMatmulOp::create(b, loc, ValueRange{lhs3, rhs3},
                                                ValueRange{init})
                      .getResult(0);
  return reshapeTo(b, loc, product, shape);
}

/// Broadcasts `value` to `shape` (numpy rules) unless it already has it.
Value broadcastTo(OpBuilder &b, Location loc, Value value,
                  ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorTypeOf(value);
  if (type.getShape() == shape)
    return value;
  return elementwise(b, loc,
                     RankedTensorType::get(shape, type.getElementType()), value,
                     [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

struct MatMulLowering : OpConversionPattern<MatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    Shape a(tensorTypeOf(lhs).getShape()), bShape(tensorTypeOf(rhs).getShape());
    // numpy: a 1-D lhs is a row, a 1-D rhs a column; the extra dims go.
    if (a.size() == 1) {
      a.insert(a.begin(), 1);
      lhs = reshapeTo(rewriter, loc, lhs, a);
    }
    if (bShape.size() == 1) {
      bShape.push_back(1);
      rhs = reshapeTo(rewriter, loc, rhs, bShape);
    }
    RankedTensorType resultType = tensorTypeOf(op.getResult());
    if (bShape.size() == 2 && a.size() > 2) {
      // A matrix shared by a batch: one product of all the batch's rows,
      // never the matrix copied per batch element.
      int64_t rows = ShapedType::getNumElements(a) / a.back();
      Value product = batchedMatmul(
          rewriter, loc, reshapeTo(rewriter, loc, lhs, {rows, a.back()}), rhs,
          RankedTensorType::get({rows, bShape.back()},
                                resultType.getElementType()));
      rewriter.replaceOp(
          op, reshapeTo(rewriter, loc, product, resultType.getShape()));
      return success();
    }
    Shape batch;
    OpTrait::util::getBroadcastedShape(ArrayRef(a).drop_back(2),
                                       ArrayRef(bShape).drop_back(2), batch);
    Shape lhsShape = batch, rhsShape = batch, outShape = batch;
    lhsShape.append({a[a.size() - 2], a.back()});
    rhsShape.append({bShape[bShape.size() - 2], bShape.back()});
    outShape.append({a[a.size() - 2], bShape.back()});
    lhs = broadcastTo(rewriter, loc, lhs, lhsShape);
    rhs = broadcastTo(rewriter, loc, rhs, rhsShape);
    Value product = batchedMatmul(
        rewriter, loc, lhs, rhs,
        RankedTensorType::get(outShape, resultType.getElementType()));
    rewriter.replaceOp(
        op, reshapeTo(rewriter, loc, product, resultType.getShape()));
    return success();
  }
};

Value transposed(OpBuilder &b, Location loc, Value value,
                 ArrayRef<int64_t> permutation) {
  RankedTensorType type = tensorTypeOf(value);
  Shape shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  Value init =
      emptyTensor(b, loc, RankedTensorType::get(shape, type.getElementType()));
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      .getResult()[0];
}

struct GemmLowering : OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    if (op.getTransA())
      a = transposed(rewriter, loc, a, {1, 0});
    if (op.getTransB())
      b = transposed(rewriter, loc, b, {1, 0});
    RankedTensorType type = tensorTypeOf(op.getResult());
    Type elementType = type.getElementType();
    Value y = batchedMatmul(rewriter, loc, a, b, type);
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    Value alphaValue = scalarConstant(rewriter, loc, elementType, alpha);
    Value betaValue = scalarConstant(rewriter, loc, elementType, beta);
    if (Value c = adaptor.getC()) {
      // One loop nest: alpha * y + beta * c, with c broadcast.
      y = elementwise(
          rewriter, loc, type, ValueRange{y, c},
          [&](OpBuilder &nb, Location nloc, ValueRange v) {
            Value ay = alpha == 1 ? v[0] : mulOf(nb, nloc, alphaValue, v[0]);
            Value bc = beta == 1 ? v[1] : mulOf(nb, nloc, betaValue, v[1]);
            return addOf(nb, nloc, ay, bc);
          });
    } else if (alpha != 1) {
      y = elementwise(rewriter, loc, type, ValueRange{y},
                      [&](OpBuilder &nb, Location nloc, ValueRange v) {
                        return mulOf(nb, nloc, alphaValue, v[0]);
                      });
    }
    rewriter.replaceOp(op, y);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

/// Reduces `input` over `axes` (dropped from the result) with `combine`,
/// starting from `initial`.
Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             double initial,
             function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType type = tensorTypeOf(input);
  Shape shape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced) {
      shape.push_back(type.getDimSize(d));
      outExprs.push_back(getAffineDimExpr(d, ctx));
    }
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value init =
      filledTensor(b, loc, resultType,
                   scalarConstant(b, loc, type.getElementType(), initial));
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(type.getRank()),
                              AffineMap::get(type.getRank(), 0, outExprs, ctx)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, input, ValueRange{init}, maps,
             iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc,
                                       combine(nb, nloc, args[0], args[1]));
             })
      .getResult(0);
}

double lowest(Type type) {
  return isa<FloatType>(type)
             ? -std::numeric_limits<double>::infinity()
             : static_cast<double>(
                   APInt::getSignedMinValue(type.getIntOrFloatBitWidth())
                       .getSExtValue());
}

double highest(Type type) {
  return isa<FloatType>(type)
             ? std::numeric_limits<double>::infinity()
             : static_cast<double>(
                   APInt::getSignedMaxValue(type.getIntOrFloatBitWidth())
                       .getSExtValue());
}

/// The mean of `input` over `axes` (dropped from the result).
Value meanOver(OpBuilder &b, Location loc, Value input,
               ArrayRef<int64_t> axes) {
  RankedTensorType type = tensorTypeOf(input);
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= type.getDimSize(axis);
  Value sum = reduce(b, loc, input, axes, 0, addOf);
  Value divisor = scalarConstant(b, loc, type.getElementType(), count);
  return elementwise(b, loc, tensorTypeOf(sum), sum,
                     [&](OpBuilder &nb, Location l, ValueRange v) {
                       return floatOrInt<arith::DivFOp, arith::DivSIOp>(
                           nb, l, {v[0], divisor});
                     });
}

struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType inputType = tensorTypeOf(input);
    Type elementType = inputType.getElementType();
    ArrayRef<int64_t> axes = op.getAxes();
    Value result;
    switch (op.getKind()) {
    case ReduceKind::Sum:
      result = reduce(rewriter, loc, input, axes, 0, addOf);
      break;
    case ReduceKind::Mean:
      result = meanOver(rewriter, loc, input, axes);
      break;
    case ReduceKind::Prod:
      result = reduce(rewriter, loc, input, axes, 1, mulOf);
      break;
    case ReduceKind::Max:
      result = reduce(rewriter, loc, input, axes, lowest(elementType), maxOf);
      break;
    case ReduceKind::Min:
      result = reduce(rewriter, loc, input, axes, highest(elementType), minOf);
      break;
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, result,
                                     tensorTypeOf(op.getResult()).getShape()));
    return success();
  }
};

/// The pieces of a softmax along `axis`: max(x) and sum(exp(x - max))
/// shaped as `x` with `axis` of size 1, and exp(x - max) itself. (The
/// exponentials are a pass of their own: inside the sum's loop they would
/// not vectorize.)
struct SoftmaxParts {
  Value max, exps, sum;
};

SoftmaxParts softmaxParts(OpBuilder &b, Location loc, Value x, int64_t axis) {
  RankedTensorType type = tensorTypeOf(x);
  Shape keptShape(type.getShape());
  keptShape[axis] = 1;
  Value max = reshapeTo(
      b, loc, reduce(b, loc, x, axis, lowest(type.getElementType()), maxOf),
      keptShape);
  Value exps = elementwise(
      b, loc, type, ValueRange{x, max},
      [](OpBuilder &nb, Location l, ValueRange v) -> Value {
        return math::ExpOp::create(
            nb, l, arith::SubFOp::create(nb, l, v[0], v[1]).getResult());
      });
  Value sum =
      reshapeTo(b, loc, reduce(b, loc, exps, axis, 0, addOf), keptShape);
  return {max, exps, sum};
}

/// softmax(x) = exp(x - max) / sum(exp(x - max)) along `axis`;
/// log_softmax(x) = x - max - log(sum(exp(x - max))).
template <typename OpT, bool isLog>
struct SoftmaxLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType type = tensorTypeOf(x);
    SoftmaxParts parts = softmaxParts(rewriter, loc, x, op.getAxis());
    Value result =
        isLog
            ? elementwise(
                  rewriter, loc, type, ValueRange{x, parts.max, parts.sum},
                  [](OpBuilder &b, Location l, ValueRange v) -> Value {
                    return arith::SubFOp::create(
                        b, l,
                        arith::SubFOp::create(b, l, v[0], v[1]).getResult(),
                        math::LogOp::create(b, l, v[2]).getResult());
                  })
            : elementwise(rewriter, loc, type,
                          ValueRange{parts.exps, parts.sum},
                          [](OpBuilder &b, Location l, ValueRange v) -> Value {
                            return arith::DivFOp::create(b, l, v[0], v[1]);
                          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Broadcasting, tiling and padding
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c], channel dim 1,
/// as x * m[c] + o[c] with m = scale / sqrt(var + eps) and o = bias -
/// mean * m computed per channel first: the loop over x then has no
/// square root or division per element.
struct BatchNormLowering : OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    RankedTensorType channelType = tensorTypeOf(adaptor.getScale());
    Value epsilon = scalarConstant(rewriter, loc, type.getElementType(),
                                   op.getEpsilon().convertToDouble());
    Value multiplier =
        elementwise(rewriter, loc, channelType,
                    ValueRange{adaptor.getScale(), adaptor.getVariance()},
                    [&](OpBuilder &b, Location l, ValueRange v) -> Value {
                      Value stddev = math::SqrtOp::create(
                          b, l, arith::AddFOp::create(b, l, v[1], epsilon));
                      return arith::DivFOp::create(b, l, v[0], stddev);
                    });
    Value offset = elementwise(
        rewriter, loc, channelType,
        ValueRange{adaptor.getBias(), adaptor.getMean(), multiplier},
        [&](OpBuilder &b, Location l, ValueRange v) -> Value {
          return arith::SubFOp::create(b, l, v[0],
                                       arith::MulFOp::create(b, l, v[1], v[2]));
        });
    // Per-channel values as C x 1 x ... x 1, broadcasting over N and the
    // spatial dimensions.
    Shape channelShape(type.getRank() - 1, 1);
    channelShape[0] = type.getDimSize(1);
    rewriter.replaceOp(
        op, elementwise(
                rewriter, loc, type,
                ValueRange{adaptor.getInput(),
                           reshapeTo(rewriter, loc, multiplier, channelShape),
                           reshapeTo(rewriter, loc, offset, channelShape)},
                [&](OpBuilder &b, Location l, ValueRange v) -> Value {
                  return arith::AddFOp::create(
                      b, l, arith::MulFOp::create(b, l, v[0], v[1]), v[2]);
                }));
    return success();
  }
};

/// Mean and variance over dimensions axis..rank-1, then scale and bias.
struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType type = tensorTypeOf(x);
    Type elementType = type.getElementType();
    int64_t axis = op.getAxis();
    Shape axes, keptShape(type.getShape());
    for (int64_t d = axis; d < type.getRank(); ++d) {
      axes.push_back(d);
      keptShape[d] = 1;
    }
    auto meanOf = [&](Value v) {
      return reshapeTo(rewriter, loc, meanOver(rewriter, loc, v, axes),
                       keptShape);
    };
    Value mean = meanOf(x);
    Value centered =
        elementwise(rewriter, loc, type, ValueRange{x, mean},
                    [](OpBuilder &b, Location l, ValueRange v) -> Value {
                      return arith::SubFOp::create(b, l, v[0], v[1]);
                    });
    Value squares =
        elementwise(rewriter, loc, type, centered,
                    [](OpBuilder &b, Location l, ValueRange v) -> Value {
                      return arith::MulFOp::create(b, l, v[0], v[0]);
                    });
    Value variance = meanOf(squares);
    Value epsilon = scalarConstant(rewriter, loc, elementType,
                                   op.getEpsilon().convertToDouble());
    SmallVector<Value> operands{centered, variance, adaptor.getScale()};
    if (adaptor.getBias())
      operands.push_back(adaptor.getBias());
    rewriter.replaceOp(
        op, elementwise(
                rewriter, loc, type, operands,
                [&](OpBuilder &b, Location l, ValueRange v) -> Value {
                  Value stddev = math::SqrtOp::create(
                      b, l, arith::AddFOp::create(b, l, v[1], epsilon));
                  Value y = arith::MulFOp::create(
                      b, l, arith::DivFOp::create(b, l, v[0], stddev), v[2]);
                  return v.size() > 3
                             ? Value(arith::AddFOp::create(b, l, y, v[3]))
                             : y;
                }));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Pads the spatial dimensions (2..) of `input` with `value`.
Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> pads, double value) {
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return input;
  RankedTensorType type = tensorTypeOf(input);
  int64_t k = type.getRank() - 2;
  SmallVector<OpFoldResult> low(2, b.getIndexAttr(0)),
      high(2, b.getIndexAttr(0));
  Shape shape(type.getShape());
  for (int64_t d = 0; d < k; ++d) {
    low.push_back(b.getIndexAttr(pads[d]));
    high.push_back(b.getIndexAttr(pads[d + k]));
    shape[d + 2] += pads[d] + pads[d + k];
  }
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), input, low,
      high, scalarConstant(b, loc, type.getElementType(), value));
}

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

/// The channel-major patches of `input` (already padded) as [N, C*K, O]:
/// P[n, c, k..., o...] = in[n, c, o * s + k * d], K the product of `kernel`
/// and O of `outSpatial`.
Value channelMajorPatches(OpBuilder &b, Location loc, Value input,
                          ArrayRef<int64_t> kernel,
                          ArrayRef<int64_t> outSpatial,
                          ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> dilations) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType inputType = tensorTypeOf(input);
  int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1);
  int64_t k = kernel.size();
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  // Loops (n, c, k_1..k_k, o_1..o_k); the patch tensor has that shape.
  Shape patchShape{n, c};
  llvm::append_range(patchShape, kernel);
  llvm::append_range(patchShape, outSpatial);
  SmallVector<AffineExpr> in{dim(0), dim(1)};
  for (int64_t d = 0; d < k; ++d)
    in.push_back(dim(2 + k + d) * strides[d] + dim(2 + d) * dilations[d]);
  Value patches =
      remap(b, loc, input, AffineMap::get(patchShape.size(), 0, in, ctx),
            RankedTensorType::get(patchShape, inputType.getElementType()));
  return reshapeTo(b, loc, patches,
                   {n, c * ShapedType::getNumElements(kernel),
                    ShapedType::getNumElements(outSpatial)});
}

/// The filter gradient of a convolution, as the autodiff rule writes it:
/// conv(transpose01(X), transpose01(DY)) -> [C, M, K...], with X the padded
/// input [N, C, ...] and DY [N, M, O...]. Its patches are the forward
/// convolution's own (the same copy of X, which CSE merges with the
/// forward's), so per image P[n] [C*K, O] times DY[n]^T [O, M], summed over
/// images, is the gradient: no transposed copies of X and DY and no second
/// patch tensor. Null when `op` is not of that form.
Value filterGradientAsMatmul(ConversionPatternRewriter &b, Location loc,
                             ConvOp op, RankedTensorType type) {
  auto swapsBatchAndChannels = [](Value v) -> Value {
    auto transpose = v.getDefiningOp<TransposeOp>();
    if (!transpose)
      return {};
    ArrayRef<int64_t> perm = transpose.getPermutation();
    for (int64_t d = 2; d < static_cast<int64_t>(perm.size()); ++d)
      if (perm[d] != d)
        return {};
    return perm[0] == 1 && perm[1] == 0 ? transpose.getInput() : Value();
  };
  Value x = swapsBatchAndChannels(op.getInput());
  Value dy = swapsBatchAndChannels(op.getFilter());
  if (!x || !dy || op.getGroups() != 1 || op.getBias() ||
      !type.getElementType().isF32() ||
      llvm::any_of(op.getPads(), [](int64_t p) { return p != 0; }))
    return {};
  x = b.getRemappedValue(x);
  dy = b.getRemappedValue(dy);
  if (!x || !dy)
    return {};
  RankedTensorType dyType = tensorTypeOf(dy);
  int64_t n = dyType.getDimSize(0), m = dyType.getDimSize(1);
  int64_t c = type.getDimSize(0);
  ArrayRef<int64_t> kernel = type.getShape().drop_front(2);
  ArrayRef<int64_t> outSpatial = dyType.getShape().drop_front(2);
  int64_t ck = c * ShapedType::getNumElements(kernel);
  int64_t o = ShapedType::getNumElements(outSpatial);
  // This convolution's strides and dilations are the forward's dilations
  // and strides.
  Value columns = channelMajorPatches(b, loc, x, kernel, outSpatial,
                                      op.getDilations(), op.getStrides());
  Value dyRows =
      transposed(b, loc, reshapeTo(b, loc, dy, {n, m, o}), {0, 2, 1});
  Type elementType = type.getElementType();
  auto productType = RankedTensorType::get({n, ck, m}, elementType);
  Value perImage =
      linalg::BatchMatmulOp::create(
          b, loc, ValueRange{columns, dyRows},
          ValueRange{filledTensor(b, loc, productType,
                                  scalarConstant(b, loc, elementType, 0))})
          .getResult(0);
  return rowsToChannelFirst(b, loc, reduce(b, loc, perImage, {0}, 0, addOf), c,
                            kernel);
}

/// An ungrouped convolution as matrix products (im2col), which
/// --parallax-linalg-to-blas sends to BLAS. Two layouts of the patches of
/// the padded input, chosen so that the copy's innermost loop is the longer
/// of the last output and kernel dimensions (a contiguous, vectorizable run
/// of the input for unit strides and dilations):
/// - channel-major (outputs at least as wide as the kernel, the usual
///   case): P[n, c, k..., o...] = in[n, c, o * s + k * d] as [N, C*K, O],
///   and per image the filter [M, C*K] times P[n] gives the output
///   [N, M, O] directly (a linalg.batch_matmul);
/// - pixel-major (kernels wider than the output, e.g. a filter gradient
///   that filterGradientAsMatmul does not recognise): P[n, o..., c, k...] as
///   [N*O, C*K] times the filter as [C*K, M] gives [N*O, M]; a transpose
///   restores N x M x O.
Value convolveAsMatmul(OpBuilder &b, Location loc, ConvOp op, Value input,
                       Value filter, RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType filterType = tensorTypeOf(filter);
  Type elementType = type.getElementType();
  int64_t k = type.getRank() - 2;
  int64_t n = type.getDimSize(0), m = type.getDimSize(1);
  int64_t c = filterType.getDimSize(1);
  ArrayRef<int64_t> outSpatial = type.getShape().drop_front(2);
  ArrayRef<int64_t> kernel = filterType.getShape().drop_front(2);
  int64_t o = ShapedType::getNumElements(outSpatial);
  int64_t ck = c * ShapedType::getNumElements(kernel);
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  Value zero = scalarConstant(b, loc, elementType, 0);
  if (outSpatial.back() >= kernel.back()) {
    Value columns = channelMajorPatches(b, loc, input, kernel, outSpatial,
                                        op.getStrides(), op.getDilations());
    // The filter, one copy per image (batch_matmul has no broadcasting).
    Value weights = remap(b, loc, reshapeTo(b, loc, filter, {m, ck}),
                          AffineMap::get(3, 0, {dim(1), dim(2)}, ctx),
                          RankedTensorType::get({n, m, ck}, elementType));
    auto productType = RankedTensorType::get({n, m, o}, elementType);
    Value product = linalg::BatchMatmulOp::create(
                        b, loc, ValueRange{weights, columns},
                        ValueRange{filledTensor(b, loc, productType, zero)})
                        .getResult(0);
    return reshapeTo(b, loc, product, type.getShape());
  }
  // Loops (n, o_1..o_k, c, k_1..k_k); the patch tensor has that shape.
  Shape patchShape{n};
  llvm::append_range(patchShape, outSpatial);
  patchShape.push_back(c);
  llvm::append_range(patchShape, kernel);
  SmallVector<AffineExpr> in{dim(0), dim(k + 1)};
  for (int64_t d = 0; d < k; ++d)
    in.push_back(dim(1 + d) * op.getStrides()[d] +
                 dim(k + 2 + d) * op.getDilations()[d]);
  auto patchType = RankedTensorType::get(patchShape, elementType);
  Value patches = remap(
      b, loc, input, AffineMap::get(patchShape.size(), 0, in, ctx), patchType);
  Value lhs = reshapeTo(b, loc, patches, {n * o, ck});
  Value rhs = transposed(b, loc, reshapeTo(b, loc, filter, {m, ck}), {1, 0});
  auto productType = RankedTensorType::get({n * o, m}, elementType);
  Value product = linalg::MatmulOp::create(
                      b, loc, ValueRange{lhs, rhs},
                      ValueRange{filledTensor(b, loc, productType, zero)})
                      .getResult(0);
  return rowsToChannelFirst(b, loc, product, n, outSpatial);
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
    if (Value gradient = filterGradientAsMatmul(rewriter, loc, op, type)) {
      rewriter.replaceOp(op, gradient);
      return success();
    }
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
    SmallVector<utils::IteratorType> iterators(k + 2,
                                               utils::IteratorType::parallel);
    iterators.append(k + 1, utils::IteratorType::reduction);
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
    rewriter.replaceOp(
        op, linalg::GenericOp::create(
                rewriter, loc, TypeRange{type},
                ValueRange{input, adaptor.getFilter()}, ValueRange{init}, maps,
                iterators,
                [](OpBuilder &b, Location l, ValueRange v) {
                  Value product = arith::MulFOp::create(b, l, v[0], v[1]);
                  linalg::YieldOp::create(
                      b, l,
                      arith::AddFOp::create(b, l, v[2], product).getResult());
                })
                .getResult(0));
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
    Value init = filledTensor(
        b, loc, type,
        scalarConstant(b, loc, elementType, isMax ? lowest(elementType) : 0));
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
    Value input = padSpatial(rewriter, loc, adaptor.getInput(), pads,
                             isMax ? lowest(elementType) : 0);
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

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// loss[n, d...] = -logp[n, label, d...] * w[label] (0 where label is
/// ignore_index), then none / sum / weighted mean.
template <typename OpT, bool fromScores>
struct ClassificationLossLowering : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), labels = adaptor.getLabels();
    RankedTensorType inputType = tensorTypeOf(input);
    Type elementType = inputType.getElementType();
    // From scores, log p[label] = x[label] - logsumexp(x) per example:
    // only the statistics are computed over the classes, never the whole
    // log-softmax.
    Value logSumExp;
    if (fromScores) {
      SoftmaxParts parts = softmaxParts(rewriter, loc, input, 1);
      logSumExp =
          elementwise(rewriter, loc, tensorTypeOf(parts.max),
                      ValueRange{parts.max, parts.sum},
                      [](OpBuilder &b, Location l, ValueRange v) -> Value {
                        return arith::AddFOp::create(
                            b, l, v[0], math::LogOp::create(b, l, v[1]));
                      });
    }
    RankedTensorType labelType = tensorTypeOf(labels);
    auto perExample = RankedTensorType::get(labelType.getShape(), elementType);
    Value weights = adaptor.getWeights();
    std::optional<int64_t> ignore;
    if (IntegerAttr attr = op.getIgnoreIndexAttr())
      ignore = attr.getInt();
    int64_t classes = inputType.getDimSize(1);
    // One loop per label; the class is read with tensor.extract.
    auto computeLoss = [&](bool weightOnly) {
      return linalg::GenericOp::create(
                 rewriter, loc, TypeRange{perExample}, labels,
                 ValueRange{emptyTensor(rewriter, loc, perExample)},
                 SmallVector<AffineMap>{
                     rewriter.getMultiDimIdentityMap(labelType.getRank()),
                     rewriter.getMultiDimIdentityMap(labelType.getRank())},
                 SmallVector<utils::IteratorType>(
                     labelType.getRank(), utils::IteratorType::parallel),
                 [&](OpBuilder &b, Location l, ValueRange v) {
                   Value label = v[0];
                   Value index = arith::IndexCastOp::create(
                       b, l, b.getIndexType(), label);
                   Value zero = scalarConstant(b, l, elementType, 0);
                   Value weight = scalarConstant(b, l, elementType, 1);
                   // A label outside [0, C) that is not ignore_index is an
                   // error, as in PyTorch; ignored labels are clamped for
                   // the read and masked below.
                   Value outside = arith::CmpIOp::create(
                       b, l, arith::CmpIPredicate::uge, index,
                       arith::ConstantIndexOp::create(b, l, classes));
                   if (ignore)
                     outside = arith::AndIOp::create(
                         b, l, outside,
                         arith::CmpIOp::create(
                             b, l, arith::CmpIPredicate::ne, label,
                             scalarConstant(b, l, label.getType(), *ignore)));
                   if (!weightOnly)
                     emitIndexCheck(b, l, op, outside, label, 0, classes,
                                    "class label (" + std::to_string(classes) +
                                        " classes)");
                   Value safe = arith::MinSIOp::create(
                       b, l,
                       arith::MaxSIOp::create(
                           b, l, index,
                           arith::ConstantIndexOp::create(b, l, 0)),
                       arith::ConstantIndexOp::create(b, l, classes - 1));
                   if (weights)
                     weight = tensor::ExtractOp::create(b, l, weights, safe);
                   Value value = weight;
                   if (!weightOnly) {
                     SmallVector<Value> coords{linalg::IndexOp::create(b, l, 0),
                                               safe};
                     for (int64_t d = 1; d < labelType.getRank(); ++d)
                       coords.push_back(linalg::IndexOp::create(b, l, d));
                     Value logp =
                         tensor::ExtractOp::create(b, l, input, coords);
                     if (logSumExp) {
                       coords[1] = arith::ConstantIndexOp::create(b, l, 0);
                       logp = arith::SubFOp::create(
                           b, l, logp,
                           tensor::ExtractOp::create(b, l, logSumExp, coords));
                     }
                     value = arith::NegFOp::create(
                         b, l, arith::MulFOp::create(b, l, logp, weight));
                   }
                   if (ignore) {
                     Value ignored = arith::CmpIOp::create(
                         b, l, arith::CmpIPredicate::eq, label,
                         scalarConstant(b, l, label.getType(), *ignore));
                     value =
                         arith::SelectOp::create(b, l, ignored, zero, value);
                   }
                   linalg::YieldOp::create(b, l, value);
                 })
          .getResult(0);
    };
    Value losses = computeLoss(false);
    if (op.getReduction() == LossReduction::None) {
      rewriter.replaceOp(op, losses);
      return success();
    }
    Shape all;
    for (int64_t d = 0; d < labelType.getRank(); ++d)
      all.push_back(d);
    Value total = reduce(rewriter, loc, losses, all, 0, addOf);
    if (op.getReduction() == LossReduction::Mean) {
      Value count = reduce(rewriter, loc, computeLoss(true), all, 0, addOf);
      total = elementwise(rewriter, loc, tensorTypeOf(total),
                          ValueRange{total, count},
                          [](OpBuilder &b, Location l, ValueRange v) -> Value {
                            return arith::DivFOp::create(b, l, v[0], v[1]);
                          });
    }
    rewriter.replaceOp(op, total);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertParallaxToLinalgPass
    : parallax::impl::ConvertParallaxToLinalgBase<ConvertParallaxToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<
        ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
        ElementwiseLowering<SignOp>, ElementwiseLowering<ReluOp>,
        ElementwiseLowering<ExpOp>, ElementwiseLowering<LogOp>,
        ElementwiseLowering<SqrtOp>, ElementwiseLowering<ReciprocalOp>,
        ElementwiseLowering<SigmoidOp>, ElementwiseLowering<TanhOp>,
        ElementwiseLowering<ErfOp>, ElementwiseLowering<FloorOp>,
        ElementwiseLowering<CeilOp>, ElementwiseLowering<SinOp>,
        ElementwiseLowering<CosOp>, ElementwiseLowering<NotOp>,
        ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
        ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
        ElementwiseLowering<PowOp>, ElementwiseLowering<MaxOp>,
        ElementwiseLowering<MinOp>, ElementwiseLowering<AndOp>,
        ElementwiseLowering<OrOp>, ElementwiseLowering<XorOp>,
        ElementwiseLowering<EqualOp>, ElementwiseLowering<LessOp>,
        ElementwiseLowering<LessEqualOp>, ElementwiseLowering<GreaterOp>,
        ElementwiseLowering<GreaterEqualOp>, ElementwiseLowering<WhereOp>,
        ElementwiseLowering<CastOp>, ElementwiseLowering<ClipOp>,
        MatMulLowering, GemmLowering, TransposeLowering, ReshapeLowering,
        SliceLowering, ConcatLowering, GatherLowering, OneHotLowering,
        ReduceLowering, SoftmaxLowering<SoftmaxOp, false>,
        SoftmaxLowering<LogSoftmaxOp, true>, ExpandLowering, TileLowering,
        PadLowering, BatchNormLowering, LayerNormLowering, ConvLowering,
        PoolLowering, ClassificationLossLowering<SoftmaxCrossEntropyOp, true>,
        ClassificationLossLowering<NegativeLogLikelihoodOp, false>>(ctx);

    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    target.addIllegalDialect<ParallaxDialect>();
    // Variables and collectives are lowered with the runtime.
    target.addLegalOp<VariableOp, ReadOp, AssignOp, ApplyGradientOp, UpdateOp,
                      RowSparsePackOp, RowSparseUnpackOp, RowSparseToDenseOp,
                      AllReduceOp, AllReduceStartOp, AllReduceWaitOp,
                      AllGatherOp, BroadcastOp, PushOp, PullOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
