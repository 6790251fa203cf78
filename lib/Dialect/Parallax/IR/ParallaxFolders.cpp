//===- ParallaxFolders.cpp - Folds of the compute ops ---------------------===//
//
// Part of the Parallax project.
//
// Identity folds of the data movement ops (a transpose by the identity, an
// expand, slice, tile or pad that changes nothing) and constant folding of
// elementwise arithmetic through mlir/Dialect/CommonFolders.h: floats as
// APFloat in the element type's own precision (rounded as the element
// type rounds, never computed in double), integers as APInt of their width.
// Builders fold through createOrFold (the gradient rules) and the
// canonicalizer through these hooks.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/CommonFolders.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::parallax;

Operation *ParallaxDialect::materializeConstant(OpBuilder &builder,
                                                Attribute value, Type type,
                                                Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

/// A constant operand's elements as a constant of the result's shape: the
/// operand when it already has it, its splat value broadcast when it is a
/// splat; null otherwise (numpy broadcasting of a non-splat is left to the
/// lowering).
static Attribute shapedAsResult(Attribute operand, ShapedType resultType) {
  auto elements = dyn_cast_or_null<DenseElementsAttr>(operand);
  if (!elements)
    return {};
  if (elements.getType() == resultType)
    return elements;
  if (elements.isSplat() &&
      elements.getElementType() == resultType.getElementType())
    return SplatElementsAttr::get(resultType,
                                  elements.getSplatValue<Attribute>());
  return {};
}

/// Folds `op` when both operands are constants, computing `onFloats` or
/// `onIntegers` per element (null: that element type does not fold).
static OpFoldResult foldArithmetic(
    Operation *op, ArrayRef<Attribute> operands,
    function_ref<std::optional<APFloat>(const APFloat &, const APFloat &)>
        onFloats,
    function_ref<std::optional<APInt>(const APInt &, const APInt &)>
        onIntegers) {
  auto type = cast<ShapedType>(op->getResult(0).getType());
  Attribute lhs = shapedAsResult(operands[0], type);
  Attribute rhs = shapedAsResult(operands[1], type);
  if (!lhs || !rhs)
    return {};
  if (isa<FloatType>(type.getElementType()))
    return constFoldBinaryOpConditional<FloatAttr, APFloat, void>(
        {lhs, rhs}, type, [&](APFloat a, APFloat b) { return onFloats(a, b); });
  if (type.getElementType().isInteger(1))
    return {};
  return constFoldBinaryOpConditional<IntegerAttr, APInt, void>(
      {lhs, rhs}, type, [&](APInt a, APInt b) { return onIntegers(a, b); });
}

/// Whether `value` is a constant whose every element is exactly `element`.
static bool isSplatOf(Attribute value, int64_t element) {
  auto elements = dyn_cast_or_null<DenseElementsAttr>(value);
  if (!elements || !elements.isSplat())
    return false;
  if (isa<FloatType>(elements.getElementType()))
    return elements.getSplatValue<APFloat>().isExactlyValue(
        static_cast<double>(element));
  return elements.getSplatValue<APInt>().getSExtValue() == element;
}

/// `x op identity` is `x` when x already has the result's type.
static OpFoldResult foldIdentity(Operation *op, Attribute rhs,
                                 int64_t identity) {
  Value lhs = op->getOperand(0);
  if (lhs.getType() == op->getResult(0).getType() && isSplatOf(rhs, identity))
    return lhs;
  return {};
}

/// `x op zero` is `x` when x already has the result's type and the
/// constant is a splat of the integer 0, or of the float zero of the given
/// sign: x + -0.0 and x - +0.0 are x for every x (x + +0.0 turns -0.0 into
/// +0.0).
static OpFoldResult foldZero(Operation *op, Attribute rhs, bool negativeZero) {
  auto elements = dyn_cast_or_null<DenseElementsAttr>(rhs);
  Value lhs = op->getOperand(0);
  if (!elements || !elements.isSplat() ||
      lhs.getType() != op->getResult(0).getType())
    return {};
  bool zero =
      isa<FloatType>(elements.getElementType())
          ? (negativeZero ? elements.getSplatValue<APFloat>().isNegZero()
                          : elements.getSplatValue<APFloat>().isPosZero())
          : elements.getSplatValue<APInt>().isZero();
  return zero ? OpFoldResult(lhs) : OpFoldResult();
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult x = foldZero(*this, adaptor.getRhs(), /*negativeZero=*/true))
    return x;
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a + b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a + b;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult x =
          foldZero(*this, adaptor.getRhs(), /*negativeZero=*/false))
    return x;
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a - b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a - b;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult x = foldIdentity(*this, adaptor.getRhs(), 1))
    return x;
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a * b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a * b;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult x = foldIdentity(*this, adaptor.getRhs(), 1))
    return x;
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return a / b;
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        // Division by zero and INT_MIN / -1 are left to run time.
        if (b.isZero() || (a.isMinSignedValue() && b.isAllOnes()))
          return std::nullopt;
        return a.sdiv(b);
      });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return constFoldUnaryOp<FloatAttr, APFloat, void>(
      adaptor.getOperands(), [](const APFloat &a) { return -a; });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A broadcast splat is a splat of the result's shape.
  if (auto elements = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
      elements && elements.isSplat())
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  elements.getSplatValue<Attribute>());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (isIdentityPermutation(getPermutation()))
    return getInput();
  // transpose(transpose(x, p), q) is x when the two undo each other.
  if (auto inner = getInput().getDefiningOp<TransposeOp>();
      inner && isIdentityPermutation(
                   applyPermutation(inner.getPermutation(), getPermutation())))
    return inner.getInput();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  auto input = cast<RankedTensorType>(getInput().getType());
  for (auto [offset, size, stride, extent] : llvm::zip_equal(
           getOffsets(), getSizes(), getStrides(), input.getShape()))
    if (offset != 0 || size != extent || stride != 1)
      return {};
  return getInput();
}

OpFoldResult TileOp::fold(FoldAdaptor) {
  if (llvm::all_of(getRepeats(), [](int64_t r) { return r == 1; }))
    return getInput();
  return {};
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t p) { return p == 0; };
  if (llvm::all_of(getLow(), isZero) && llvm::all_of(getHigh(), isZero))
    return getInput();
  return {};
}
