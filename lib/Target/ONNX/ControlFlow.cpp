//===- ControlFlow.cpp - Static If and Loop -------------------------------===//
//
// Part of the Parallax project.
//
// Control flow known at compile time: an If becomes its branch taken; a
// Loop with a constant trip count is unrolled; PyTorch's export of
// nn.EmbeddingBag (a Loop slicing the ids bag by bag) becomes one gather
// and one segment_reduce, whatever the number of bags. Control flow that
// depends on data is an error naming the node.
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

/// The most nodes an unrolled Loop may add to the graph.
static constexpr int64_t kMaxUnrolledNodes = 20000;

static const char *const kDataDependent =
    ", and control flow that depends on data is not supported";

LogicalResult GraphImporter::importIf(NodeContext &ctx) {
  const Const *condition = ctx.constInput(0);
  if (!ctx.hasInput(0) || !condition)
    return ctx.emitError()
           << "the condition ('" << (ctx.hasInput(0) ? ctx.node.input(0) : "")
           << "') is computed at run time" << kDataDependent
           << ": an If is imported when its condition is known at compile "
              "time (bind symbolic dimensions with --batch-size or --bind)";
  if (condition->size() != 1)
    return ctx.emitError() << "the condition must hold one element, it has "
                           << condition->size();
  StringRef taken = condition->at(0) != 0 ? "then_branch" : "else_branch";
  const onnx::AttributeProto *branch = ctx.attr(taken);
  if (!branch || branch->type() != onnx::AttributeProto::GRAPH)
    return ctx.emitError() << "requires a graph attribute '" << taken << "'";
  const onnx::GraphProto &graph = branch->g();
  if (graph.initializer_size() || graph.sparse_initializer_size())
    return ctx.emitError() << "initializers inside '" << taken
                           << "' are not supported";
  if (graph.output_size() != static_cast<int>(ctx.numOutputs()))
    return ctx.emitError() << "'" << taken << "' has " << graph.output_size()
                           << " outputs, the node " << ctx.numOutputs();
  // The branch's nodes join the graph in the If's place.
  if (failed(importNodes(graph)))
    return failure();
  for (auto [i, output] : llvm::enumerate(graph.output())) {
    if (const Const *value = lookupConst(output.name())) {
      ctx.setConstOutput(i, *value);
      continue;
    }
    Value value = lookupValue(output.name(), ctx.loc);
    if (!value)
      return failure();
    ctx.setOutput(i, value);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// nn.EmbeddingBag
//===----------------------------------------------------------------------===//

namespace {

const onnx::AttributeProto *attrOf(const onnx::NodeProto &node,
                                   StringRef name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::optional<int64_t> intAttr(const onnx::NodeProto &node, StringRef name,
                               int64_t defaultValue) {
  const onnx::AttributeProto *a = attrOf(node, name);
  if (!a)
    return defaultValue;
  if (a->type() != onnx::AttributeProto::INT)
    return std::nullopt;
  return a->i();
}

/// What PyTorch's export of nn.EmbeddingBag computes: bag s reduces
/// `table[ids[j]]` (times `weights[j]`, its per_sample_weights, when
/// given) over `bounds[s] <= j < bounds[s + 1]`.
struct EmbeddingBag {
  ReduceKind kind;
  std::string table, ids, bounds, weights;
};

/// Reads the nodes of a Loop body, and of the graph around it, by the
/// values they define.
class BagMatcher {
public:
  BagMatcher(GraphImporter &importer, const onnx::GraphProto &body,
             const std::unordered_map<std::string, const onnx::NodeProto *>
                 &outerProducers)
      : importer(importer), body(body), outerProducers(outerProducers) {
    for (const onnx::NodeProto &node : body.node())
      for (const std::string &output : node.output())
        producers[output] = &node;
  }

  std::optional<EmbeddingBag> match();

private:
  GraphImporter &importer;
  const onnx::GraphProto &body;
  const std::unordered_map<std::string, const onnx::NodeProto *>
      &outerProducers;
  std::unordered_map<std::string, const onnx::NodeProto *> producers;

  bool isBodyInput(const std::string &name) const {
    for (const onnx::ValueInfoProto &input : body.input())
      if (input.name() == name)
        return true;
    return false;
  }
  bool isOuter(const std::string &name) const {
    return !producers.count(name) && !isBodyInput(name);
  }
  /// The body node of `opType` (default domain) defining `name`, or null.
  const onnx::NodeProto *producer(const std::string &name,
                                  StringRef opType) const {
    auto it = producers.find(name);
    if (it == producers.end() || it->second->op_type() != opType ||
        !(it->second->domain().empty() || it->second->domain() == "ai.onnx"))
      return nullptr;
    return it->second;
  }
  /// The compile-time value of `name`: an outer constant or a Constant
  /// node of the body.
  std::optional<Const> constant(const std::string &name) const {
    if (isOuter(name)) {
      if (const Const *c = importer.lookupConst(name))
        return *c;
      return std::nullopt;
    }
    const onnx::NodeProto *node = producer(name, "Constant");
    const onnx::AttributeProto *value = node ? attrOf(*node, "value") : nullptr;
    if (!value || value->type() != onnx::AttributeProto::TENSOR)
      return std::nullopt;
    FailureOr<Const> c = readTensorConst(importer, value->t());
    if (failed(c))
      return std::nullopt;
    return *c;
  }
  /// Whether `name` holds exactly `expected` at compile time.
  bool holds(const std::string &name, ArrayRef<int64_t> expected) const {
    std::optional<Const> c = constant(name);
    return c && !c->isFloat() && ArrayRef<int64_t>(c->ints) == expected;
  }
  bool alwaysTrue(const std::string &name) const;
  /// The outer 1-D array `A` of `Unsqueeze(Gather(A, iteration), [0])`.
  std::optional<std::string> boundArray(const std::string &name) const;
  /// Whether the outer value `rest` is `Slice(array, 1, end)` to the end.
  bool isTail(const std::string &rest, const std::string &array) const;
};

bool BagMatcher::alwaysTrue(const std::string &name) const {
  if (name == body.input(1).name())
    return true; // the loop's condition input, checked true by the caller
  for (StringRef passThrough : {"Cast", "Identity"})
    if (const onnx::NodeProto *node = producer(name, passThrough))
      return node->input_size() == 1 && alwaysTrue(node->input(0));
  std::optional<Const> c = constant(name);
  return c && c->size() == 1 && c->at(0) != 0;
}

std::optional<std::string>
BagMatcher::boundArray(const std::string &name) const {
  const onnx::NodeProto *unsqueeze = producer(name, "Unsqueeze");
  if (!unsqueeze)
    return std::nullopt;
  const onnx::AttributeProto *axes = attrOf(*unsqueeze, "axes");
  bool leading = unsqueeze->input_size() == 2
                     ? holds(unsqueeze->input(1), {0})
                     : axes && axes->ints_size() == 1 && axes->ints(0) == 0;
  if (!leading)
    return std::nullopt;
  const onnx::NodeProto *gather = producer(unsqueeze->input(0), "Gather");
  if (!gather || gather->input_size() != 2 ||
      intAttr(*gather, "axis", 0) != 0 ||
      gather->input(1) != body.input(0).name() || !isOuter(gather->input(0)))
    return std::nullopt;
  return gather->input(0);
}

bool BagMatcher::isTail(const std::string &rest,
                        const std::string &array) const {
  auto it = outerProducers.find(rest);
  if (it == outerProducers.end())
    return false;
  const onnx::NodeProto &slice = *it->second;
  if (slice.op_type() != "Slice" || slice.input_size() < 3 ||
      slice.input(0) != array)
    return false;
  auto value = [&](int i) -> const Const * {
    return i < slice.input_size() && !slice.input(i).empty()
               ? importer.lookupConst(slice.input(i))
               : nullptr;
  };
  auto isOne = [](const Const *c) {
    return c && c->size() == 1 && !c->isFloat();
  };
  const Const *start = value(1), *end = value(2);
  if (!isOne(start) || start->ints[0] != 1 || !isOne(end) ||
      end->ints[0] < std::numeric_limits<int32_t>::max())
    return false;
  bool axesOk = slice.input_size() < 4 || slice.input(3).empty() ||
                (isOne(value(3)) && value(3)->ints[0] == 0);
  bool stepsOk = slice.input_size() < 5 || slice.input(4).empty() ||
                 (isOne(value(4)) && value(4)->ints[0] == 1);
  return axesOk && stepsOk;
}

std::optional<EmbeddingBag> BagMatcher::match() {
  // No loop-carried values, one scan output: a bag per iteration.
  if (body.input_size() != 2 || body.output_size() != 2 ||
      !alwaysTrue(body.output(0).name()))
    return std::nullopt;
  const std::string &bag = body.output(1).name();
  ReduceKind kind = ReduceKind::Sum;
  const onnx::NodeProto *reduce = nullptr;
  for (auto [opType, reduceKind] : {std::pair{"ReduceSum", ReduceKind::Sum},
                                    std::pair{"ReduceMean", ReduceKind::Mean},
                                    std::pair{"ReduceMax", ReduceKind::Max}})
    if ((reduce = producer(bag, opType))) {
      kind = reduceKind;
      break;
    }
  if (!reduce || intAttr(*reduce, "keepdims", 1) != 0)
    return std::nullopt;
  const onnx::AttributeProto *axes = attrOf(*reduce, "axes");
  bool overRows =
      axes ? axes->ints_size() == 1 && axes->ints(0) == 0
           : reduce->input_size() == 2 && holds(reduce->input(1), {0});
  if (!overRows)
    return std::nullopt;
  // The rows, or the rows times a slice of per-sample weights.
  const onnx::NodeProto *gather = producer(reduce->input(0), "Gather");
  const onnx::NodeProto *weightSlice = nullptr;
  if (const onnx::NodeProto *mul = producer(reduce->input(0), "Mul");
      mul && mul->input_size() == 2) {
    for (int k = 0; k < 2 && !gather; ++k) {
      const onnx::NodeProto *unsqueeze =
          producer(mul->input(1 - k), "Unsqueeze");
      if (!unsqueeze || unsqueeze->input_size() != 2 ||
          !holds(unsqueeze->input(1), {1}))
        continue;
      gather = producer(mul->input(k), "Gather");
      weightSlice = producer(unsqueeze->input(0), "Slice");
    }
    if (!weightSlice)
      return std::nullopt;
  }
  if (!gather || gather->input_size() != 2 ||
      intAttr(*gather, "axis", 0) != 0 || !isOuter(gather->input(0)))
    return std::nullopt;
  const onnx::NodeProto *slice = producer(gather->input(1), "Slice");
  if (!slice || slice->input_size() < 3 || !isOuter(slice->input(0)))
    return std::nullopt;
  if (slice->input_size() > 3 && !slice->input(3).empty() &&
      !holds(slice->input(3), {0}))
    return std::nullopt;
  if (slice->input_size() > 4 && !slice->input(4).empty() &&
      !holds(slice->input(4), {1}))
    return std::nullopt;
  // The weights are sliced exactly as the ids are.
  if (weightSlice &&
      (weightSlice->input_size() != slice->input_size() ||
       !isOuter(weightSlice->input(0)) ||
       !std::equal(weightSlice->input().begin() + 1, weightSlice->input().end(),
                   slice->input().begin() + 1)))
    return std::nullopt;
  std::optional<std::string> starts = boundArray(slice->input(1));
  std::optional<std::string> ends = boundArray(slice->input(2));
  if (!starts || !ends || !isTail(*ends, *starts))
    return std::nullopt;
  return EmbeddingBag{kind, gather->input(0), slice->input(0), *starts,
                      weightSlice ? weightSlice->input(0) : std::string()};
}

} // namespace

/// `table[ids]` reduced bag by bag; the Loop's only output.
static LogicalResult importEmbeddingBag(GraphImporter &importer,
                                        NodeContext &ctx,
                                        const EmbeddingBag &bag) {
  Value table = importer.lookupValue(bag.table, ctx.loc);
  Value ids = importer.lookupValue(bag.ids, ctx.loc);
  Value bounds = importer.lookupValue(bag.bounds, ctx.loc);
  if (!table || !ids || !bounds)
    return failure();
  auto idsType = cast<RankedTensorType>(ids.getType());
  auto boundsType = cast<RankedTensorType>(bounds.getType());
  if (idsType.getRank() != 1 || boundsType.getRank() != 1)
    return ctx.emitError() << "an embedding bag's ids ('" << bag.ids
                           << "') and offsets ('" << bag.bounds
                           << "') must be 1-D, got " << idsType << " and "
                           << boundsType;
  const Const *tripCount = ctx.constInput(0);
  if (!tripCount || tripCount->size() != 1 ||
      tripCount->at(0) != boundsType.getDimSize(0) - 1)
    return ctx.emitError() << "an embedding bag loop must run once per bag ("
                           << boundsType.getDimSize(0) - 1 << ")";
  Value rows =
      createInferred<GatherOp>(ctx, table, ids, static_cast<uint64_t>(0));
  if (!rows)
    return failure();
  Operation *idsReader = rows.getDefiningOp();
  Value weights, weightColumn;
  if (!bag.weights.empty()) {
    if (!(weights = importer.lookupValue(bag.weights, ctx.loc)))
      return failure();
    auto weightsType = cast<RankedTensorType>(weights.getType());
    if (weightsType.getRank() != 1 ||
        weightsType.getDimSize(0) != idsType.getDimSize(0))
      return ctx.emitError() << "an embedding bag's per-sample weights ('"
                             << bag.weights << "') must be 1-D with one "
                             << "weight per id, got " << weightsType;
    weightColumn = reshape(ctx, weights, {weightsType.getDimSize(0), 1});
    rows = createInferred<MulOp>(ctx, rows, weightColumn);
    if (!rows)
      return failure();
  }
  // Ids and offsets from graph inputs, the bags ending at the ids' end:
  // a batch's bags hold a varying number of ids, so the end is the
  // number the runtime loaded for this batch, and the ids' length only
  // the most a batch may hold.
  // (int32 offsets are cast to int64 first.)
  auto idsInput = dyn_cast<BlockArgument>(ids);
  auto concat = bounds.getDefiningOp<ConcatOp>();
  Value starts = concat ? concat->getOperand(0) : Value();
  if (auto cast = dyn_cast_if_present<CastOp>(starts ? starts.getDefiningOp()
                                                     : nullptr))
    starts = cast.getInput();
  DenseIntElementsAttr end;
  if (idsInput && concat && concat->getNumOperands() == 2 &&
      isa<BlockArgument>(starts) &&
      matchPattern(concat->getOperand(1), m_Constant(&end)) &&
      end.getNumElements() == 1 &&
      end.getValues<APInt>()[0].getSExtValue() == idsType.getDimSize(0)) {
    auto offsets = cast<BlockArgument>(starts);
    Value count = importer.segmentCount(offsets, idsInput, idsReader);
    if (auto weightsInput = dyn_cast_or_null<BlockArgument>(weights))
      importer.segmentCount(offsets, weightsInput,
                            weightColumn.getDefiningOp());
    bounds = createInferred<ConcatOp>(
        ctx, ValueRange{concat->getOperand(0), reshape(ctx, count, {1})},
        static_cast<uint64_t>(0));
    if (!bounds)
      return failure();
  }
  return result(ctx,
                createInferred<SegmentReduceOp>(ctx, bag.kind, rows, bounds));
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

namespace {
/// A value of the unrolled loop: known at compile time or not.
struct Slot {
  Value value;
  std::optional<Const> constant;
};
} // namespace

/// Every name `graph` defines, its nested graphs' too.
static void collectDefinedNames(const onnx::GraphProto &graph,
                                std::vector<std::string> &names) {
  for (const onnx::ValueInfoProto &input : graph.input())
    names.push_back(input.name());
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &output : node.output())
      names.push_back(output);
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.type() == onnx::AttributeProto::GRAPH)
        collectDefinedNames(attr.g(), names);
  }
}

LogicalResult GraphImporter::importLoop(NodeContext &ctx) {
  const onnx::AttributeProto *bodyAttr = ctx.attr("body");
  if (!bodyAttr || bodyAttr->type() != onnx::AttributeProto::GRAPH)
    return ctx.emitError() << "requires a graph attribute 'body'";
  const onnx::GraphProto &body = bodyAttr->g();
  if (body.initializer_size() || body.sparse_initializer_size())
    return ctx.emitError() << "initializers inside the body are not supported";
  int numCarried = std::max<int>(0, static_cast<int>(ctx.numInputs()) - 2);
  int numScans = body.output_size() - 1 - numCarried;
  if (body.input_size() != 2 + numCarried || numScans < 0 ||
      static_cast<int>(ctx.numOutputs()) > numCarried + numScans)
    return ctx.emitError() << "the body has " << body.input_size()
                           << " inputs and " << body.output_size()
                           << " outputs, which does not fit " << numCarried
                           << " loop-carried value(s)";

  if (!ctx.hasInput(0))
    return ctx.emitError()
           << "a Loop without a trip count runs until a condition computed "
              "in its body turns false"
           << kDataDependent;
  const Const *tripCount = ctx.constInput(0);
  if (!tripCount || tripCount->size() != 1)
    return ctx.emitError()
           << "the trip count ('" << ctx.node.input(0)
           << "') is computed at run time" << kDataDependent
           << ": a Loop is imported when its trip count is known at compile "
              "time (bind symbolic dimensions with --batch-size or --bind)";
  bool running = true;
  if (ctx.hasInput(1)) {
    const Const *condition = ctx.constInput(1);
    if (!condition || condition->size() != 1)
      return ctx.emitError() << "the initial condition ('" << ctx.node.input(1)
                             << "') is computed at run time" << kDataDependent;
    running = condition->at(0) != 0;
  }

  if (running) {
    BagMatcher matcher(*this, body, producers);
    if (std::optional<EmbeddingBag> bag = matcher.match())
      return importEmbeddingBag(*this, ctx, *bag);
  }

  int64_t iterations = running ? std::max<int64_t>(0, tripCount->at(0)) : 0;
  if (iterations > 0 && iterations * body.node_size() > kMaxUnrolledNodes)
    return ctx.emitError()
           << "unrolling " << iterations << " iterations of a "
           << body.node_size() << "-node body would add more than "
           << kMaxUnrolledNodes
           << " nodes; only a Loop that is small once unrolled, or PyTorch's "
              "export of nn.EmbeddingBag, is supported";

  auto slotOf = [&](const std::string &name) -> std::optional<Slot> {
    if (const Const *c = lookupConst(name))
      return Slot{Value(), *c};
    Value value = lookupValue(name, ctx.loc);
    if (!value)
      return std::nullopt;
    return Slot{value, std::nullopt};
  };
  auto define = [&](const std::string &name, const Slot &slot) {
    if (slot.constant)
      defineConst(name, *slot.constant);
    else
      defineValue(name, slot.value);
  };
  std::vector<std::string> bodyNames;
  collectDefinedNames(body, bodyNames);
  auto forgetBody = [&] {
    for (const std::string &name : bodyNames) {
      values.erase(name);
      constants.erase(name);
    }
  };

  SmallVector<Slot> carried;
  for (int k = 0; k < numCarried; ++k) {
    std::optional<Slot> slot = slotOf(ctx.node.input(2 + k));
    if (!slot)
      return failure();
    carried.push_back(*slot);
  }
  SmallVector<SmallVector<Slot>> scans(numScans);
  Type i1 = builder.getI1Type(), i64 = builder.getI64Type();
  for (int64_t i = 0; i < iterations; ++i) {
    // Each iteration defines the body's names afresh.
    forgetBody();
    defineConst(body.input(0).name(), Const::ofInts(i64, {}, {i}));
    defineConst(body.input(1).name(), Const::ofInts(i1, {}, {1}));
    for (int k = 0; k < numCarried; ++k)
      define(body.input(2 + k).name(), carried[k]);
    if (failed(importNodes(body))) {
      forgetBody();
      return ctx.emitError() << "in iteration " << i << " of the body";
    }
    const Const *condition = lookupConst(body.output(0).name());
    if (!condition || condition->size() != 1)
      return ctx.emitError()
             << "the body's condition ('" << body.output(0).name()
             << "') is computed at run time" << kDataDependent;
    for (int k = 0; k < numCarried; ++k) {
      std::optional<Slot> slot = slotOf(body.output(1 + k).name());
      if (!slot)
        return failure();
      carried[k] = *slot;
    }
    for (int k = 0; k < numScans; ++k) {
      std::optional<Slot> slot = slotOf(body.output(1 + numCarried + k).name());
      if (!slot)
        return failure();
      scans[k].push_back(*slot);
    }
    if (condition->at(0) == 0)
      break;
  }
  forgetBody();

  for (int k = 0; k < numCarried && k < static_cast<int>(ctx.numOutputs());
       ++k) {
    if (carried[k].constant)
      ctx.setConstOutput(k, *carried[k].constant);
    else
      ctx.setOutput(k, carried[k].value);
  }
  for (int k = 0; k < numScans; ++k) {
    unsigned output = numCarried + k;
    if (!ctx.outputUsed(output))
      continue;
    if (scans[k].empty())
      return ctx.emitError() << "scan output " << k
                             << " of a Loop that runs no iteration has no "
                                "element shape";
    // The iterations' values stacked along a new leading dimension.
    SmallVector<Value> parts;
    for (Slot &slot : scans[k]) {
      Value part = slot.value;
      if (slot.constant)
        part = arith::ConstantOp::create(builder, ctx.loc,
                                         slot.constant->toAttr());
      auto type = cast<RankedTensorType>(part.getType());
      SmallVector<int64_t> shape{1};
      llvm::append_range(shape, type.getShape());
      parts.push_back(reshape(ctx, part, shape));
    }
    Value stacked = parts.size() == 1
                        ? parts.front()
                        : createInferred<ConcatOp>(ctx, ValueRange(parts),
                                                   static_cast<uint64_t>(0));
    if (!stacked)
      return failure();
    ctx.setOutput(output, stacked);
  }
  return success();
}
