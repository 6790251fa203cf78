//===- ParallaxDialect.cpp - Parallax dialect, types, attributes ----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::parallax;

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.cpp.inc"
#include "parallax/Dialect/Parallax/IR/ParallaxEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "parallax/Dialect/Parallax/IR/ParallaxAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "parallax/Dialect/Parallax/IR/ParallaxTypes.cpp.inc"

//===----------------------------------------------------------------------===//
// ParallaxDialect
//===----------------------------------------------------------------------===//

void ParallaxDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "parallax/Dialect/Parallax/IR/ParallaxOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "parallax/Dialect/Parallax/IR/ParallaxComputeOps.cpp.inc"
      >();
}

void ParallaxDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "parallax/Dialect/Parallax/IR/ParallaxAttrs.cpp.inc"
      >();
}

void ParallaxDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "parallax/Dialect/Parallax/IR/ParallaxTypes.cpp.inc"
      >();
}

LogicalResult ParallaxDialect::verifyOperationAttribute(Operation *op,
                                                        NamedAttribute attr) {
  if (attr.getName() == getVariableAttrName()) {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!kind || !llvm::is_contained({"trainable", "state", "statistics"},
                                     kind.getValue()))
      return op->emitError() << "'" << getVariableAttrName()
                             << "' must be \"trainable\", \"state\" or "
                                "\"statistics\"";
    return success();
  }
  if (attr.getName() == getNoaliasPointersAttrName()) {
    auto positions = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!positions || !isa<FunctionOpInterface>(op) ||
        llvm::any_of(positions.asArrayRef(),
                     [](int64_t position) { return position < 0; }))
      return op->emitError() << "'" << getNoaliasPointersAttrName()
                             << "' must be an array<i64> of argument "
                                "positions on a function";
    return success();
  }
  if (attr.getName() == getShardsAttrName()) {
    auto shards = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!shards || shards.size() != 2 || shards[0] < 1 || shards[1] < 0)
      return op->emitError()
             << "'" << getShardsAttrName()
             << "' must be array<i64: partitions, first server> with "
                "partitions >= 1 and first server >= 0";
    return success();
  }
  if (attr.getName() == getModelAttrName()) {
    if (!isa<ModuleOp>(op) || !isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << getModelAttrName()
                             << "' must be a string on a builtin.module";
    return success();
  }
  if (attr.getName() == getFromModelAttrName()) {
    // memref.global by name: the dialect does not depend on MemRef's.
    if (!isa<UnitAttr>(attr.getValue()) ||
        (!isa<VariableOp>(op) &&
         op->getName().getStringRef() != "memref.global"))
      return op->emitError()
             << "'" << getFromModelAttrName()
             << "' must be a unit attribute on a variable or its memref.global";
    auto module = op->getParentOfType<ModuleOp>();
    if (!module || !module->hasAttr(getModelAttrName()))
      return op->emitError()
             << "'" << getFromModelAttrName() << "' needs the module's '"
             << getModelAttrName() << "'";
    if (auto variable = dyn_cast<VariableOp>(op);
        variable && variable.getInitialValueAttr())
      return op->emitError() << "a variable loaded from the model has no "
                                "initial value of its own";
    return success();
  }
  if (attr.getName() == getGlobalBufferSlotAttrName()) {
    if (!isa<StringAttr>(attr.getValue()) || op->getNumResults() != 1)
      return op->emitError() << "'" << getGlobalBufferSlotAttrName()
                             << "' must be a string on an op of one result";
    return success();
  }
  if (attr.getName() != getWorldAttrName())
    return op->emitError() << "unknown Parallax dialect attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'" << getWorldAttrName()
                           << "' is only valid on a builtin.module";
  if (!isa<WorldAttr>(attr.getValue()))
    return op->emitError() << "'" << getWorldAttrName()
                           << "' must be a #parallax.world attribute, got "
                           << attr.getValue();
  return success();
}

static LogicalResult verifyNameAttr(Operation *op, NamedAttribute attr) {
  if (attr.getName() == ParallaxDialect::getIndexRangesAttrName()) {
    auto ranges = dyn_cast<ArrayAttr>(attr.getValue());
    if (!ranges || !llvm::all_of(ranges, llvm::IsaPred<IndexRangeAttr>))
      return op->emitError() << "'" << ParallaxDialect::getIndexRangesAttrName()
                             << "' must be an array of #parallax.index_range";
    return success();
  }
  if (attr.getName() == ParallaxDialect::getRetainedAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << ParallaxDialect::getRetainedAttrName()
                             << "' must be a unit attribute";
    return success();
  }
  if (attr.getName() == ParallaxDialect::getSegmentedByAttrName() ||
      attr.getName() == ParallaxDialect::getSegmentCountAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' must name the offsets input, got " << attr.getValue();
    return success();
  }
  if (attr.getName() != ParallaxDialect::getNameAttrName())
    return op->emitError() << "unknown Parallax argument or result attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<StringAttr>(attr.getValue()))
    return op->emitError() << "'" << ParallaxDialect::getNameAttrName()
                           << "' must be a string, got " << attr.getValue();
  return success();
}

LogicalResult ParallaxDialect::verifyRegionArgAttribute(Operation *op,
                                                        unsigned region,
                                                        unsigned argument,
                                                        NamedAttribute attr) {
  if (failed(verifyNameAttr(op, attr)))
    return failure();
  if (region >= op->getNumRegions() || op->getRegion(region).empty())
    return success();
  // A bag's elements are 1-D; their count is an i64 scalar.
  auto type = dyn_cast<ShapedType>(
      op->getRegion(region).getArgument(argument).getType());
  if (attr.getName() == getSegmentedByAttrName() &&
      (!type || !type.hasRank() || type.getRank() != 1))
    return op->emitError() << "'" << getSegmentedByAttrName()
                           << "' is on argument " << argument
                           << ", which is not 1-D";
  if (attr.getName() == getSegmentCountAttrName() &&
      (!type || !type.hasRank() || type.getRank() != 0 ||
       !type.getElementType().isInteger(64)))
    return op->emitError() << "'" << getSegmentCountAttrName()
                           << "' is on argument " << argument
                           << ", which is not an i64 scalar";
  return success();
}

LogicalResult
ParallaxDialect::verifyRegionResultAttribute(Operation *op, unsigned, unsigned,
                                             NamedAttribute attr) {
  return verifyNameAttr(op, attr);
}

/// The `#parallax.world` of the innermost module around `op` that has one.
static WorldAttr worldOf(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  for (; module; module = module->getParentOfType<ModuleOp>())
    if (auto world = module->getAttrOfType<WorldAttr>(
            ParallaxDialect::getWorldAttrName()))
      return world;
  return nullptr;
}

std::string ParallaxDialect::describeNode(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return "node '" + name.getName().str() + "'";
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (isa<NameLoc>(inner))
        return describeNode(inner);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "an operation at " << loc;
  return text;
}

std::optional<int64_t> ParallaxDialect::getStaticWorkers(Operation *op) {
  WorldAttr world = worldOf(op);
  if (!world || world.getWorkers() == 0)
    return std::nullopt;
  return world.getWorkers();
}

bool ParallaxDialect::hasWorldAtRunTime(Operation *op) {
  WorldAttr world = worldOf(op);
  return world && world.getWorkers() == 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult
DistributionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         Placement placement, int64_t partitions) {
  if (partitions < 1)
    return emitError() << "partitions must be at least 1, got " << partitions;
  if (placement != Placement::PS && partitions != 1)
    return emitError() << "placement '" << stringifyPlacement(placement)
                       << "' keeps the variable whole: partitions must be 1, "
                          "got "
                       << partitions;
  return success();
}

LogicalResult WorldAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t workers) {
  if (workers < 0)
    return emitError() << "workers must be at least 0 (0: any number, "
                          "known at run time), got "
                       << workers;
  return success();
}

LogicalResult
IndexRangeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t low, int64_t high, std::optional<int64_t>,
                       StringRef, DenseI64ArrayAttr region) {
  if (low >= high)
    return emitError() << "an index range needs low < high, got [" << low
                       << ", " << high << ")";
  if (region &&
      (region.size() % 3 != 0 ||
       llvm::any_of(region.asArrayRef(), [](int64_t v) { return v < 0; })))
    return emitError() << "an index range's region holds (offset, size, "
                          "stride) triples of non-negative numbers";
  return success();
}

LogicalResult OptimizerAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, OptimizerKind kind,
    APFloat lrValue, APFloat momentumValue, bool nesterov, APFloat beta1Value,
    APFloat beta2Value, APFloat epsilonValue, APFloat weightDecayValue,
    APFloat lrDecayValue, APFloat initialAccumulatorValue) {
  auto inRange = [](double x, double low, double high) {
    return x >= low && x < high; // false for NaN
  };
  double lr = lrValue.convertToDouble(),
         momentum = momentumValue.convertToDouble(),
         beta1 = beta1Value.convertToDouble(),
         beta2 = beta2Value.convertToDouble(),
         epsilon = epsilonValue.convertToDouble(),
         weightDecay = weightDecayValue.convertToDouble(),
         lrDecay = lrDecayValue.convertToDouble(),
         initialAccumulator = initialAccumulatorValue.convertToDouble();
  if (!(lr > 0.0))
    return emitError() << "learning rate must be positive, got " << lr;
  if (!inRange(momentum, 0.0, 1.0) || !inRange(beta1, 0.0, 1.0) ||
      !inRange(beta2, 0.0, 1.0))
    return emitError() << "momentum, beta1 and beta2 must lie in [0, 1)";
  if (nesterov && (kind != OptimizerKind::Momentum || momentum == 0.0))
    return emitError() << "nesterov needs the momentum optimizer with a "
                          "non-zero momentum";
  if (!(epsilon >= 0.0) || !(weightDecay >= 0.0) || !(lrDecay >= 0.0) ||
      !(initialAccumulator >= 0.0))
    return emitError() << "epsilon, weight_decay, lr_decay and "
                          "initial_accumulator_value must be non-negative";
  return success();
}

LogicalResult SparsityAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   GradientKind gradient, APFloat alphaValue,
                                   int64_t rows, int64_t workerRows) {
  double alpha = alphaValue.convertToDouble();
  if (!(alpha > 0.0 && alpha <= 1.0))
    return emitError() << "alpha must lie in (0, 1], got " << alpha;
  if (rows < 1)
    return emitError() << "rows must be at least 1, got " << rows;
  if (gradient == GradientKind::Dense && alpha != 1.0)
    return emitError() << "a dense gradient has alpha 1, got " << alpha;
  if (workerRows < 0 || workerRows > rows)
    return emitError() << "worker_rows must lie in [1, rows = " << rows
                       << "], got " << workerRows;
  if (workerRows && gradient == GradientKind::Dense)
    return emitError() << "worker_rows is for sparse gradients";
  return success();
}

SmallVector<StringRef> OptimizerAttr::getStateNames() const {
  switch (getKind()) {
  case OptimizerKind::SGD:
    return {};
  case OptimizerKind::Momentum:
    return {"momentum_buffer"};
  case OptimizerKind::Adagrad:
    return {"sum"};
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    return {"exp_avg", "exp_avg_sq"};
  }
  llvm_unreachable("unknown optimizer");
}

//===----------------------------------------------------------------------===//
// RowSparseType
//===----------------------------------------------------------------------===//

LogicalResult
RowSparseType::verify(function_ref<InFlightDiagnostic()> emitError,
                      RankedTensorType denseType, int64_t rows) {
  if (denseType.getRank() < 1)
    return emitError() << "row-sparse dense type must have rank >= 1, got "
                       << denseType;
  if (!denseType.hasStaticShape())
    return emitError()
           << "row-sparse dense type must be statically shaped, got "
           << denseType;
  if (rows < 0)
    return emitError() << "row-sparse row count must be non-negative, got "
                       << rows;
  return success();
}

LogicalResult
AllReduceHandleType::verify(function_ref<InFlightDiagnostic()> emitError,
                            ArrayRef<Type> resultTypes) {
  if (resultTypes.empty())
    return emitError() << "an allreduce handle carries at least one type";
  for (Type type : resultTypes)
    if (!isa<RankedTensorType>(type))
      return emitError() << "an allreduce handle carries ranked tensor types, "
                            "not "
                         << type;
  return success();
}

RankedTensorType RowSparseType::getIndicesType() const {
  return RankedTensorType::get({getRows()}, IntegerType::get(getContext(), 64));
}

RankedTensorType RowSparseType::getValuesType() const {
  SmallVector<int64_t> shape(getDenseType().getShape());
  shape.front() = getRows();
  return RankedTensorType::get(shape, getElementType());
}
