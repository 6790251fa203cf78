//===- LinearAlgebra.cpp - Matrix products to linalg ----------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// matmul (numpy batching and broadcasting) and gemm as linalg.matmul and
// linalg.batch_matmul, the named ops --parallax-linalg-to-blas recognises.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::to_linalg;

namespace {

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

} // namespace

void mlir::parallax::populateParallaxLinearAlgebraToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MatMulLowering, GemmLowering>(patterns.getContext());
}
