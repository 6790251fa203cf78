//===- LinearAlgebra.cpp - Gradients of matrix products -------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::gradients;

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                       SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        // Promote 1-D operands to matrices as numpy does, and dy with
        // them.
        Value a = getLhs(), b = getRhs();
        auto aType = tensorType(a), bType = tensorType(b);
        Shape dyShape(tensorType(dy).getShape());
        if (aType.getRank() == 1) {
          a = g.reshape(a, {1, aType.getDimSize(0)});
          dyShape.insert(dyShape.end() - (bType.getRank() == 1 ? 0 : 1), 1);
        }
        if (bType.getRank() == 1) {
          b = g.reshape(b, {bType.getDimSize(0), 1});
          dyShape.push_back(1);
        }
        dy = g.reshape(dy, dyShape);
        Value bT = g.transpose(b, swapLastTwo(tensorType(b).getRank()));
        Value da = MatMulOp::create(g.b, g.loc, dy, bT);
        Value db;
        if (tensorType(b).getRank() == 2 && tensorType(a).getRank() > 2) {
          // A matrix shared by a batch: one product over all rows,
          // A[rows, K]^T dy[rows, N], instead of a product per batch
          // element summed afterwards.
          int64_t k = tensorType(a).getShape().back();
          int64_t n = dyShape.back();
          int64_t rows = tensorType(a).getNumElements() / k;
          Value a2 = g.reshape(a, {rows, k});
          db = MatMulOp::create(g.b, g.loc, g.transpose(a2, {1, 0}),
                                g.reshape(dy, {rows, n}));
        } else {
          Value aT = g.transpose(a, swapLastTwo(tensorType(a).getRank()));
          db = MatMulOp::create(g.b, g.loc, aT, dy);
        }
        // Sum over broadcast batch dimensions, then drop the promoted
        // ones.
        da = g.unbroadcast(da, tensorType(a));
        db = g.unbroadcast(db, tensorType(b));
        out.push_back(g.reshape(da, aType.getShape()));
        out.push_back(g.reshape(db, bType.getShape()));
        return success();
      });
}

LogicalResult GemmOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        bool ta = getTransA(), tb = getTransB();
        FloatAttr alpha = getAlphaAttr();
        FloatAttr one = g.b.getF32FloatAttr(1.0);
        auto gemm = [&](Value x, Value y, bool transX, bool transY) -> Value {
          return GemmOp::create(g.b, g.loc, x, y, Value(),
                                transX ? g.b.getUnitAttr() : UnitAttr(),
                                transY ? g.b.getUnitAttr() : UnitAttr(), alpha,
                                one);
        };
        Value a = getA(), b = getB();
        // dop(A) = alpha dy op(B)^T, dop(B) = alpha op(A)^T dy.
        out.push_back(ta ? gemm(b, dy, tb, true) : gemm(dy, b, false, !tb));
        out.push_back(tb ? gemm(dy, a, true, ta) : gemm(a, dy, !ta, false));
        if (Value c = getC()) {
          Value dc = dy;
          if (getBeta().convertToDouble() != 1.0)
            dc = g.mul(dy, g.scalar(dy, getBeta().convertToDouble()));
          out.push_back(g.unbroadcast(dc, tensorType(c)));
        }
        return success();
      });
}
