//===- NodeContext.cpp - What a node converter sees -----------------------===//
//
// Part of the Parallax project.
//
// A converter reads its node's inputs (values or compile-time constants),
// attributes and element types, and defines its outputs, through
// NodeContext.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

NodeContext::NodeContext(GraphImporter &importer, const onnx::NodeProto &node,
                         int index)
    : node(node), name(GraphImporter::nodeName(node, index)),
      loc(NameLoc::get(StringAttr::get(importer.context, name),
                       importer.fileLoc())),
      builder(importer.builder), opset(importer.opset), importer(importer) {}

int64_t NodeContext::randomSeed() const { return importer.options.randomSeed; }

int64_t NodeContext::newRandomStream() { return importer.randomStreams++; }

std::optional<int64_t> NodeContext::batchSize() const {
  return importer.options.batchSize;
}

bool NodeContext::hasInput(unsigned i) const {
  return i < numInputs() && !node.input(i).empty();
}

Value NodeContext::input(unsigned i) {
  if (!hasInput(i)) {
    emitError() << "required input " << i << " is missing";
    return Value();
  }
  return importer.lookupValue(node.input(i), loc);
}

RankedTensorType NodeContext::inputType(unsigned i) {
  if (!hasInput(i))
    return nullptr;
  if (const Const *c = constInput(i))
    return c->getType();
  Value value = input(i);
  return value ? cast<RankedTensorType>(value.getType()) : nullptr;
}

const Const *NodeContext::constInput(unsigned i) const {
  return hasInput(i) ? importer.lookupConst(node.input(i)) : nullptr;
}

const Const *NodeContext::requireConstInput(unsigned i, StringRef what) {
  if (!hasInput(i)) {
    emitError() << "input '" << what << "' is missing";
    return nullptr;
  }
  const Const *c = constInput(i);
  if (!c)
    emitError() << "input '" << what << "' ('" << node.input(i)
                << "') is computed at run time, which is not supported: it "
                   "must be a constant or computable from tensor shapes "
                   "(bind symbolic dimensions with --batch-size or --bind)";
  return c;
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

bool NodeContext::checkAttrType(const onnx::AttributeProto *a, int type,
                                StringRef what) {
  if (a->type() == type)
    return true;
  emitError() << "attribute '" << a->name() << "' must be " << what;
  return false;
}

int64_t NodeContext::attrInt(StringRef name, int64_t defaultValue) {
  return attrIntOpt(name).value_or(defaultValue);
}

std::optional<int64_t> NodeContext::attrIntOpt(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || !checkAttrType(a, onnx::AttributeProto::INT, "an integer"))
    return std::nullopt;
  return a->i();
}

float NodeContext::attrFloat(StringRef name, float defaultValue) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || !checkAttrType(a, onnx::AttributeProto::FLOAT, "a float"))
    return defaultValue;
  return a->f();
}

std::string NodeContext::attrString(StringRef name, StringRef defaultValue) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || !checkAttrType(a, onnx::AttributeProto::STRING, "a string"))
    return defaultValue.str();
  return a->s();
}

std::optional<SmallVector<int64_t>> NodeContext::attrInts(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || !checkAttrType(a, onnx::AttributeProto::INTS, "a list of integers"))
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<Const> NodeContext::attrTensor(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || !checkAttrType(a, onnx::AttributeProto::TENSOR, "a tensor"))
    return std::nullopt;
  FailureOr<Const> value = readTensorConst(importer, a->t());
  if (::mlir::failed(value)) {
    hasFailed = true;
    return std::nullopt;
  }
  return *value;
}

Type NodeContext::importerElementType(int64_t dataType) const {
  return importer.convertElementType(dataType);
}

VariableOp NodeContext::inputVariable(unsigned i) {
  Value value = hasInput(i) ? input(i) : Value();
  auto read = value ? value.getDefiningOp<ReadOp>() : ReadOp();
  if (!read)
    return nullptr;
  return SymbolTable::lookupNearestSymbolFrom<VariableOp>(
      importer.getModule(), read.getVariableAttr());
}

void NodeContext::assignAfterGraph(VariableOp variable, Value value) {
  importer.finalAssignments.push_back({variable, value});
}

bool NodeContext::exportedByPyTorch() const {
  return importer.producerName == "pytorch";
}

bool NodeContext::outputUsed(unsigned i) const {
  return i < numOutputs() && !node.output(i).empty() &&
         importer.isUsed(node.output(i));
}

void NodeContext::setOutput(unsigned i, Value value) {
  if (i < numOutputs() && !node.output(i).empty())
    importer.defineValue(node.output(i), value);
}

void NodeContext::setConstOutput(unsigned i, Const value) {
  if (i < numOutputs() && !node.output(i).empty())
    importer.defineConst(node.output(i), std::move(value));
}

InFlightDiagnostic NodeContext::emitError() {
  hasFailed = true;
  InFlightDiagnostic diag = mlir::emitError(loc);
  diag << "node '" << name << "' (" << node.op_type() << "): ";
  return diag;
}

int64_t NodeContext::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    emitError() << "axis " << axis << " is out of range for rank " << rank;
    return -1;
  }
  return axis < 0 ? axis + rank : axis;
}
