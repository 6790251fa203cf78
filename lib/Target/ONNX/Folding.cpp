//===- Folding.cpp - Compile-time evaluation of ONNX shape computations ---===//
//
// Part of the Parallax project.
//
// PyTorch exports shape arithmetic (Shape -> Gather -> Concat -> Reshape,
// ConstantOfShape, Range, Expand ...). Once every dimension is bound, these
// nodes only see compile-time values; evaluating them here leaves a graph
// with static shapes and no shape computation at run time.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Traits.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

//===----------------------------------------------------------------------===//
// Const
//===----------------------------------------------------------------------===//

int64_t Const::size() const { return ShapedType::getNumElements(shape); }

Const Const::ofInts(Type elementType, ArrayRef<int64_t> shape,
                    std::vector<int64_t> values) {
  Const c;
  c.shape.assign(shape.begin(), shape.end());
  c.elementType = elementType;
  c.ints = std::move(values);
  return c;
}

Const Const::ofFloats(Type elementType, ArrayRef<int64_t> shape,
                      std::vector<double> values) {
  Const c;
  c.shape.assign(shape.begin(), shape.end());
  c.elementType = elementType;
  c.floats = std::move(values);
  // Values are held as doubles but belong to `elementType`: round each to
  // it, so a computation folded here gives what the element type computes
  // (for +, -, *, / of f32, f16 or bf16 operands, the double result rounded
  // once is the correctly rounded result).
  if (auto floatType = dyn_cast<FloatType>(elementType);
      floatType && !floatType.isF64())
    for (double &v : c.floats) {
      APFloat value(v);
      bool inexact;
      value.convert(floatType.getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &inexact);
      v = value.convertToDouble();
    }
  return c;
}

/// Wraps `v` to a signed integer of `width` bits (two's complement).
static int64_t wrapToWidth(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  if (width == 1)
    return v != 0;
  return llvm::SignExtend64(static_cast<uint64_t>(v), width);
}

Const Const::castTo(Type target) const {
  int64_t n = size();
  if (isa<FloatType>(target)) {
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = at(i);
    return ofFloats(target, shape, std::move(values));
  }
  unsigned width = target.getIntOrFloatBitWidth();
  std::vector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i) {
    if (width == 1)
      values[i] = at(i) != 0;
    else if (isFloat())
      values[i] =
          wrapToWidth(static_cast<int64_t>(std::trunc(floats[i])), width);
    else
      values[i] = wrapToWidth(ints[i], width);
  }
  return ofInts(target, shape, std::move(values));
}

DenseElementsAttr Const::toAttr() const {
  RankedTensorType type = getType();
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> values;
    values.reserve(floats.size());
    for (double v : floats) {
      APFloat f(v);
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  if (elementType.isInteger(1)) {
    SmallVector<bool> values(ints.begin(), ints.end());
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  SmallVector<APInt> values;
  values.reserve(ints.size());
  for (int64_t v : ints)
    values.emplace_back(elementType.getIntOrFloatBitWidth(), v,
                        /*isSigned=*/true);
  return DenseElementsAttr::get(type, values);
}

//===----------------------------------------------------------------------===//
// Index helpers
//===----------------------------------------------------------------------===//

namespace {

using Shape = SmallVector<int64_t>;

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Maps linear index `i` of `outShape` to the linear index of `inShape`
/// under numpy broadcasting (shapes aligned on the right).
int64_t broadcastIndex(ArrayRef<int64_t> outShape, ArrayRef<int64_t> inShape,
                       int64_t i) {
  int64_t offset = outShape.size() - inShape.size();
  SmallVector<int64_t> inStrides = stridesOf(inShape);
  int64_t result = 0;
  for (int64_t d = static_cast<int64_t>(outShape.size()) - 1; d >= 0; --d) {
    int64_t coord = i % outShape[d];
    i /= outShape[d];
    int64_t inDim = d - offset;
    if (inDim >= 0 && inShape[inDim] != 1)
      result += coord * inStrides[inDim];
  }
  return result;
}

/// Builds a constant of `shape` whose element i is `in` at index `map(i)`.
template <typename Map>
Const gatherElements(const Const &in, ArrayRef<int64_t> shape, Map map) {
  int64_t n = ShapedType::getNumElements(shape);
  if (in.isFloat()) {
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = in.floats[map(i)];
    return Const::ofFloats(in.elementType, shape, std::move(values));
  }
  std::vector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = in.ints[map(i)];
  return Const::ofInts(in.elementType, shape, std::move(values));
}

Const reshaped(const Const &in, ArrayRef<int64_t> shape) {
  Const out = in;
  out.shape.assign(shape.begin(), shape.end());
  return out;
}

enum class BinaryFn { Add, Sub, Mul, Div, Equal, Less, Greater, Max, Min };

/// The comparisons and min/max, alike for floats and integers; nullopt for
/// the arithmetic, whose integer form wraps and checks for division by 0.
template <typename T> std::optional<T> compareOrPick(BinaryFn fn, T x, T y) {
  switch (fn) {
  case BinaryFn::Equal:
    return x == y;
  case BinaryFn::Less:
    return x < y;
  case BinaryFn::Greater:
    return x > y;
  case BinaryFn::Max:
    return std::max(x, y);
  case BinaryFn::Min:
    return std::min(x, y);
  default:
    return std::nullopt;
  }
}

FailureOr<Const> foldBinary(NodeContext &ctx, BinaryFn fn, const Const &a,
                            const Const &b) {
  Shape shape;
  if (!OpTrait::util::getBroadcastedShape(a.shape, b.shape, shape))
    return ctx.emitError() << "operand shapes are not broadcast-compatible";
  if (!countElements(shape, kMaxFoldedElements))
    return ctx.emitError() << "a compile-time value of more than 2^26 "
                              "elements is not supported";
  bool predicate =
      fn == BinaryFn::Equal || fn == BinaryFn::Less || fn == BinaryFn::Greater;
  int64_t n = ShapedType::getNumElements(shape);
  if (a.isFloat()) {
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i) {
      double x = a.floats[broadcastIndex(shape, a.shape, i)];
      double y = b.floats[broadcastIndex(shape, b.shape, i)];
      if (std::optional<double> v = compareOrPick(fn, x, y)) {
        values[i] = *v;
        continue;
      }
      switch (fn) {
      case BinaryFn::Add:
        values[i] = x + y;
        break;
      case BinaryFn::Sub:
        values[i] = x - y;
        break;
      case BinaryFn::Mul:
        values[i] = x * y;
        break;
      default: // Div
        values[i] = x / y;
        break;
      }
    }
    if (!predicate)
      return Const::ofFloats(a.elementType, shape, std::move(values));
    std::vector<int64_t> bits(values.begin(), values.end());
    return Const::ofInts(ctx.builder.getI1Type(), shape, std::move(bits));
  }
  std::vector<int64_t> values(n);
  unsigned width = a.elementType.getIntOrFloatBitWidth();
  for (int64_t i = 0; i < n; ++i) {
    int64_t x = a.ints[broadcastIndex(shape, a.shape, i)];
    int64_t y = b.ints[broadcastIndex(shape, b.shape, i)];
    if (std::optional<int64_t> v = compareOrPick(fn, x, y)) {
      values[i] = *v;
      continue;
    }
    switch (fn) {
    case BinaryFn::Add:
      values[i] = wrapToWidth(x + y, width);
      break;
    case BinaryFn::Sub:
      values[i] = wrapToWidth(x - y, width);
      break;
    case BinaryFn::Mul:
      values[i] = wrapToWidth(x * y, width);
      break;
    default: // Div
      if (y == 0)
        return ctx.emitError() << "integer division by zero";
      // ONNX integer Div truncates toward zero like C++.
      values[i] = x / y;
      break;
    }
  }
  return Const::ofInts(predicate ? ctx.builder.getI1Type() : a.elementType,
                       shape, std::move(values));
}

std::optional<Const> foldConstantNode(NodeContext &ctx) {
  if (ctx.attr("value"))
    return ctx.attrTensor("value");
  Builder &b = ctx.builder;
  if (ctx.attr("value_float"))
    return Const::ofFloats(b.getF32Type(), {},
                           {ctx.attrFloat("value_float", 0)});
  if (ctx.attr("value_int"))
    return Const::ofInts(b.getI64Type(), {}, {ctx.attrInt("value_int", 0)});
  if (const onnx::AttributeProto *a = ctx.attr("value_floats")) {
    std::vector<double> values(a->floats().begin(), a->floats().end());
    int64_t n = values.size();
    return Const::ofFloats(b.getF32Type(), {n}, std::move(values));
  }
  if (std::optional<Shape> ints = ctx.attrInts("value_ints")) {
    int64_t n = ints->size();
    return Const::ofInts(b.getI64Type(), {n},
                         std::vector<int64_t>(ints->begin(), ints->end()));
  }
  ctx.emitError() << "only tensor, float(s) and int(s) values are supported";
  return std::nullopt;
}

FailureOr<bool> foldShapeOf(NodeContext &ctx, bool sizeOnly) {
  RankedTensorType type = ctx.inputType(0);
  if (!type)
    return failure();
  Builder &b = ctx.builder;
  if (sizeOnly) {
    ctx.setConstOutput(
        0, Const::ofInts(b.getI64Type(), {}, {type.getNumElements()}));
    return true;
  }
  int64_t rank = type.getRank();
  auto clampDim = [&](int64_t d) {
    return std::clamp<int64_t>(d < 0 ? d + rank : d, 0, rank);
  };
  int64_t start = clampDim(ctx.attrInt("start", 0));
  int64_t end = clampDim(ctx.attrInt("end", rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(type.getDimSize(d));
  int64_t n = dims.size();
  ctx.setConstOutput(0, Const::ofInts(b.getI64Type(), {n}, std::move(dims)));
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// tryFold
//===----------------------------------------------------------------------===//

FailureOr<bool> onnx_import::tryFold(NodeContext &ctx) {
  StringRef op = ctx.node.op_type();
  if (op == "Constant") {
    std::optional<Const> value = foldConstantNode(ctx);
    if (!value)
      return failure();
    ctx.setConstOutput(0, std::move(*value));
    return true;
  }
  if (op == "Shape" || op == "Size")
    return foldShapeOf(ctx, op == "Size");

  static const llvm::StringSet<> foldable = {
      "Identity", "Cast",   "Reshape", "Flatten", "Squeeze", "Unsqueeze",
      "Concat",   "Gather", "Slice",   "Add",     "Sub",     "Mul",
      "Div",      "Neg",    "Abs",     "Equal",   "Less",    "Greater",
      "Not",      "Where",  "Max",     "Min",     "Expand",  "ConstantOfShape",
      "Range"};
  if (!foldable.contains(op))
    return false;
  SmallVector<const Const *> in;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i)) {
      in.push_back(nullptr);
      continue;
    }
    const Const *c = ctx.constInput(i);
    if (!c)
      return false;
    in.push_back(c);
  }
  if (in.empty() || !in[0])
    return false;
  const Const &x = *in[0];
  auto done = [&](Const value) -> FailureOr<bool> {
    ctx.setConstOutput(0, std::move(value));
    return true;
  };

  if (op == "Identity")
    return done(x);
  if (op == "Cast") {
    Type to = ctx.importerElementType(ctx.attrInt("to", 0));
    if (!to)
      return false; // the converter reports it
    return done(x.castTo(to));
  }
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze") {
    auto compute = llvm::StringSwitch<std::optional<Shape> (*)(
        NodeContext &, ArrayRef<int64_t>)>(op)
                       .Case("Reshape", reshapeShape)
                       .Case("Flatten", flattenShape)
                       .Case("Squeeze", squeezeShape)
                       .Default(unsqueezeShape);
    std::optional<Shape> shape = compute(ctx, x.shape);
    if (!shape)
      return failure();
    return done(reshaped(x, *shape));
  }
  // Results too large to evaluate here stay run-time ops.
  auto tooLarge = [](ArrayRef<int64_t> shape) {
    return !countElements(shape, kMaxFoldedElements);
  };
  if (op == "Expand") {
    std::optional<Shape> shape = expandShape(ctx, x.shape);
    if (!shape)
      return failure();
    if (tooLarge(*shape))
      return false;
    return done(gatherElements(x, *shape, [&](int64_t i) {
      return broadcastIndex(*shape, x.shape, i);
    }));
  }
  if (op == "Neg" || op == "Abs" || op == "Not") {
    Const out = x;
    for (double &v : out.floats)
      v = op == "Neg" ? -v : std::fabs(v);
    for (int64_t &v : out.ints)
      v = op == "Neg" ? -v : op == "Abs" ? std::abs(v) : !v;
    return done(std::move(out));
  }
  if (op == "Where") {
    if (!in[1] || !in[2] || in[1]->isFloat() != in[2]->isFloat())
      return false;
    Shape shape, tmp;
    if (!OpTrait::util::getBroadcastedShape(x.shape, in[1]->shape, tmp) ||
        !OpTrait::util::getBroadcastedShape(tmp, in[2]->shape, shape))
      return ctx.emitError() << "operand shapes are not broadcast-compatible";
    if (tooLarge(shape))
      return false;
    Const out = gatherElements(*in[1], shape, [&](int64_t i) {
      return broadcastIndex(shape, in[1]->shape, i);
    });
    for (int64_t i = 0, n = out.size(); i < n; ++i) {
      if (x.ints[broadcastIndex(shape, x.shape, i)])
        continue;
      int64_t j = broadcastIndex(shape, in[2]->shape, i);
      if (out.isFloat())
        out.floats[i] = in[2]->floats[j];
      else
        out.ints[i] = in[2]->ints[j];
    }
    return done(std::move(out));
  }
  std::optional<BinaryFn> binary =
      llvm::StringSwitch<std::optional<BinaryFn>>(op)
          .Case("Add", BinaryFn::Add)
          .Case("Sub", BinaryFn::Sub)
          .Case("Mul", BinaryFn::Mul)
          .Case("Div", BinaryFn::Div)
          .Case("Equal", BinaryFn::Equal)
          .Case("Less", BinaryFn::Less)
          .Case("Greater", BinaryFn::Greater)
          .Case("Max", BinaryFn::Max)
          .Case("Min", BinaryFn::Min)
          .Default(std::nullopt);
  if (binary) {
    Const acc = x;
    for (unsigned i = 1; i < in.size(); ++i) {
      if (!in[i] || in[i]->elementType != x.elementType)
        return false; // the converter reports mismatches
      FailureOr<Const> next = foldBinary(ctx, *binary, acc, *in[i]);
      if (failed(next))
        return failure();
      acc = std::move(*next);
    }
    return done(std::move(acc));
  }
  if (op == "Concat") {
    int64_t rank = x.shape.size();
    int64_t axis = ctx.normalizeAxis(ctx.attrInt("axis", 0), rank);
    if (axis < 0)
      return failure();
    Shape shape = x.shape;
    shape[axis] = 0;
    for (const Const *c : in) {
      if (!c || c->shape.size() != x.shape.size() ||
          c->isFloat() != x.isFloat())
        return false;
      shape[axis] += c->shape[axis];
    }
    int64_t outer =
        ShapedType::getNumElements(ArrayRef(shape).take_front(axis));
    Const out = Const::ofInts(x.elementType, shape, {});
    if (x.isFloat())
      out = Const::ofFloats(x.elementType, shape, {});
    for (int64_t o = 0; o < outer; ++o)
      for (const Const *c : in) {
        int64_t chunk =
            ShapedType::getNumElements(ArrayRef(c->shape).drop_front(axis));
        if (x.isFloat())
          out.floats.insert(out.floats.end(), c->floats.begin() + o * chunk,
                            c->floats.begin() + (o + 1) * chunk);
        else
          out.ints.insert(out.ints.end(), c->ints.begin() + o * chunk,
                          c->ints.begin() + (o + 1) * chunk);
      }
    return done(std::move(out));
  }
  if (op == "Gather") {
    if (!in[1])
      return false;
    int64_t rank = x.shape.size();
    int64_t axis = ctx.normalizeAxis(ctx.attrInt("axis", 0), rank);
    if (axis < 0)
      return failure();
    int64_t dim = x.shape[axis];
    Shape shape(ArrayRef(x.shape).take_front(axis));
    llvm::append_range(shape, in[1]->shape);
    llvm::append_range(shape, ArrayRef(x.shape).drop_front(axis + 1));
    if (tooLarge(shape))
      return false;
    int64_t inner =
        ShapedType::getNumElements(ArrayRef(x.shape).drop_front(axis + 1));
    int64_t count = in[1]->size();
    for (int64_t index : in[1]->ints)
      if (index < -dim || index >= dim)
        return ctx.emitError() << "index " << index << " is out of range for "
                               << "axis " << axis << " of size " << dim;
    return done(gatherElements(x, shape, [&](int64_t i) {
      int64_t k = i % inner, rest = i / inner;
      int64_t j = rest % count, o = rest / count;
      int64_t index = in[1]->ints[j];
      if (index < 0)
        index += dim;
      return (o * dim + index) * inner + k;
    }));
  }
  if (op == "Slice") {
    std::optional<SliceParams> p = sliceParams(ctx, x.shape);
    if (!p)
      return failure();
    SmallVector<int64_t> inStrides = stridesOf(x.shape);
    return done(gatherElements(x, p->sizes, [&](int64_t i) {
      int64_t index = 0;
      for (int64_t d = static_cast<int64_t>(p->sizes.size()) - 1; d >= 0; --d) {
        int64_t coord = i % p->sizes[d];
        i /= p->sizes[d];
        index += (p->offsets[d] + coord * p->strides[d]) * inStrides[d];
      }
      return index;
    }));
  }
  if (op == "ConstantOfShape") {
    for (int64_t d : x.ints)
      if (d < 0)
        return ctx.emitError() << "shape has a negative dimension " << d;
    if (!countElements(x.ints, kMaxElements))
      return ctx.emitError() << "shape has more than 2^40 elements";
    if (tooLarge(x.ints))
      return ctx.emitError() << "a constant of more than 2^26 elements is "
                                "not supported";
    Const fill = Const::ofFloats(ctx.builder.getF32Type(), {1}, {0.0});
    if (ctx.attr("value")) {
      std::optional<Const> value = ctx.attrTensor("value");
      if (!value || value->size() != 1)
        return ctx.emitError() << "'value' must hold exactly one element";
      fill = *value;
    }
    return done(gatherElements(fill, x.ints, [](int64_t) { return 0; }));
  }
  if (op == "Range") {
    if (!in[1] || !in[2] || x.size() != 1 || in[1]->size() != 1 ||
        in[2]->size() != 1)
      return ctx.emitError() << "start, limit and delta must be scalars";
    double start = x.at(0), limit = in[1]->at(0), delta = in[2]->at(0);
    if (delta == 0)
      return ctx.emitError() << "delta is 0";
    double count = std::ceil((limit - start) / delta);
    if (!(count < static_cast<double>(kMaxFoldedElements)))
      return ctx.emitError() << "a range of more than 2^26 elements is not "
                                "supported";
    int64_t n = std::max<int64_t>(static_cast<int64_t>(count), 0);
    if (x.isFloat()) {
      std::vector<double> values(n);
      for (int64_t i = 0; i < n; ++i)
        values[i] = start + i * delta;
      return done(Const::ofFloats(x.elementType, {n}, std::move(values)));
    }
    std::vector<int64_t> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = x.ints[0] + i * in[2]->ints[0];
    return done(Const::ofInts(x.elementType, {n}, std::move(values)));
  }
  return false;
}
