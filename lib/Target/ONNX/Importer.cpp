//===- Importer.cpp - Import ONNX models into Parallax --------------------===//
//
// Part of the Parallax project.
//
// Loading (binary or text), opset handling, the libonnx checker and shape
// inference, binding of symbolic dimensions, initializers and the graph
// walk. Every libonnx exception becomes an MLIR diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/checker.h>
#include <onnx/defs/parser.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

static constexpr int64_t kMinOpset = 11;
static constexpr int64_t kMaxOpset = 17;

std::optional<int64_t> onnx_import::countElements(ArrayRef<int64_t> shape,
                                                  int64_t limit) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim != 0 && count > limit / dim))
      return std::nullopt;
    count *= dim;
  }
  return count;
}

static bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// The converter of `node`'s operator in its domain, or null.
static Converter converterFor(const onnx::NodeProto &node) {
  if (isDefaultDomain(node.domain()))
    return lookupConverter(node.op_type());
  if (node.domain() == kTrainingDomain)
    return lookupTrainingConverter(node.op_type());
  return nullptr;
}

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

GraphImporter::GraphImporter(MLIRContext *context,
                             const ONNXImportOptions &options,
                             StringRef filename)
    : context(context), builder(context), options(options),
      filename(filename.str()) {}

Location GraphImporter::fileLoc() const {
  return FileLineColLoc::get(context, filename, 0, 0);
}

std::string GraphImporter::nodeName(const onnx::NodeProto &node, int index) {
  return node.name().empty() ? node.op_type() + "#" + std::to_string(index)
                             : node.name();
}

Type GraphImporter::convertElementType(int32_t dataType) const {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(context);
  case onnx::TensorProto::DOUBLE:
    return Float64Type::get(context);
  case onnx::TensorProto::FLOAT16:
    return Float16Type::get(context);
  case onnx::TensorProto::BFLOAT16:
    return BFloat16Type::get(context);
  case onnx::TensorProto::INT8:
    return IntegerType::get(context, 8);
  case onnx::TensorProto::INT16:
    return IntegerType::get(context, 16);
  case onnx::TensorProto::INT32:
    return IntegerType::get(context, 32);
  case onnx::TensorProto::INT64:
    return IntegerType::get(context, 64);
  case onnx::TensorProto::BOOL:
    return IntegerType::get(context, 1);
  default:
    return nullptr;
  }
}

std::string onnx_import::dataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

void GraphImporter::defineValue(const std::string &name, Value value) {
  values[name] = value;
}

void GraphImporter::defineConst(const std::string &name, Const value) {
  constants[name] = std::move(value);
}

const Const *GraphImporter::lookupConst(const std::string &name) const {
  auto it = constants.find(name);
  return it == constants.end() ? nullptr : &it->second;
}

Value GraphImporter::lookupValue(const std::string &name, Location loc) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto constIt = constants.find(name);
  if (constIt != constants.end()) {
    Value value =
        arith::ConstantOp::create(builder, loc, constIt->second.toAttr());
    if (!materializeUncached)
      values[name] = value;
    return value;
  }
  emitError(loc) << "value '" << name
                 << "' is used before it is defined (the graph is not in "
                    "topological order, or the name is unknown)";
  return Value();
}

//===----------------------------------------------------------------------===//
// Model checks and shape binding
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::checkAndPrepare(onnx::ModelProto &model) {
  Location loc = fileLoc();
  for (const onnx::OperatorSetIdProto &id : model.opset_import())
    if (isDefaultDomain(id.domain()))
      opset = id.version();
  // Unsupported operators are reported first and all at once: nothing else
  // matters to a user whose model cannot be imported anyway.
  if (failed(checkSupported(model.graph())))
    return failure();
  if (opset == 0) {
    // A graph of training-domain operators only needs no default opset.
    if (llvm::any_of(model.graph().node(), [](const onnx::NodeProto &node) {
          return isDefaultDomain(node.domain());
        }))
      return emitError(loc) << "the model imports no opset of the default "
                               "ONNX domain";
    opset = kMaxOpset;
  }
  if (opset > kMaxOpset)
    return emitError(loc) << "opset " << opset
                          << " is newer than the newest supported opset "
                          << kMaxOpset;
  // IR version 3 requires every initializer to be a graph input; some old
  // exporters did not list them. They are constants either way.
  if (model.ir_version() < 4)
    addInitializersAsInputs(*model.mutable_graph());
  resolveExternalDataPaths(*model.mutable_graph());
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return emitError(loc) << "invalid ONNX model: " << e.what();
  }

  // ONNX 1.12's checker does not verify that graph outputs are produced,
  // nor the ranges of attributes its shape inference relies on.
  if (failed(checkGraphOutputsDefined(model.graph())) ||
      failed(checkAttributeRanges(model.graph())))
    return failure();

  // The version converter assumes a well-formed model (it crashes on a node
  // without outputs or an undefined graph output), so it runs after checks.
  if (opset < kMinOpset) {
    try {
      model = onnx::version_conversion::ConvertVersion(model, 13);
    } catch (const std::exception &e) {
      return emitError(loc)
             << "opset " << opset
             << " is not supported directly (the oldest is " << kMinOpset
             << ") and the ONNX version converter could not "
                "convert the model to opset 13: "
             << e.what();
    }
    opset = 13;
  }

  onnx::GraphProto &graph = *model.mutable_graph();
  if (failed(bindInputShapes(graph)))
    return failure();
  // Shapes recorded by the exporter may contradict the bound ones (a
  // re-bound batch size): let shape inference recompute them all.
  graph.clear_value_info();
  for (onnx::ValueInfoProto &output : *graph.mutable_output())
    if (output.type().has_tensor_type())
      output.mutable_type()->mutable_tensor_type()->clear_shape();

  try {
    onnx::ShapeInferenceOptions inference(/*check_type=*/true,
                                          /*error_mode=*/1,
                                          /*data_prop=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), inference);
  } catch (const std::exception &e) {
    return emitError(loc) << "ONNX shape inference failed: " << e.what();
  }
  return success();
}

SmallString<256> GraphImporter::externalDataPath(StringRef location) const {
  if (llvm::sys::path::is_absolute(location))
    return location;
  SmallString<256> path(options.dataDirectory);
  if (path.empty())
    path = llvm::sys::path::parent_path(filename);
  llvm::sys::path::append(path, location);
  return path;
}

void GraphImporter::resolveExternalDataPaths(onnx::GraphProto &graph) {
  // The checker looks for external data relative to the working directory;
  // make the locations absolute (relative to --onnx-data-dir or the model).
  for (onnx::TensorProto &init : *graph.mutable_initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    for (onnx::StringStringEntryProto &kv : *init.mutable_external_data())
      if (kv.key() == "location") {
        SmallString<256> path = externalDataPath(kv.value());
        llvm::sys::fs::make_absolute(path);
        kv.set_value(std::string(path));
      }
  }
}

LogicalResult
GraphImporter::checkGraphOutputsDefined(const onnx::GraphProto &graph) {
  std::set<std::string> defined;
  for (const onnx::ValueInfoProto &input : graph.input())
    defined.insert(input.name());
  for (const onnx::TensorProto &init : graph.initializer())
    defined.insert(init.name());
  for (const onnx::NodeProto &node : graph.node())
    defined.insert(node.output().begin(), node.output().end());
  bool ok = true;
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!defined.count(output.name())) {
      ok = false;
      emitError(fileLoc()) << "invalid ONNX model: graph output '"
                           << output.name()
                           << "' is not produced by any node, input or "
                              "initializer";
    }
  return success(ok);
}

LogicalResult
GraphImporter::checkAttributeRanges(const onnx::GraphProto &graph) {
  // ONNX 1.12's shape inference indexes arrays with these attributes and
  // divides by strides without checking them: reject corrupt values first.
  // No tensor has more dimensions than kMaxRank; no window is larger than
  // kMaxExtent.
  constexpr int64_t kMaxRank = 64;
  constexpr int64_t kMaxExtent = int64_t(1) << 32;
  struct Range {
    const char *name;
    int64_t min, max;
  };
  static const Range ranges[] = {
      {"axis", -kMaxRank, kMaxRank - 1}, {"axes", -kMaxRank, kMaxRank - 1},
      {"perm", 0, kMaxRank - 1},         {"strides", 1, kMaxExtent},
      {"dilations", 1, kMaxExtent},      {"kernel_shape", 1, kMaxExtent},
      {"pads", 0, kMaxExtent},           {"group", 1, kMaxExtent},
  };
  for (auto [index, node] : llvm::enumerate(graph.node()))
    for (const onnx::AttributeProto &a : node.attribute()) {
      const Range *range = llvm::find_if(
          ranges, [&](const Range &r) { return a.name() == r.name; });
      if (range == std::end(ranges))
        continue;
      SmallVector<int64_t> values(a.ints().begin(), a.ints().end());
      if (a.type() == onnx::AttributeProto::INT)
        values.push_back(a.i());
      for (int64_t v : values)
        if (v < range->min || v > range->max)
          return emitError(fileLoc())
                 << "invalid ONNX model: node '" << nodeName(node, index)
                 << "' (" << node.op_type() << ") has attribute '" << a.name()
                 << "' = " << v << ", outside [" << range->min << ", "
                 << range->max << "]";
    }
  return success();
}

void GraphImporter::addInitializersAsInputs(onnx::GraphProto &graph) {
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto &input : graph.input())
    inputs.insert(input.name());
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (inputs.count(init.name()))
      continue;
    onnx::ValueInfoProto *input = graph.add_input();
    input->set_name(init.name());
    auto *tensor = input->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(init.data_type());
    auto *shape = tensor->mutable_shape();
    for (int64_t dim : init.dims())
      shape->add_dim()->set_dim_value(dim);
  }
}

LogicalResult GraphImporter::bindInputShapes(onnx::GraphProto &graph) {
  std::set<std::string> initializerNames;
  for (const onnx::TensorProto &init : graph.initializer())
    initializerNames.insert(init.name());
  llvm::StringSet<> usedBindings;
  bool ok = true;
  for (onnx::ValueInfoProto &input : *graph.mutable_input()) {
    if (initializerNames.count(input.name()) ||
        !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape())
      continue;
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int d = 0; d < shape->dim_size(); ++d) {
      onnx::TensorShapeProto::Dimension *dim = shape->mutable_dim(d);
      // `--bind INPUT:D=VALUE`, symbolic or not.
      std::string position = input.name() + ":" + std::to_string(d);
      if (auto it = options.dimensionBindings.find(position);
          it != options.dimensionBindings.end()) {
        usedBindings.insert(position);
        dim->set_dim_value(it->second);
        continue;
      }
      // A dimension --bind names keeps its binding (a bag's ids along
      // dimension 0 are not the batch).
      if (d == 0 && options.batchSize &&
          !(dim->has_dim_param() &&
            options.dimensionBindings.count(dim->dim_param()))) {
        dim->set_dim_value(*options.batchSize);
        continue;
      }
      if (dim->has_dim_param()) {
        auto it = options.dimensionBindings.find(dim->dim_param());
        if (it != options.dimensionBindings.end()) {
          usedBindings.insert(dim->dim_param());
          dim->set_dim_value(it->second);
          continue;
        }
      }
      if (dim->has_dim_value() && dim->dim_value() >= 0)
        continue;
      ok = false;
      InFlightDiagnostic diag = emitError(fileLoc());
      diag << "graph input '" << input.name() << "' dimension " << d;
      if (dim->has_dim_param())
        diag << " ('" << dim->dim_param() << "')";
      diag << " is dynamic: bind it with "
           << (d == 0 ? "--batch-size B or " : "") << "--bind "
           << (dim->has_dim_param() ? dim->dim_param() : "NAME") << "=VALUE";
    }
  }
  for (const auto &binding : options.dimensionBindings)
    if (!usedBindings.contains(binding.getKey())) {
      ok = false;
      emitError(fileLoc()) << "--bind " << binding.getKey()
                           << ": no graph input has a dimension named '"
                           << binding.getKey()
                           << "' (INPUT:D names dimension D of graph input "
                              "INPUT)";
    }
  return success(ok);
}

LogicalResult GraphImporter::checkSupported(const onnx::GraphProto &graph) {
  struct Unsupported {
    std::string domain;
    std::vector<std::string> nodes;
  };
  llvm::MapVector<std::string, Unsupported, std::map<std::string, unsigned>>
      unsupported;
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    // If and Loop bodies are checked as they are imported: only the branch
    // taken must be importable, and an EmbeddingBag loop's body never is.
    bool known = converterFor(node) != nullptr ||
                 (isDefaultDomain(node.domain()) &&
                  (node.op_type() == "If" || node.op_type() == "Loop"));
    if (known)
      continue;
    std::string key = node.domain() + "::" + node.op_type();
    Unsupported &entry = unsupported[key];
    entry.domain = isDefaultDomain(node.domain()) ? "ai.onnx" : node.domain();
    entry.nodes.push_back(nodeName(node, index));
  }
  if (unsupported.empty())
    return success();
  size_t count = 0;
  for (auto &entry : unsupported)
    count += entry.second.nodes.size();
  InFlightDiagnostic diag = emitError(fileLoc());
  diag << count << " node(s) use " << unsupported.size()
       << " unsupported operator(s); nothing was imported";
  for (auto &[key, entry] : unsupported) {
    StringRef opType = StringRef(key).split("::").second;
    Diagnostic &note = diag.attachNote();
    note << "operator '" << opType << "' of domain '" << entry.domain << "'";
    if (entry.domain == "ai.onnx")
      note << " (opset " << opset << ")";
    else
      note << " (supported domains: ai.onnx and " << kTrainingDomain << ")";
    note << " at node(s) ";
    llvm::interleaveComma(entry.nodes, note, [&](const std::string &n) {
      note << "'" << n << "'";
    });
  }
  return failure();
}

FailureOr<RankedTensorType>
GraphImporter::convertValueType(const onnx::ValueInfoProto &v) {
  if (!v.type().has_tensor_type())
    return emitError(fileLoc())
           << "graph input or output '" << v.name() << "' is a "
           << (v.type().has_sequence_type()   ? "sequence"
               : v.type().has_optional_type() ? "optional value"
                                              : "non-tensor value")
           << ", which is not supported";
  const onnx::TypeProto::Tensor &tensor = v.type().tensor_type();
  Type elementType = convertElementType(tensor.elem_type());
  if (!elementType)
    return emitError(fileLoc()) << "graph input or output '" << v.name()
                                << "' has unsupported element type "
                                << dataTypeName(tensor.elem_type());
  if (!tensor.has_shape())
    return emitError(fileLoc())
           << "graph input '" << v.name() << "' has no shape";
  SmallVector<int64_t> shape;
  for (const auto &dim : tensor.shape().dim())
    shape.push_back(dim.dim_value());
  if (!countElements(shape, kMaxElements))
    return emitError(fileLoc()) << "graph input or output '" << v.name()
                                << "' has more than 2^40 elements";
  return RankedTensorType::get(shape, elementType);
}

void GraphImporter::countUses(const onnx::GraphProto &graph) {
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &name : node.input())
      ++uses[name];
    // A branch reads outer values and its own results.
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.type() == onnx::AttributeProto::GRAPH) {
        countUses(attr.g());
        for (const onnx::ValueInfoProto &output : attr.g().output())
          ++uses[output.name()];
      }
  }
}

LogicalResult GraphImporter::importNodes(const onnx::GraphProto &graph) {
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    NodeContext ctx(*this, node, index);
    for (const std::string &output : node.output())
      producers[output] = &node;
    if (isDefaultDomain(node.domain()) &&
        (node.op_type() == "If" || node.op_type() == "Loop")) {
      if (failed(node.op_type() == "If" ? importIf(ctx) : importLoop(ctx)))
        return failure();
      continue;
    }
    Converter convert = converterFor(node);
    // Nodes of a branch were not listed by checkSupported: only the
    // branch taken must be importable.
    if (!convert)
      return ctx.emitError()
             << "operator '" << node.op_type() << "' is not supported";
    FailureOr<bool> folded = tryFold(ctx);
    if (failed(folded) || ctx.failed())
      return failure();
    if (!*folded && (failed(convert(ctx)) || ctx.failed()))
      return failure();
    for (unsigned i = 0; i < ctx.numOutputs(); ++i)
      if (ctx.outputUsed(i) && !values.count(node.output(i)) &&
          !constants.count(node.output(i)))
        return ctx.emitError() << "output " << i << " ('" << node.output(i)
                               << "') is used but this importer does not "
                                  "produce it";
  }
  return success();
}

LogicalResult GraphImporter::importGraph(const onnx::GraphProto &graph) {
  std::set<std::string> initializerNames;
  for (const onnx::TensorProto &init : graph.initializer())
    initializerNames.insert(init.name());

  // The step function's signature: graph inputs that are not initializers.
  SmallVector<Type> inputTypes;
  SmallVector<const onnx::ValueInfoProto *> inputs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializerNames.count(input.name()))
      continue;
    FailureOr<RankedTensorType> type = convertValueType(input);
    if (failed(type))
      return failure();
    inputTypes.push_back(*type);
    inputs.push_back(&input);
  }
  function = func::FuncOp::create(builder, fileLoc(), "forward",
                                  builder.getFunctionType(inputTypes, {}));
  Block *body = function.addEntryBlock();
  for (auto [i, input] : llvm::enumerate(inputs)) {
    function.setArgAttr(i, ParallaxDialect::getNameAttrName(),
                        builder.getStringAttr(input->name()));
    values[input->name()] = body->getArgument(i);
  }
  builder.setInsertionPointToEnd(body);

  // Each variable is read once, at the top of the step.
  for (VariableOp variable : module.getOps<VariableOp>())
    values[variable.getSymName().str()] =
        ReadOp::create(builder, variable.getLoc(), variable.getTensorType(),
                       variable.getSymName());

  countUses(graph);
  for (const onnx::ValueInfoProto &output : graph.output())
    ++uses[output.name()];
  if (failed(importNodes(graph)))
    return failure();

  if (failed(checkAgainstShapeInference(graph)))
    return failure();

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = lookupValue(output.name(), fileLoc());
    if (!value)
      return failure();
    results.push_back(value);
  }
  for (auto [variable, value] : finalAssignments)
    AssignOp::create(builder, value.getLoc(), variable.getSymName(), value);
  func::ReturnOp::create(builder, fileLoc(), results);
  // Ops fold as they are built, which can leave their producers unread (a
  // reshape folded into the next one). Those go; the variable reads stay,
  // one per variable.
  values.clear();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (!isa<ReadOp>(op) && isOpTriviallyDead(&op))
      op.erase();
  keepSegmentsOnlyWhereSafe();
  function.setType(builder.getFunctionType(body->getArgumentTypes(),
                                           ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    function.setResultAttr(i, ParallaxDialect::getNameAttrName(),
                           builder.getStringAttr(output.name()));
  nameSegmentArguments();
  return success();
}

Value GraphImporter::segmentCount(BlockArgument offsets, BlockArgument member,
                                  Operation *reader) {
  SegmentMember &entry = segmentMembers[member];
  entry.offsets = offsets;
  entry.readers.push_back(reader);
  BlockArgument &count = segmentCounts[offsets];
  if (!count)
    count = function.front().addArgument(
        RankedTensorType::get({}, builder.getI64Type()), offsets.getLoc());
  return count;
}

void GraphImporter::keepSegmentsOnlyWhereSafe() {
  // Groups with a member read elsewhere: their bags end at the elements'
  // length, a constant, as when the ids are not graph inputs.
  SmallVector<BlockArgument> unsafe;
  for (auto &[member, entry] : segmentMembers)
    for (Operation *user : member.getUsers())
      if (!llvm::is_contained(entry.readers, user) &&
          !llvm::is_contained(unsafe, entry.offsets))
        unsafe.push_back(entry.offsets);
  if (unsafe.empty())
    return;
  Block &body = function.front();
  SmallVector<unsigned> erased;
  for (BlockArgument offsets : unsafe) {
    int64_t length = 0;
    for (auto &[member, entry] : segmentMembers)
      if (entry.offsets == offsets)
        length = cast<RankedTensorType>(member.getType()).getDimSize(0);
    BlockArgument count = segmentCounts.lookup(offsets);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&body);
    count.replaceAllUsesWith(arith::ConstantOp::create(
        builder, count.getLoc(),
        DenseElementsAttr::get(cast<RankedTensorType>(count.getType()),
                               APInt(64, length))));
    erased.push_back(count.getArgNumber());
    segmentCounts.erase(offsets);
  }
  segmentMembers.remove_if([&](const auto &entry) {
    return llvm::is_contained(unsafe, entry.second.offsets);
  });
  llvm::sort(erased, std::greater<unsigned>());
  for (unsigned index : erased)
    body.eraseArgument(index);
}

void GraphImporter::nameSegmentArguments() {
  auto nameOf = [&](BlockArgument argument) {
    return function.getArgAttrOfType<StringAttr>(
        argument.getArgNumber(), ParallaxDialect::getNameAttrName());
  };
  for (auto [offsets, count] : segmentCounts) {
    function.setArgAttr(
        count.getArgNumber(), ParallaxDialect::getNameAttrName(),
        builder.getStringAttr(nameOf(offsets).getValue() + ":count"));
    function.setArgAttr(count.getArgNumber(),
                        ParallaxDialect::getSegmentCountAttrName(),
                        nameOf(offsets));
  }
  for (auto &[member, entry] : segmentMembers)
    function.setArgAttr(member.getArgNumber(),
                        ParallaxDialect::getSegmentedByAttrName(),
                        nameOf(entry.offsets));
}

LogicalResult
GraphImporter::checkAgainstShapeInference(const onnx::GraphProto &graph) {
  // Two independent shape computations, ONNX's and the ops' own inference,
  // must agree wherever ONNX knows the full type: a disagreement is a bug
  // in one of them and must not silently produce a wrong program.
  auto check = [&](const onnx::ValueInfoProto &info) -> LogicalResult {
    if (!info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      return success();
    const auto &tensor = info.type().tensor_type();
    SmallVector<int64_t> shape;
    for (const auto &dim : tensor.shape().dim()) {
      if (!dim.has_dim_value())
        return success();
      shape.push_back(dim.dim_value());
    }
    Type elementType = convertElementType(tensor.elem_type());
    Type onnxType = RankedTensorType::get(shape, elementType);
    Type ours;
    if (auto it = values.find(info.name()); it != values.end() && it->second)
      ours = it->second.getType();
    else if (const Const *c = lookupConst(info.name()))
      ours = c->getType();
    if (!ours || !elementType || ours == onnxType)
      return success();
    return emitError(fileLoc())
           << "internal error: value '" << info.name() << "' was imported as "
           << ours << " but ONNX shape inference gives " << onnxType
           << "; please report this model";
  };
  for (const onnx::ValueInfoProto &info : graph.value_info())
    if (failed(check(info)))
      return failure();
  for (const onnx::ValueInfoProto &info : graph.output())
    if (failed(check(info)))
      return failure();
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::import(onnx::ModelProto &model) {
  if (failed(checkAndPrepare(model)))
    return nullptr;
  producerName = model.producer_name();
  OwningOpRef<ModuleOp> owned = ModuleOp::create(fileLoc());
  module = *owned;
  builder.setInsertionPointToEnd(module.getBody());
  if (failed(importInitializers(*model.mutable_graph())))
    return nullptr;
  if (loadsWeightsFromModel()) {
    SmallString<256> path(filename);
    llvm::sys::fs::make_absolute(path);
    module->setAttr(ParallaxDialect::getModelAttrName(),
                    builder.getStringAttr(path));
  }
  if (failed(importGraph(model.graph())) || failed(verify(module)))
    return nullptr;
  return owned;
}

OwningOpRef<ModuleOp> mlir::parallax::importONNXModel(
    const llvm::MemoryBuffer &buffer, StringRef filename, bool isText,
    MLIRContext *context, const ONNXImportOptions &options) {
  context
      ->loadDialect<ParallaxDialect, arith::ArithDialect, func::FuncDialect>();
  Location loc = FileLineColLoc::get(context, filename, 0, 0);
  onnx::ModelProto model;
  try {
    if (isText) {
      std::string text = buffer.getBuffer().str();
      onnx::OnnxParser parser(text.c_str());
      onnx::Status status;
      try {
        status = parser.Parse(model);
      } catch (const std::exception &e) {
        // The parser throws from std::stof/stoll on malformed literals.
        emitError(loc) << "cannot parse ONNX text format: malformed literal ("
                       << e.what() << ")";
        return nullptr;
      }
      if (!status.IsOK()) {
        emitError(loc) << "cannot parse ONNX text format: "
                       << status.ErrorMessage();
        return nullptr;
      }
    } else if (buffer.getBufferSize() == 0) {
      emitError(loc) << "the model file is empty";
      return nullptr;
    } else if (buffer.getBufferSize() > std::numeric_limits<int>::max() ||
               !model.ParseFromArray(
                   buffer.getBufferStart(),
                   static_cast<int>(buffer.getBufferSize()))) {
      emitError(loc) << "not a valid ONNX model: the protobuf is truncated "
                        "or corrupt (for ONNX text format use the "
                        ".onnxtext extension)";
      return nullptr;
    }
    GraphImporter importer(context, options, filename);
    importer.isText = isText;
    return importer.import(model);
  } catch (const std::exception &e) {
    emitError(loc) << "ONNX import failed: " << e.what();
    return nullptr;
  }
}
