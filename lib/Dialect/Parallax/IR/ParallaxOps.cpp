//===- ParallaxOps.cpp - Parallax operations ------------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <limits>

using namespace mlir;
using namespace mlir::parallax;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// Parses `: TYPE (= INITIAL_VALUE)?`, where the initial value's own type is
/// implied by TYPE (as memref.global does).
static ParseResult parseTypeAndInitialValue(OpAsmParser &parser,
                                            TypeAttr &typeAttr,
                                            ElementsAttr &initialValue) {
  Type type;
  if (parser.parseColonType(type))
    return failure();
  typeAttr = TypeAttr::get(type);
  if (failed(parser.parseOptionalEqual()))
    return success();
  SMLoc loc = parser.getCurrentLocation();
  Attribute attr;
  if (parser.parseAttribute(attr, type))
    return failure();
  initialValue = dyn_cast<ElementsAttr>(attr);
  if (!initialValue)
    return parser.emitError(loc, "initial value must be an elements attribute");
  return success();
}

static void printTypeAndInitialValue(OpAsmPrinter &p, Operation *,
                                     TypeAttr typeAttr,
                                     ElementsAttr initialValue) {
  p << ": " << typeAttr.getValue();
  if (!initialValue)
    return;
  p << " = ";
  if (initialValue.getType() == typeAttr.getValue())
    p.printAttributeWithoutType(initialValue);
  else
    p.printAttribute(initialValue);
}

/// Parses `: T1, T2, ...` as a wait's result types; the handle's type is
/// the handle type carrying them.
static ParseResult parseHandleResults(OpAsmParser &parser, Type &handleType,
                                      SmallVectorImpl<Type> &resultTypes) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseTypeList(resultTypes))
    return failure();
  handleType = AllReduceHandleType::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(),
      ArrayRef<Type>(resultTypes));
  return success(handleType != nullptr);
}

static void printHandleResults(OpAsmPrinter &p, Operation *, Type,
                               TypeRange resultTypes) {
  llvm::interleaveComma(resultTypes, p);
}

#define GET_OP_CLASSES
#include "parallax/Dialect/Parallax/IR/ParallaxOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Resolves `name` to the parallax.variable it names, or reports an error at
/// `op`.
static FailureOr<VariableOp> lookupVariable(Operation *op,
                                            FlatSymbolRefAttr name,
                                            SymbolTableCollection &symbols) {
  auto variable = symbols.lookupNearestSymbolFrom<VariableOp>(op, name);
  if (!variable)
    return op->emitOpError()
           << "'" << name << "' does not reference a parallax.variable";
  return variable;
}

/// Push and pull address a variable held by parameter servers. Before the
/// distribution pass has decided, the variable carries no decision and any
/// placement is possible; afterwards it must be `ps`.
static LogicalResult verifyPlacedOnServers(Operation *op, VariableOp variable) {
  DistributionAttr distribution = variable.getDistributionAttr();
  if (!distribution || distribution.getPlacement() == Placement::PS)
    return success();
  return op->emitOpError() << "variable '@" << variable.getSymName()
                           << "' is placed '"
                           << stringifyPlacement(distribution.getPlacement())
                           << "', but push and pull need placement 'ps'";
}

static LogicalResult verifyReduction(Operation *op, ReductionKind kind,
                                     TypeRange types) {
  if (types.empty())
    return op->emitOpError("requires at least one input");
  if (kind != ReductionKind::Mean)
    return success();
  for (Type type : types)
    if (!isa<FloatType>(cast<ShapedType>(type).getElementType()))
      return op->emitOpError()
             << "'mean' reduction requires floating-point tensors, got "
             << type;
  return success();
}

/// A gradient for `variable`: of its type, or row-sparse with it as the
/// dense type.
static LogicalResult verifyGradientType(Operation *op, Type gradientType,
                                        VariableOp variable) {
  Type denseType = gradientType;
  if (auto rowSparse = dyn_cast<RowSparseType>(gradientType))
    denseType = rowSparse.getDenseType();
  if (denseType != variable.getType())
    return op->emitOpError()
           << "gradient " << gradientType << " does not match the type "
           << variable.getType() << " of variable '"
           << FlatSymbolRefAttr::get(variable.getSymNameAttr()) << "'";
  return success();
}

bool mlir::parallax::mayCommunicate(Operation *op) {
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    if (llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
          return isa<CommunicationResource>(e.getResource());
        }))
      return true;
  } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    return true;
  }
  if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return false;
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (mayCommunicate(&nested))
        return true;
  return false;
}

//===----------------------------------------------------------------------===//
// VariableOp
//===----------------------------------------------------------------------===//

LogicalResult VariableOp::verify() {
  RankedTensorType type = getTensorType();
  Type elementType = type.getElementType();
  if (!elementType.isIntOrFloat())
    return emitOpError() << "element type must be an integer or "
                            "floating-point type, got "
                         << elementType;
  if (ElementsAttr init = getInitialValueAttr();
      init && init.getShapedType() != type)
    return emitOpError() << "initial value type " << init.getShapedType()
                         << " does not match the variable type " << type;
  if (int(getTrainable()) + int(getState()) + int(getStatistics()) > 1)
    return emitOpError("a variable is trainable, optimizer state or "
                       "statistics, not several");
  if ((getTrainable() || getState() || getStatistics()) &&
      !isa<FloatType>(elementType))
    return emitOpError() << (getTrainable() ? "trainable"
                             : getState()   ? "state"
                                            : "statistics")
                         << " variable must have a floating-point "
                            "element type, got "
                         << elementType;

  DistributionAttr distribution = getDistributionAttr();
  if (!distribution)
    return success();
  if (!getTrainable())
    return emitOpError("only trainable variables have a distribution; a "
                       "frozen variable is replicated as a constant");
  int64_t partitions = distribution.getPartitions();
  if (partitions > 1 && type.getRank() == 0)
    return emitOpError() << "cannot split a scalar variable into " << partitions
                         << " partitions";
  if (type.getRank() > 0 && partitions > type.getDimSize(0))
    return emitOpError() << "cannot split " << type.getDimSize(0)
                         << " rows into " << partitions << " partitions";
  return success();
}

//===----------------------------------------------------------------------===//
// ReadOp / AssignOp
//===----------------------------------------------------------------------===//

LogicalResult ReadOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<VariableOp> variable =
      lookupVariable(*this, getVariableAttr(), symbols);
  if (failed(variable))
    return failure();
  if (getType() != variable->getType())
    return emitOpError() << "result type " << getType()
                         << " does not match the type " << variable->getType()
                         << " of variable '" << getVariableAttr() << "'";
  return success();
}

LogicalResult RandomUniformOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (type.getRank() == 0)
    return emitOpError("needs a batch dimension (dimension 0)");
  int64_t perRow =
      type.getNumElements() / std::max<int64_t>(type.getDimSize(0), 1);
  if (perRow > std::numeric_limits<uint32_t>::max())
    return emitOpError() << "counts elements within a row in 32 bits, got "
                         << perRow << " per row";
  if (type.getDimSize(0) % getRowsPerExample())
    return emitOpError() << "dimension 0 (" << type.getDimSize(0)
                         << ") is not a whole number of examples of "
                         << getRowsPerExample() << " rows";
  return success();
}

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<VariableOp> variable =
      lookupVariable(*this, getVariableAttr(), symbols);
  if (failed(variable))
    return failure();
  if (!variable->getTrainable() && !variable->getStatistics())
    return emitOpError() << "cannot assign to '" << getVariableAttr()
                         << "': the variable is neither trainable nor "
                            "statistics";
  if (getValue().getType() != variable->getType())
    return emitOpError() << "value type " << getValue().getType()
                         << " does not match the type " << variable->getType()
                         << " of variable '" << getVariableAttr() << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// ApplyGradientOp / UpdateOp
//===----------------------------------------------------------------------===//

/// Looks up `symbol` as a trainable variable for `op`, which changes it.
static FailureOr<VariableOp> lookupTrainable(Operation *op,
                                             FlatSymbolRefAttr symbol,
                                             SymbolTableCollection &symbols) {
  FailureOr<VariableOp> variable = lookupVariable(op, symbol, symbols);
  if (succeeded(variable) && !variable->getTrainable())
    return op->emitOpError()
           << "cannot update '" << symbol << "': the variable is not trainable";
  return variable;
}

/// `state` names the state variables `optimizer` keeps for `variable`.
static LogicalResult verifyOptimizerState(Operation *op,
                                          OptimizerAttr optimizer,
                                          ArrayAttr state, VariableOp variable,
                                          SymbolTableCollection &symbols) {
  SmallVector<StringRef> names = optimizer.getStateNames();
  size_t count = state ? state.size() : 0;
  if (count != names.size())
    return op->emitOpError()
           << "optimizer " << optimizer << " keeps " << names.size()
           << " state variable(s), got " << count;
  if (!state)
    return success();
  for (auto symbol : state.getAsRange<FlatSymbolRefAttr>()) {
    FailureOr<VariableOp> stateVariable = lookupVariable(op, symbol, symbols);
    if (failed(stateVariable))
      return failure();
    if (!stateVariable->getState() ||
        stateVariable->getType() != variable.getType())
      return op->emitOpError()
             << "'" << symbol << "' must be a state variable of type "
             << variable.getType();
  }
  return success();
}

LogicalResult
ApplyGradientOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<VariableOp> variable =
      lookupTrainable(*this, getVariableAttr(), symbols);
  if (failed(variable))
    return failure();
  return verifyGradientType(*this, getGradient().getType(), *variable);
}

LogicalResult UpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<VariableOp> variable =
      lookupTrainable(*this, getVariableAttr(), symbols);
  if (failed(variable) ||
      failed(verifyGradientType(*this, getGradient().getType(), *variable)))
    return failure();
  return verifyOptimizerState(*this, getOptimizer(), getStateAttr(), *variable,
                              symbols);
}

//===----------------------------------------------------------------------===//
// Row-sparse ops
//===----------------------------------------------------------------------===//

LogicalResult RowSparseUnpackOp::fold(FoldAdaptor,
                                      SmallVectorImpl<OpFoldResult> &results) {
  auto pack = getInput().getDefiningOp<RowSparsePackOp>();
  if (!pack)
    return failure();
  results.push_back(pack.getIndices());
  results.push_back(pack.getValues());
  return success();
}

//===----------------------------------------------------------------------===//
// AllReduce ops
//===----------------------------------------------------------------------===//

/// `variables`, where present, names each input.
static LogicalResult verifyTrafficNames(Operation *op,
                                        std::optional<ArrayAttr> variables,
                                        size_t inputs) {
  if (variables && variables->size() != inputs)
    return op->emitOpError() << "names " << variables->size()
                             << " variables for " << inputs << " inputs";
  return success();
}

static SmallVector<StringRef> trafficNames(std::optional<ArrayAttr> variables,
                                           size_t inputs) {
  if (!variables)
    return SmallVector<StringRef>(inputs, "allreduce");
  return llvm::to_vector(variables->getAsValueRange<StringAttr>());
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyReduction(*this, getReduction(), getInputs().getTypes())))
    return failure();
  return verifyTrafficNames(*this, getVariables(), getInputs().size());
}

SmallVector<StringRef> AllReduceOp::getTrafficNames() {
  return trafficNames(getVariables(), getInputs().size());
}

LogicalResult AllReduceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferredReturnTypes) {
  llvm::append_range(inferredReturnTypes, operands.getTypes());
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  if (failed(verifyReduction(*this, getReduction(), getInputs().getTypes())) ||
      failed(verifyTrafficNames(*this, getVariables(), getInputs().size())))
    return failure();
  Value handle = getHandle();
  auto wait = handle.hasOneUse()
                  ? dyn_cast<AllReduceWaitOp>(*handle.getUsers().begin())
                  : AllReduceWaitOp();
  if (!wait || wait->getBlock() != (*this)->getBlock())
    return emitOpError("handle must be consumed by exactly one "
                       "parallax.allreduce_wait in the same block");
  return success();
}

SmallVector<StringRef> AllReduceStartOp::getTrafficNames() {
  return trafficNames(getVariables(), getInputs().size());
}

LogicalResult AllReduceStartOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  if (operands.empty())
    return failure();
  inferredReturnTypes.push_back(
      AllReduceHandleType::get(context, llvm::to_vector(operands.getTypes())));
  return success();
}

LogicalResult AllReduceWaitOp::verify() {
  if (!getHandle().getDefiningOp<AllReduceStartOp>())
    return emitOpError("handle must come directly from a "
                       "parallax.allreduce_start");
  if (getResultTypes() !=
      TypeRange(
          cast<AllReduceHandleType>(getHandle().getType()).getResultTypes()))
    return emitOpError("result types must be the types its handle carries");
  return success();
}

//===----------------------------------------------------------------------===//
// AllGatherOp / BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult AllGatherOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getResult().getType());
  if (inputType.getRank() < 1)
    return emitOpError("input must have rank >= 1: rows are gathered along "
                       "dimension 0");
  if (resultType.getElementType() != inputType.getElementType() ||
      resultType.getShape().drop_front() != inputType.getShape().drop_front())
    return emitOpError() << "result " << resultType
                         << " must have the element type and trailing "
                            "dimensions of the input "
                         << inputType;
  if (resultType.isDynamicDim(0))
    return success();
  int64_t rows = inputType.getDimSize(0);
  int64_t gathered = resultType.getDimSize(0);
  if (std::optional<int64_t> workers = ParallaxDialect::getStaticWorkers(*this);
      workers && gathered != rows * *workers)
    return emitOpError() << "result has " << gathered << " rows, but "
                         << *workers << " workers with " << rows
                         << " rows each gather " << rows * *workers;
  if (rows == 0 ? gathered != 0 : gathered % rows != 0)
    return emitOpError() << "result rows (" << gathered
                         << ") must be a multiple of the input rows (" << rows
                         << ")";
  return success();
}

LogicalResult BroadcastOp::verify() {
  std::optional<int64_t> workers = ParallaxDialect::getStaticWorkers(*this);
  if (workers && static_cast<int64_t>(getRoot()) >= *workers)
    return emitOpError() << "root " << getRoot()
                         << " is not a worker of a module planned for "
                         << *workers << " workers";
  return success();
}

//===----------------------------------------------------------------------===//
// PushOp / PullOp
//===----------------------------------------------------------------------===//

LogicalResult PushOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<VariableOp> variable =
      lookupVariable(*this, getVariableAttr(), symbols);
  if (failed(variable) || failed(verifyPlacedOnServers(*this, *variable)))
    return failure();
  if (!variable->getTrainable())
    return emitOpError() << "cannot push a gradient to '" << getVariableAttr()
                         << "': the variable is not trainable";
  if (failed(verifyGradientType(*this, getGradient().getType(), *variable)))
    return failure();
  if (OptimizerAttr optimizer = getOptimizerAttr())
    return verifyOptimizerState(*this, optimizer, getStateAttr(), *variable,
                                symbols);
  if (getStateAttr())
    return emitOpError("state variables without an optimizer");
  return success();
}

LogicalResult PullOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<VariableOp> variable =
      lookupVariable(*this, getVariableAttr(), symbols);
  if (failed(variable) || failed(verifyPlacedOnServers(*this, *variable)))
    return failure();
  RankedTensorType variableType = variable->getTensorType();
  RankedTensorType expected = variableType;
  if (Value indices = getIndices()) {
    if (variableType.getRank() < 1)
      return emitOpError() << "cannot pull rows of scalar variable '"
                           << getVariableAttr() << "'";
    SmallVector<int64_t> shape(variableType.getShape());
    shape.front() = cast<RankedTensorType>(indices.getType()).getDimSize(0);
    expected = RankedTensorType::get(shape, variableType.getElementType());
  }
  if (getType() != expected)
    return emitOpError() << "result type " << getType() << " does not match "
                         << expected
                         << (getIndices() ? ": one row of '" : ": '")
                         << getVariableAttr()
                         << (getIndices() ? "' per index" : "' whole");
  return success();
}

//===----------------------------------------------------------------------===//
// LibraryCallOp
//===----------------------------------------------------------------------===//

LogicalResult LibraryCallOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto callee =
      symbols.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "calls '" << getCallee()
                         << "', which is not a declared function";
  SmallVector<Type> expected;
  for (Value operand : getOperands())
    expected.push_back(UnrankedMemRefType::get(
        cast<RankedTensorType>(operand.getType()).getElementType(), 0));
  expected.append(getScalars().size(), IntegerType::get(getContext(), 64));
  FunctionType type = callee.getFunctionType();
  if (TypeRange(type.getInputs()) != TypeRange(expected) ||
      type.getNumResults()) {
    InFlightDiagnostic diag = emitOpError()
                              << "calls '" << getCallee() << "' of type "
                              << type << " with (";
    llvm::interleaveComma(expected, diag);
    return diag << ")";
  }
  return success();
}
