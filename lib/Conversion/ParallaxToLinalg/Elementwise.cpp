//===- Elementwise.cpp - Elementwise ops to linalg.generic ----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// Every elementwise op (unary, binary, comparisons, where, cast, clip) as
// one broadcasting linalg.generic whose body is the op's scalar form.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::to_linalg;

namespace {

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

} // namespace

void mlir::parallax::populateParallaxElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns
      .add<ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
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
           ElementwiseLowering<CastOp>, ElementwiseLowering<ClipOp>>(
          patterns.getContext());
}
