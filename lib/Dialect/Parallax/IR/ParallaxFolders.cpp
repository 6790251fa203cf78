//===- ParallaxFolders.cpp - Folds of the compute ops ---------------------===//
//
// Part of the Parallax project.
//
// Identity folds of the data movement ops (a transpose by the identity, an
// expand, slice, tile or pad that changes nothing), constant folding of
// elementwise arithmetic through mlir/Dialect/CommonFolders.h (floats as
// APFloat in the element type's own precision, rounded as the element
// type rounds, never computed in double; integers as APInt of their
// width), and of casts, reshapes, slices, concatenations and gathers of
// constants.
// Builders fold through createOrFold (the gradient rules), the
// canonicalizer through these hooks, and the sparsity profiler evaluates
// row ids with them (lib/Analysis/ProfileSparsity.cpp).
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

/// Non-splat constants larger than this stay run-time ops: these folds
/// go element by element through uniqued attributes.
static constexpr int64_t kMaxFoldedElements = int64_t(1) << 16;

static DenseElementsAttr foldableConstant(Attribute operand) {
  auto elements = dyn_cast_or_null<DenseElementsAttr>(operand);
  if (!elements ||
      (!elements.isSplat() && elements.getNumElements() > kMaxFoldedElements))
    return {};
  return elements;
}

/// `value` converted as parallax.cast converts, or nullopt where the
/// conversion is not exact enough to fold (a float out of an integer's
/// range).
static std::optional<Attribute> castElement(Attribute value, Type to) {
  if (auto integer = dyn_cast<IntegerAttr>(value)) {
    APInt v = integer.getValue();
    bool isBool = v.getBitWidth() == 1;
    if (to.isInteger(1))
      return IntegerAttr::get(to, APInt(1, !v.isZero()));
    if (auto intTo = dyn_cast<IntegerType>(to))
      return IntegerAttr::get(to, isBool ? v.zext(intTo.getWidth())
                                         : v.sextOrTrunc(intTo.getWidth()));
    auto floatTo = cast<FloatType>(to);
    APFloat f(floatTo.getFloatSemantics());
    f.convertFromAPInt(v, /*IsSigned=*/!isBool, APFloat::rmNearestTiesToEven);
    return FloatAttr::get(to, f);
  }
  APFloat f = cast<FloatAttr>(value).getValue();
  if (to.isInteger(1))
    return IntegerAttr::get(to, APInt(1, !f.isZero()));
  if (auto intTo = dyn_cast<IntegerType>(to)) {
    APSInt result(intTo.getWidth(), /*isUnsigned=*/false);
    bool exact;
    if (f.convertToInteger(result, APFloat::rmTowardZero, &exact) &
        APFloat::opInvalidOp)
      return std::nullopt;
    return IntegerAttr::get(to, result);
  }
  bool losesInfo;
  f.convert(cast<FloatType>(to).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &losesInfo);
  return FloatAttr::get(to, f);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  DenseElementsAttr elements = foldableConstant(adaptor.getInput());
  if (!elements)
    return {};
  auto type = cast<ShapedType>(getType());
  if (elements.isSplat()) {
    std::optional<Attribute> cast =
        castElement(elements.getSplatValue<Attribute>(), type.getElementType());
    if (!cast)
      return {};
    return SplatElementsAttr::get(type, *cast);
  }
  SmallVector<Attribute> values;
  values.reserve(elements.getNumElements());
  for (Attribute value : elements.getValues<Attribute>()) {
    std::optional<Attribute> cast = castElement(value, type.getElementType());
    if (!cast)
      return {};
    values.push_back(*cast);
  }
  return DenseElementsAttr::get(type, values);
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

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto type = cast<ShapedType>(getType());
  if (DenseElementsAttr elements = foldableConstant(adaptor.getInput())) {
    if (elements.isSplat())
      return SplatElementsAttr::get(type, elements.getSplatValue<Attribute>());
    // Element n of the result is input element sum_d (offset_d + i_d *
    // stride_d) * inputStride_d, for n's index i in the result.
    SmallVector<int64_t> inputStrides = computeStrides(input.getShape());
    auto values = llvm::to_vector(elements.getValues<Attribute>());
    SmallVector<Attribute> sliced;
    sliced.reserve(type.getNumElements());
    SmallVector<int64_t> index(type.getRank(), 0);
    for (int64_t n = 0, count = type.getNumElements(); n < count; ++n) {
      int64_t offset = 0;
      for (int64_t d = 0; d < type.getRank(); ++d)
        offset +=
            (getOffsets()[d] + index[d] * getStrides()[d]) * inputStrides[d];
      sliced.push_back(values[offset]);
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        if (++index[d] < type.getDimSize(d))
          break;
        index[d] = 0;
      }
    }
    return DenseElementsAttr::get(type, sliced);
  }
  for (auto [offset, size, stride, extent] : llvm::zip_equal(
           getOffsets(), getSizes(), getStrides(), input.getShape()))
    if (offset != 0 || size != extent || stride != 1)
      return {};
  return getInput();
}

/// A gather of a constant at constant indices (what the sparsity profiler
/// meets where PyTorch exports `ids[:, k]`); out-of-range indices are left
/// to the run-time check.
OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr data = foldableConstant(adaptor.getData());
  DenseElementsAttr indices = foldableConstant(adaptor.getIndices());
  auto type = cast<ShapedType>(getType());
  if (!data || !indices || type.getNumElements() > kMaxFoldedElements)
    return {};
  ArrayRef<int64_t> shape = cast<ShapedType>(data.getType()).getShape();
  int64_t axis = getAxis(), extent = shape[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  SmallVector<int64_t> picked;
  for (const APInt &index : indices.getValues<APInt>()) {
    int64_t i = index.getSExtValue();
    if (i < -extent || i >= extent)
      return {};
    picked.push_back(i < 0 ? i + extent : i);
  }
  auto values = llvm::to_vector(data.getValues<Attribute>());
  SmallVector<Attribute> gathered;
  gathered.reserve(type.getNumElements());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : picked)
      llvm::append_range(gathered, ArrayRef<Attribute>(values).slice(
                                       (o * extent + i) * inner, inner));
  return DenseElementsAttr::get(type, gathered);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  auto type = cast<ShapedType>(getType());
  SmallVector<DenseElementsAttr> constants;
  for (Attribute operand : adaptor.getInputs()) {
    DenseElementsAttr elements = foldableConstant(operand);
    if (!elements)
      return {};
    constants.push_back(elements);
  }
  // Equal splats join into a splat.
  if (llvm::all_of(constants, [&](DenseElementsAttr c) {
        return c.isSplat() && c.getSplatValue<Attribute>() ==
                                  constants.front().getSplatValue<Attribute>();
      }))
    return SplatElementsAttr::get(type,
                                  constants.front().getSplatValue<Attribute>());
  if (type.getNumElements() > kMaxFoldedElements)
    return {};
  SmallVector<SmallVector<Attribute>> inputs;
  for (DenseElementsAttr elements : constants)
    inputs.push_back(llvm::to_vector(elements.getValues<Attribute>()));
  // Per index of the dimensions before the axis, each input's block.
  int64_t outer = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(getAxis()); ++d)
    outer *= type.getDimSize(d);
  SmallVector<Attribute> joined;
  joined.reserve(type.getNumElements());
  for (int64_t o = 0; o < outer; ++o)
    for (ArrayRef<Attribute> input : inputs) {
      int64_t block = input.size() / outer;
      llvm::append_range(joined, input.slice(o * block, block));
    }
  return DenseElementsAttr::get(type, joined);
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
