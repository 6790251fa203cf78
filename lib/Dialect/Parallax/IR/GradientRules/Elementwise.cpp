//===- Elementwise.cpp - Gradients of elementwise ops ---------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::gradients;

// The GradientOpInterface (ParallaxInterfaces.td), defined once.
#include "parallax/Dialect/Parallax/IR/ParallaxInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

#define UNARY_RULE(OP, BODY)                                                   \
  LogicalResult OP::buildGradients(OpBuilder &builder, ValueRange grads,       \
                                   SmallVectorImpl<Value> &out) {              \
    return rule(*this, builder, grads, out,                                    \
                [&](GradBuilder &g, Value dy) -> LogicalResult {               \
                  Value x = getInput(), y = getResult();                       \
                  (void)x;                                                     \
                  (void)y;                                                     \
                  out.push_back(BODY);                                         \
                  return success();                                            \
                });                                                            \
  }

UNARY_RULE(NegOp, g.neg(dy))
UNARY_RULE(AbsOp, g.mul(dy, SignOp::create(g.b, g.loc, x)))
UNARY_RULE(SignOp, Value())
UNARY_RULE(FloorOp, Value())
UNARY_RULE(CeilOp, Value())
UNARY_RULE(ReluOp,
           g.select(GreaterOp::create(g.b, g.loc, x, g.scalar(x, 0.0)), dy))
UNARY_RULE(ExpOp, g.mul(dy, y))
UNARY_RULE(LogOp, g.div(dy, x))
UNARY_RULE(SqrtOp, g.div(g.mul(dy, g.scalar(y, 0.5)), y))
UNARY_RULE(ReciprocalOp, g.neg(g.mul(dy, g.mul(y, y))))
UNARY_RULE(SigmoidOp, g.mul(dy, g.mul(y, g.sub(g.scalar(y, 1.0), y))))
UNARY_RULE(TanhOp, g.mul(dy, g.sub(g.scalar(y, 1.0), g.mul(y, y))))
UNARY_RULE(ErfOp,
           g.mul(dy, g.mul(g.scalar(x, 2.0 / std::sqrt(M_PI)),
                           ExpOp::create(g.b, g.loc, g.neg(g.mul(x, x))))))
UNARY_RULE(SinOp, g.mul(dy, CosOp::create(g.b, g.loc, x)))
UNARY_RULE(CosOp, g.neg(g.mul(dy, SinOp::create(g.b, g.loc, x))))
#undef UNARY_RULE

LogicalResult CastOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                auto inputType = tensorType(getInput());
                out.push_back(
                    isa<FloatType>(inputType.getElementType())
                        ? Value(CastOp::create(g.b, g.loc, inputType, dy))
                        : Value());
                return success();
              });
}

LogicalResult ClipOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                     SmallVectorImpl<Value> &out) {
  return rule(
      *this, builder, grads, out,
      [&](GradBuilder &g, Value dy) -> LogicalResult {
        // Passes where min <= x <= max, as torch.clamp does.
        Value x = getInput(), inside;
        auto both = [&](Value condition) {
          inside = inside ? Value(AndOp::create(g.b, g.loc, inside, condition))
                          : condition;
        };
        if (auto min = getMin())
          both(GreaterEqualOp::create(g.b, g.loc, x,
                                      g.scalar(x, min->convertToDouble())));
        if (auto max = getMax())
          both(LessEqualOp::create(g.b, g.loc, x,
                                   g.scalar(x, max->convertToDouble())));
        out.push_back(inside ? g.select(inside, dy) : dy);
        return success();
      });
}

//===----------------------------------------------------------------------===//
// Elementwise binary (numpy broadcasting)
//===----------------------------------------------------------------------===//

/// Pushes the unbroadcast gradients for lhs and rhs (either may be null).
static LogicalResult
binaryRule(Operation *op, OpBuilder &builder, Value dy,
           SmallVectorImpl<Value> &out,
           function_ref<std::pair<Value, Value>(GradBuilder &, Value, Value,
                                                Value, Value)>
               fn) {
  GradBuilder g{builder, op->getLoc()};
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  auto [dl, dr] = fn(g, lhs, rhs, op->getResult(0), dy);
  out.push_back(dl ? g.unbroadcast(dl, tensorType(lhs)) : Value());
  out.push_back(dr ? g.unbroadcast(dr, tensorType(rhs)) : Value());
  return success();
}

#define BINARY_RULE(OP, DL, DR)                                                \
  LogicalResult OP::buildGradients(OpBuilder &builder, ValueRange grads,       \
                                   SmallVectorImpl<Value> &out) {              \
    return binaryRule(*this, builder, grads.front(), out,                      \
                      [](GradBuilder &g, Value l, Value r, Value y,            \
                         Value dy) -> std::pair<Value, Value> {                \
                        (void)l;                                               \
                        (void)r;                                               \
                        (void)y;                                               \
                        return {DL, DR};                                       \
                      });                                                      \
  }

BINARY_RULE(AddOp, dy, dy)
BINARY_RULE(SubOp, dy, g.neg(dy))
BINARY_RULE(MulOp, g.mul(dy, r), g.mul(dy, l))
BINARY_RULE(DivOp, g.div(dy, r), g.neg(g.div(g.mul(dy, y), r)))
BINARY_RULE(PowOp,
            g.mul(dy, g.mul(r, PowOp::create(g.b, g.loc, l,
                                             g.sub(r, g.scalar(r, 1.0))))),
            g.mul(dy, g.mul(y, LogOp::create(g.b, g.loc, l))))
// Ties go to the left operand (ONNX leaves them unspecified); the two
// gradients still add up to dy.
BINARY_RULE(MaxOp, g.select(GreaterEqualOp::create(g.b, g.loc, l, r), dy),
            g.select(LessOp::create(g.b, g.loc, l, r), dy))
BINARY_RULE(MinOp, g.select(LessEqualOp::create(g.b, g.loc, l, r), dy),
            g.select(GreaterOp::create(g.b, g.loc, l, r), dy))
#undef BINARY_RULE

LogicalResult WhereOp::buildGradients(OpBuilder &builder, ValueRange grads,
                                      SmallVectorImpl<Value> &out) {
  return rule(*this, builder, grads, out,
              [&](GradBuilder &g, Value dy) -> LogicalResult {
                Value zero = g.scalar(dy, 0.0);
                out.push_back(Value());
                out.push_back(g.unbroadcast(
                    WhereOp::create(g.b, g.loc, getCondition(), dy, zero),
                    tensorType(getTrueValue())));
                out.push_back(g.unbroadcast(
                    WhereOp::create(g.b, g.loc, getCondition(), zero, dy),
                    tensorType(getFalseValue())));
                return success();
              });
}
