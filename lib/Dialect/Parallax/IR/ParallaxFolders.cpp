//===- ParallaxFolders.cpp - Folds of the compute ops ---------------------===//
//
// Part of the Parallax project.
//
// Identity folds of the data movement ops (a transpose by the identity, an
// expand, slice, tile or pad that changes nothing), constant folding of
// elementwise arithmetic, comparisons and selects through
// mlir/Dialect/CommonFolders.h (floats as APFloat in the element type's
// own precision, rounded as the element type rounds, never computed in
// double; integers as APInt of their width; operands broadcast as numpy
// broadcasts), and of casts, reshapes, expands, slices, concatenations and
// gathers of constants.
// These are Parallax's one constant evaluator: builders fold through
// createOrFold (the gradient rules), the canonicalizer through these
// hooks, the sparsity profiler evaluates row ids with them
// (lib/Analysis/ProfileSparsity.cpp) and the ONNX importer the shape
// computations PyTorch exports (lib/Target/ONNX/Folding.cpp).
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/CommonFolders.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

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

/// Non-splat constants larger than this stay run-time ops: these folds
/// go element by element through uniqued attributes.
static constexpr int64_t kMaxFoldedElements = int64_t(1) << 16;

/// Steps `index` to the next index of `shape` in row-major order.
static void advance(MutableArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d])
      return;
    index[d] = 0;
  }
}

/// A constant operand broadcast to `shape` as numpy broadcasts (shapes
/// aligned on the right), keeping its element type; null when it is not a
/// constant, or a non-splat too large to expand here.
static DenseElementsAttr broadcastConstant(Attribute operand,
                                           ArrayRef<int64_t> shape) {
  auto elements = dyn_cast_or_null<DenseElementsAttr>(operand);
  if (!elements)
    return {};
  auto inputType = cast<ShapedType>(elements.getType());
  if (inputType.getShape() == shape)
    return elements;
  auto type = RankedTensorType::get(shape, inputType.getElementType());
  if (elements.isSplat())
    return SplatElementsAttr::get(type, elements.getSplatValue<Attribute>());
  if (type.getNumElements() > kMaxFoldedElements)
    return {};
  ArrayRef<int64_t> inputShape = inputType.getShape();
  SmallVector<int64_t> inputStrides = computeStrides(inputShape);
  int64_t leading = type.getRank() - inputType.getRank();
  auto values = llvm::to_vector(elements.getValues<Attribute>());
  SmallVector<Attribute> broadcast;
  broadcast.reserve(type.getNumElements());
  SmallVector<int64_t> index(type.getRank(), 0);
  for (int64_t n = 0, count = type.getNumElements(); n < count; ++n) {
    int64_t offset = 0;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      if (inputShape[d] != 1)
        offset += index[leading + d] * inputStrides[d];
    broadcast.push_back(values[offset]);
    advance(index, shape);
  }
  return DenseElementsAttr::get(type, broadcast);
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
  Attribute lhs = broadcastConstant(operands[0], type.getShape());
  Attribute rhs = broadcastConstant(operands[1], type.getShape());
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

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  // NaN wins, as arith.maximumf (the lowering) and PyTorch's max decide.
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return maximum(a, b);
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return llvm::APIntOps::smax(a, b);
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldArithmetic(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {
        return minimum(a, b);
      },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return llvm::APIntOps::smin(a, b);
      });
}

/// Folds a unary op of a constant, per element of its floating-point or
/// integer type.
static OpFoldResult foldUnary(Operation *op, ArrayRef<Attribute> operands,
                              function_ref<APFloat(const APFloat &)> onFloats,
                              function_ref<APInt(const APInt &)> onIntegers) {
  Type elementType = getElementTypeOrSelf(op->getResult(0).getType());
  if (isa<FloatType>(elementType))
    return constFoldUnaryOp<FloatAttr, APFloat, void>(
        operands, [&](const APFloat &a) { return onFloats(a); });
  return constFoldUnaryOp<IntegerAttr, APInt, void>(
      operands, [&](const APInt &a) { return onIntegers(a); });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return foldUnary(
      *this, adaptor.getOperands(), [](const APFloat &a) { return -a; },
      [](const APInt &a) { return -a; });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      *this, adaptor.getOperands(), [](const APFloat &a) { return abs(a); },
      [](const APInt &a) { return a.abs(); });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NotOp>())
    return inner.getInput();
  return constFoldUnaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(), [](const APInt &a) { return ~a; });
}

//===----------------------------------------------------------------------===//
// Comparisons and select
//===----------------------------------------------------------------------===//

/// The orders of (lhs, rhs) for which a comparison holds.
struct Holds {
  bool less, equal, greater;
};

/// Signed order, except for booleans (1 bit: true would be -1).
static bool lessThan(const APInt &a, const APInt &b) {
  return a.getBitWidth() == 1 ? a.ult(b) : a.slt(b);
}

/// Folds a comparison of two constants into an i1 constant. Floats compare
/// as IEEE does (every comparison with a NaN is false), integers as signed
/// numbers, booleans as 0 and 1.
static OpFoldResult foldComparison(Operation *op, ArrayRef<Attribute> operands,
                                   Holds holds) {
  auto type = cast<ShapedType>(op->getResult(0).getType());
  DenseElementsAttr lhs = broadcastConstant(operands[0], type.getShape());
  DenseElementsAttr rhs = broadcastConstant(operands[1], type.getShape());
  if (!lhs || !rhs)
    return {};
  bool isFloat = isa<FloatType>(lhs.getElementType());
  auto compare = [&](Attribute a, Attribute b) {
    if (isFloat) {
      APFloat::cmpResult order =
          cast<FloatAttr>(a).getValue().compare(cast<FloatAttr>(b).getValue());
      return (order == APFloat::cmpLessThan && holds.less) ||
             (order == APFloat::cmpEqual && holds.equal) ||
             (order == APFloat::cmpGreaterThan && holds.greater);
    }
    const APInt &x = cast<IntegerAttr>(a).getValue();
    const APInt &y = cast<IntegerAttr>(b).getValue();
    if (x == y)
      return holds.equal;
    return lessThan(x, y) ? holds.less : holds.greater;
  };
  if (lhs.isSplat() && rhs.isSplat())
    return DenseElementsAttr::get(type,
                                  compare(lhs.getSplatValue<Attribute>(),
                                          rhs.getSplatValue<Attribute>()));
  SmallVector<bool> values;
  values.reserve(type.getNumElements());
  for (auto [a, b] :
       llvm::zip_equal(lhs.getValues<Attribute>(), rhs.getValues<Attribute>()))
    values.push_back(compare(a, b));
  return DenseElementsAttr::get(type, values);
}

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(), {false, true, false});
}

OpFoldResult LessOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(), {true, false, false});
}

OpFoldResult LessEqualOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(), {true, true, false});
}

OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(), {false, false, true});
}

OpFoldResult GreaterEqualOp::fold(FoldAdaptor adaptor) {
  return foldComparison(*this, adaptor.getOperands(), {false, true, true});
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  auto type = cast<ShapedType>(getType());
  // A splat condition picks one side whole when it has the result's type.
  if (auto condition =
          dyn_cast_or_null<DenseElementsAttr>(adaptor.getCondition());
      condition && condition.isSplat()) {
    Value picked =
        condition.getSplatValue<bool>() ? getTrueValue() : getFalseValue();
    if (picked.getType() == type)
      return picked;
  }
  DenseElementsAttr condition =
      broadcastConstant(adaptor.getCondition(), type.getShape());
  DenseElementsAttr onTrue =
      broadcastConstant(adaptor.getTrueValue(), type.getShape());
  DenseElementsAttr onFalse =
      broadcastConstant(adaptor.getFalseValue(), type.getShape());
  if (!condition || !onTrue || !onFalse)
    return {};
  if (condition.isSplat())
    return condition.getSplatValue<bool>() ? onTrue : onFalse;
  SmallVector<Attribute> values;
  values.reserve(type.getNumElements());
  for (auto [c, t, f] : llvm::zip_equal(condition.getValues<bool>(),
                                        onTrue.getValues<Attribute>(),
                                        onFalse.getValues<Attribute>()))
    values.push_back(c ? t : f);
  return DenseElementsAttr::get(type, values);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

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
  return broadcastConstant(adaptor.getInput(),
                           cast<ShapedType>(getType()).getShape());
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
      advance(index, type.getShape());
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
