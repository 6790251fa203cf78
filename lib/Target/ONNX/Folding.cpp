//===- Folding.cpp - Compile-time evaluation of ONNX shape computations ---===//
//
// Part of the Parallax project.
//
// PyTorch exports shape arithmetic (Shape -> Gather -> Concat -> Reshape,
// ConstantOfShape, Range, Expand ...). Once every dimension is bound, these
// nodes only see compile-time values; evaluating them at import leaves a
// graph with static shapes and no shape computation at run time. The
// sources of such values (Constant, Shape, Size, ConstantOfShape, Range)
// are read here; everything computed from them is evaluated by the
// dialect's folders (ParallaxFolders.cpp), the same code that folds for
// the gradient builder and the sparsity profiler.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/SaveAndRestore.h"

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
  // it (a float Range's steps), so a value is what the element type holds.
  if (auto floatType = dyn_cast<FloatType>(elementType);
      floatType && !floatType.isF64())
    for (double &v : c.floats) {
      APFloat value(v);
      bool inexact;
      value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &inexact);
      v = value.convertToDouble();
    }
  return c;
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

Const Const::fromAttr(DenseElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  Type elementType = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    std::vector<double> values;
    values.reserve(type.getNumElements());
    for (APFloat v : attr.getValues<APFloat>()) {
      bool lost;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v.convertToDouble());
    }
    return ofFloats(elementType, type.getShape(), std::move(values));
  }
  std::vector<int64_t> values;
  values.reserve(type.getNumElements());
  bool isBool = elementType.isInteger(1);
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(isBool ? v.getZExtValue() : v.getSExtValue());
  return ofInts(elementType, type.getShape(), std::move(values));
}

//===----------------------------------------------------------------------===//
// Compile-time sources: Constant, Shape, Size, ConstantOfShape, Range
//===----------------------------------------------------------------------===//

namespace {

using Shape = SmallVector<int64_t>;

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

FailureOr<Const> foldConstantOfShape(NodeContext &ctx, const Const &shape) {
  for (int64_t d : shape.ints)
    if (d < 0)
      return ctx.emitError() << "shape has a negative dimension " << d;
  if (!countElements(shape.ints, kMaxElements))
    return ctx.emitError() << "shape has more than 2^40 elements";
  if (!countElements(shape.ints, kMaxFoldedElements))
    return ctx.emitError() << "a constant of more than 2^26 elements is "
                              "not supported";
  Const fill = Const::ofFloats(ctx.builder.getF32Type(), {1}, {0.0});
  if (ctx.attr("value")) {
    std::optional<Const> value = ctx.attrTensor("value");
    if (!value || value->size() != 1)
      return ctx.emitError() << "'value' must hold exactly one element";
    fill = *value;
  }
  int64_t n = ShapedType::getNumElements(shape.ints);
  if (fill.isFloat())
    return Const::ofFloats(fill.elementType, shape.ints,
                           std::vector<double>(n, fill.floats[0]));
  return Const::ofInts(fill.elementType, shape.ints,
                       std::vector<int64_t>(n, fill.ints[0]));
}

FailureOr<Const> foldRange(NodeContext &ctx, const Const &start,
                           const Const &limit, const Const &delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1)
    return ctx.emitError() << "start, limit and delta must be scalars";
  double first = start.at(0), last = limit.at(0), step = delta.at(0);
  if (step == 0)
    return ctx.emitError() << "delta is 0";
  double count = std::ceil((last - first) / step);
  if (!(count < static_cast<double>(kMaxFoldedElements)))
    return ctx.emitError() << "a range of more than 2^26 elements is not "
                              "supported";
  int64_t n = std::max<int64_t>(static_cast<int64_t>(count), 0);
  if (start.isFloat()) {
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i)
      values[i] = first + i * step;
    return Const::ofFloats(start.elementType, {n}, std::move(values));
  }
  std::vector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = start.ints[0] + i * delta.ints[0];
  return Const::ofInts(start.elementType, {n}, std::move(values));
}

/// ReduceSum/Prod/Max/Min of integer constants (PyTorch computes element
/// counts from shapes this way: EmbeddingBag's ReduceProd of a shape).
/// std::nullopt when the node is not such a reduction; the converter then
/// builds the reduction as usual.
std::optional<Const> foldIntegerReduce(NodeContext &ctx, const Const &input) {
  StringRef op = ctx.node.op_type();
  if (input.isFloat())
    return std::nullopt;
  int64_t rank = input.shape.size();
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> attr = ctx.attrInts("axes")) {
    axes = *attr;
  } else if (ctx.hasInput(1)) {
    const Const *given = ctx.constInput(1);
    if (!given)
      return std::nullopt;
    axes.assign(given->ints.begin(), given->ints.end());
  }
  if (axes.empty() && ctx.attrInt("noop_with_empty_axes", 0))
    return input;
  SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    int64_t d = ctx.normalizeAxis(axis, rank);
    if (d < 0)
      return std::nullopt;
    reduced[d] = true;
  }
  bool keepdims = ctx.attrInt("keepdims", 1) != 0;
  SmallVector<int64_t> shape, kept;
  for (int64_t d = 0; d < rank; ++d) {
    kept.push_back(reduced[d] ? 1 : input.shape[d]);
    if (!reduced[d] || keepdims)
      shape.push_back(kept.back());
  }
  int64_t count = 1;
  for (int64_t dim : kept)
    count *= dim;
  std::vector<int64_t> values(count);
  std::vector<bool> seen(count, false);
  for (int64_t i = 0; i < input.size(); ++i) {
    // The output element of input element i: reduced coordinates are 0.
    int64_t rest = i, out = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t coord = rest % input.shape[d];
      rest /= input.shape[d];
      if (!reduced[d])
        out += coord * stride;
      stride *= kept[d];
    }
    int64_t x = input.ints[i], &acc = values[out];
    if (!seen[out])
      acc = x;
    else if (op == "ReduceSum")
      acc += x;
    else if (op == "ReduceProd")
      acc *= x;
    else if (op == "ReduceMax")
      acc = std::max(acc, x);
    else
      acc = std::min(acc, x);
    seen[out] = true;
  }
  if (op == "ReduceSum" || op == "ReduceProd")
    for (int64_t i = 0; i < count; ++i)
      if (!seen[i])
        values[i] = op == "ReduceSum" ? 0 : 1;
  return Const::ofInts(input.elementType, shape, std::move(values));
}

} // namespace

//===----------------------------------------------------------------------===//
// Evaluation through the dialect's folders
//===----------------------------------------------------------------------===//

FailureOr<bool> GraphImporter::evaluate(NodeContext &ctx, Converter convert) {
  // The converter builds the node's ops in a block of their own, on its
  // constant inputs; nothing reaches the function unless every output
  // folds.
  Block scratch;
  llvm::scope_exit discard([&] {
    scratch.dropAllReferences();
    scratch.clear();
  });
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&scratch);
    llvm::SaveAndRestore uncached(materializeUncached, true);
    if (failed(convert(ctx)) || ctx.failed())
      return failure();
  }

  // Fold the ops in order: each one's operands are constants or results
  // of the ops before it, already folded where they could be.
  DenseMap<Value, Value> replaced;
  OpBuilder b(context);
  for (Operation &op : llvm::make_early_inc_range(scratch)) {
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    b.setInsertionPoint(&op);
    SmallVector<Value> results;
    if (failed(b.tryFold(&op, results)) || results.empty())
      continue;
    for (auto [result, value] : llvm::zip_equal(op.getResults(), results)) {
      result.replaceAllUsesWith(value);
      replaced[result] = value;
    }
  }

  SmallVector<std::pair<std::string, Const>> outputs;
  bool allFolded = true;
  for (unsigned i = 0; i < ctx.numOutputs(); ++i) {
    auto it = values.find(ctx.node.output(i));
    if (it == values.end()) {
      allFolded &= !ctx.outputUsed(i);
      continue;
    }
    Value value = it->second;
    values.erase(it);
    while (replaced.count(value))
      value = replaced.lookup(value);
    DenseElementsAttr attr;
    if (!matchPattern(value, m_Constant(&attr))) {
      allFolded = false;
      continue;
    }
    outputs.emplace_back(ctx.node.output(i), Const::fromAttr(attr));
  }
  if (!allFolded)
    return false;
  for (auto &[name, value] : outputs)
    defineConst(name, std::move(value));
  return true;
}

//===----------------------------------------------------------------------===//
// tryFold
//===----------------------------------------------------------------------===//

FailureOr<bool> GraphImporter::tryFold(NodeContext &ctx) {
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

  // Sources computed from constant inputs, and the shape computations
  // PyTorch exports: their converters build dialect ops, which the
  // dialect's folders evaluate.
  bool isSource = op == "ConstantOfShape" || op == "Range";
  if (llvm::is_contained({"ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin"},
                         op)) {
    const Const *input = ctx.hasInput(0) ? ctx.constInput(0) : nullptr;
    std::optional<Const> value =
        input ? foldIntegerReduce(ctx, *input) : std::nullopt;
    if (!value) {
      if (ctx.failed())
        return failure();
      return false;
    }
    ctx.setConstOutput(0, std::move(*value));
    return true;
  }
  // clang-format off
  static const char *const evaluated[] = {
      "Identity", "Cast", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
      "Concat", "Gather", "Slice", "Expand", "Add", "Sub", "Mul", "Div",
      "Neg", "Abs", "Max", "Min", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "Not", "Where"};
  // clang-format on
  if (!isSource && !llvm::is_contained(evaluated, op))
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
  if (!isSource)
    return evaluate(ctx, lookupConverter(op));

  FailureOr<Const> value = failure();
  if (op == "ConstantOfShape") {
    value = foldConstantOfShape(ctx, *in[0]);
  } else {
    if (in.size() != 3 || !in[1] || !in[2])
      return ctx.emitError() << "start, limit and delta must be scalars";
    value = foldRange(ctx, *in[0], *in[1], *in[2]);
  }
  if (failed(value))
    return failure();
  ctx.setConstOutput(0, std::move(*value));
  return true;
}
