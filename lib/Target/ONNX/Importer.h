//===- Importer.h - ONNX importer internals ---------------------*- C++ -*-===//
//
// Part of the Parallax project.
//
// Internal to lib/Target/ONNX: the graph importer state, compile-time
// constants, and the per-node context the op converters work with.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_TARGET_ONNX_IMPORTER_H
#define PARALLAX_LIB_TARGET_ONNX_IMPORTER_H

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Target/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/MapVector.h"

#include <onnx/onnx_pb.h>

#include <memory>
#include <unordered_map>
#include <vector>

namespace mlir::parallax::onnx_import {

/// The largest tensor a model may declare (elements): a bound that keeps
/// every size computation far from int64 overflow.
constexpr int64_t kMaxElements = int64_t(1) << 40;
/// The largest tensor the importer evaluates at compile time (elements).
constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;

/// The number of elements of `shape`, or std::nullopt when a dimension is
/// negative or the count exceeds `limit`.
std::optional<int64_t> countElements(ArrayRef<int64_t> shape, int64_t limit);

/// The name of an ONNX TensorProto data type ("FLOAT16"), or "data type N"
/// for a number ONNX does not define.
std::string dataTypeName(int32_t dataType);

/// A tensor whose value is known at compile time: Constant nodes, integer
/// initializers and everything folded from them (the shape computations
/// PyTorch exports). Integers and booleans are held exactly as int64.
struct Const {
  SmallVector<int64_t> shape;
  Type elementType;
  std::vector<int64_t> ints;  // integer and i1 element types
  std::vector<double> floats; // floating-point element types

  bool isFloat() const { return isa<FloatType>(elementType); }
  int64_t size() const;
  double at(int64_t i) const { return isFloat() ? floats[i] : ints[i]; }
  RankedTensorType getType() const {
    return RankedTensorType::get(shape, elementType);
  }

  static Const ofInts(Type elementType, ArrayRef<int64_t> shape,
                      std::vector<int64_t> values);
  static Const ofFloats(Type elementType, ArrayRef<int64_t> shape,
                        std::vector<double> values);
  DenseElementsAttr toAttr() const;
  static Const fromAttr(DenseElementsAttr attr);
};

class GraphImporter;

/// The little-endian bytes of a tensor and whatever keeps them alive: the
/// raw_data string moved out of the model, a mapped external data file, or
/// a buffer converted from typed fields. Large initializers become
/// resource blobs that take over `owner`, so their data is never copied.
struct TensorData {
  ArrayRef<char> bytes;
  std::shared_ptr<void> owner;
};

/// What an op converter sees of one ONNX node. Attribute accessors report a
/// wrong attribute type as an error on the node and return the default;
/// the driver checks `failed()` after the converter.
class NodeContext {
public:
  NodeContext(GraphImporter &importer, const onnx::NodeProto &node, int index);

  const onnx::NodeProto &node;
  /// The node's name, or `OpType#index` for unnamed nodes.
  std::string name;
  Location loc;
  OpBuilder &builder;
  int64_t opset;

  // Inputs.
  unsigned numInputs() const { return node.input_size(); }
  bool hasInput(unsigned i) const;
  /// The value of input `i` (constants are materialized on first use).
  Value input(unsigned i);
  RankedTensorType inputType(unsigned i);
  /// The compile-time value of input `i`, or null.
  const Const *constInput(unsigned i) const;
  /// Like constInput, but reports an error naming `what` when the input is
  /// not known at compile time.
  const Const *requireConstInput(unsigned i, StringRef what);

  // Attributes.
  const onnx::AttributeProto *attr(StringRef name) const;
  int64_t attrInt(StringRef name, int64_t defaultValue);
  std::optional<int64_t> attrIntOpt(StringRef name);
  float attrFloat(StringRef name, float defaultValue);
  std::string attrString(StringRef name, StringRef defaultValue);
  std::optional<SmallVector<int64_t>> attrInts(StringRef name);
  /// A tensor attribute (Constant's `value`) as a compile-time constant.
  std::optional<Const> attrTensor(StringRef name);

  // Outputs.
  unsigned numOutputs() const { return node.output_size(); }
  /// Whether output `i` exists and anything reads it.
  bool outputUsed(unsigned i) const;
  void setOutput(unsigned i, Value value);
  void setConstOutput(unsigned i, Const value);

  /// Reports an error on this node (prefixed with its name and op type).
  InFlightDiagnostic emitError();
  bool failed() const { return hasFailed; }
  /// Normalises a possibly negative axis into [0, rank); reports an error
  /// and returns -1 when it is out of range.
  int64_t normalizeAxis(int64_t axis, int64_t rank);
  /// The MLIR element type of an ONNX data type, or null if unsupported.
  Type importerElementType(int64_t dataType) const;

  /// The variable input `i` reads (an initializer), or null.
  parallax::VariableOp inputVariable(unsigned i);
  /// Stores `value` into `variable` once every node is imported (state the
  /// node updates: BatchNorm's running statistics).
  void assignAfterGraph(parallax::VariableOp variable, Value value);
  /// Whether the model's producer is PyTorch's exporter, whose operators
  /// keep PyTorch's semantics where they differ from ONNX's.
  bool exportedByPyTorch() const;
  /// The seed of random draws (ONNXImportOptions::randomSeed).
  int64_t randomSeed() const;
  /// A stream of random draws no other node of the model uses.
  int64_t newRandomStream();
  /// The batch size graph inputs are bound to (`--batch-size`), if given.
  std::optional<int64_t> batchSize() const;

private:
  GraphImporter &importer;
  bool hasFailed = false;
  bool checkAttrType(const onnx::AttributeProto *a, int type, StringRef what);
};

/// Converts one node into Parallax ops (or compile-time constants).
using Converter = LogicalResult (*)(NodeContext &);

/// The converter for `opType` of the default domain, or null.
Converter lookupConverter(StringRef opType);

/// The ONNX training operator domain (Adagrad, Momentum, Adam).
constexpr StringLiteral kTrainingDomain = "ai.onnx.preview.training";

/// The converter for `opType` of the training domain, or null.
Converter lookupTrainingConverter(StringRef opType);

//===----------------------------------------------------------------------===//
// Shape computations shared by folding and conversion. Each reads the
// node's attributes and compile-time inputs and reports problems on the
// node; std::nullopt means an error was reported.
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>> reshapeShape(NodeContext &ctx,
                                                 ArrayRef<int64_t> input);
std::optional<SmallVector<int64_t>> flattenShape(NodeContext &ctx,
                                                 ArrayRef<int64_t> input);
std::optional<SmallVector<int64_t>> squeezeShape(NodeContext &ctx,
                                                 ArrayRef<int64_t> input);
std::optional<SmallVector<int64_t>> unsqueezeShape(NodeContext &ctx,
                                                   ArrayRef<int64_t> input);
/// Expand's bidirectional broadcast of `input` with the shape input.
std::optional<SmallVector<int64_t>> expandShape(NodeContext &ctx,
                                                ArrayRef<int64_t> input);

struct SliceParams {
  SmallVector<int64_t> offsets, sizes, strides;
};
/// Slice's starts/ends/axes/steps inputs, clamped as ONNX specifies.
std::optional<SliceParams> sliceParams(NodeContext &ctx,
                                       ArrayRef<int64_t> input);

/// The importer of one model: loading, checking, binding, the graph walk.
class GraphImporter {
public:
  GraphImporter(MLIRContext *context, const ONNXImportOptions &options,
                StringRef filename);

  OwningOpRef<ModuleOp> import(onnx::ModelProto &model);

  // Used by NodeContext.
  MLIRContext *context;
  OpBuilder builder;
  const ONNXImportOptions &options;
  std::string filename;
  bool isText = false;
  int64_t opset = 0;

  /// Whether trainable initializers are left in the model file, to be
  /// loaded by the program (ONNXImportOptions::weightsFromModel).
  bool loadsWeightsFromModel() const {
    return options.weightsFromModel && !options.shapesOnly && !isText &&
           options.dataDirectory.empty();
  }

  /// Folds a node whose inputs are all compile-time constants (or, for
  /// Shape and Size, whose input has a static type). Returns true when it
  /// folded (Folding.cpp).
  FailureOr<bool> tryFold(NodeContext &ctx);

  Value lookupValue(const std::string &name, Location loc);
  const Const *lookupConst(const std::string &name) const;
  void defineValue(const std::string &name, Value value);
  void defineConst(const std::string &name, Const value);
  bool isUsed(const std::string &name) const { return uses.count(name); }
  Location fileLoc() const;
  /// The node's name, or `OpType#index` (its position) when it has none.
  static std::string nodeName(const onnx::NodeProto &node, int index);

  /// The MLIR element type of an ONNX TensorProto data type, or null.
  Type convertElementType(int32_t dataType) const;

  /// ModelProto's producer_name.
  std::string producerName;
  /// The assignments emitted before the return (NodeContext::
  /// assignAfterGraph), in node order.
  SmallVector<std::pair<parallax::VariableOp, Value>> finalAssignments;
  ModuleOp getModule() const { return module; }

  /// The i64 scalar argument (added on first use, named "OFFSETS:count")
  /// holding how many elements the bags that graph input `offsets` starts
  /// have in this batch; `member`, a 1-D graph input, holds those elements
  /// and `reader` is the op reading them (docs/training.md, bags of varying
  /// size). A member that another op reads too would see the padding: its
  /// bags then end at the member's length, as without this.
  Value segmentCount(BlockArgument offsets, BlockArgument member,
                     Operation *reader);
  /// Random streams handed out so far, in import order.
  int64_t randomStreams = 0;

private:
  LogicalResult checkAndPrepare(onnx::ModelProto &model);
  LogicalResult bindInputShapes(onnx::GraphProto &graph);
  void addInitializersAsInputs(onnx::GraphProto &graph);
  LogicalResult checkGraphOutputsDefined(const onnx::GraphProto &graph);
  LogicalResult checkAttributeRanges(const onnx::GraphProto &graph);
  void resolveExternalDataPaths(onnx::GraphProto &graph);
  SmallString<256> externalDataPath(StringRef location) const;
  LogicalResult checkSupported(const onnx::GraphProto &graph);
  LogicalResult importInitializers(onnx::GraphProto &graph);
  LogicalResult importGraph(const onnx::GraphProto &graph);
  /// Counts the readers of every value, inside If branches too.
  void countUses(const onnx::GraphProto &graph);
  /// Folds or converts the nodes of `graph` (the model's or a branch's).
  LogicalResult importNodes(const onnx::GraphProto &graph);
  /// An If with a condition known at compile time: its branch taken
  /// (ControlFlow.cpp).
  LogicalResult importIf(NodeContext &ctx);
  /// A Loop with a trip count known at compile time: unrolled, or one
  /// segment reduction for PyTorch's nn.EmbeddingBag (ControlFlow.cpp).
  LogicalResult importLoop(NodeContext &ctx);
  LogicalResult checkAgainstShapeInference(const onnx::GraphProto &graph);
  FailureOr<RankedTensorType> convertValueType(const onnx::ValueInfoProto &v);
  FailureOr<TensorData> readTensorBytes(const onnx::TensorProto &t,
                                        Type elementType, int64_t numElements,
                                        onnx::TensorProto *movable = nullptr);
  FailureOr<Const> readConst(const onnx::TensorProto &t);
  ElementsAttr makeElementsAttr(RankedTensorType type, TensorData data,
                                StringRef blobName);

  /// Evaluates a node of constants through the dialect's folders: its
  /// converter builds its ops apart from the function, they are folded,
  /// and the outputs become compile-time constants. False (and nothing
  /// defined) when some output does not fold.
  FailureOr<bool> evaluate(NodeContext &ctx, Converter convert);
  /// While evaluating, constants are materialized where the builder is and
  /// not remembered: those ops are discarded with the evaluation.
  bool materializeUncached = false;

  ModuleOp module;
  func::FuncOp function;
  std::unordered_map<std::string, Value> values;
  std::unordered_map<std::string, Const> constants;
  std::unordered_map<std::string, int> uses;
  /// The node defining each value imported so far (patterns over nodes
  /// look back through it).
  std::unordered_map<std::string, const onnx::NodeProto *> producers;
  /// segmentCount's arguments by offsets argument, and each member's
  /// offsets and readers.
  llvm::MapVector<BlockArgument, BlockArgument> segmentCounts;
  struct SegmentMember {
    BlockArgument offsets;
    SmallVector<Operation *> readers;
  };
  llvm::MapVector<BlockArgument, SegmentMember> segmentMembers;
  /// Ends the bags of a member that another op reads too at its length
  /// (and drops its count argument), before the function gets its type.
  void keepSegmentsOnlyWhereSafe();
  /// Sets the names and segment attributes of the arguments segmentCount
  /// added, once the function has its final type.
  void nameSegmentArguments();

  friend class NodeContext;
  friend FailureOr<Const> readTensorConst(GraphImporter &,
                                          const onnx::TensorProto &);
};

/// Reads a TensorProto (inline or external data) into a constant.
FailureOr<Const> readTensorConst(GraphImporter &importer,
                                 const onnx::TensorProto &tensor);

} // namespace mlir::parallax::onnx_import

#endif // PARALLAX_LIB_TARGET_ONNX_IMPORTER_H
