//===- ProfileSparsity.cpp - Measured alpha from sample data --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/ProfileSparsity.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Support/Npy.h"
#include "parallax/Support/Segments.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

#include <climits>

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// How a graph input's file holds a batch (docs/training.md).
struct InputLayout {
  enum Kind { Examples, BagElements, BagCount } kind = Examples;
  // BagElements, BagCount: the argument of the offsets; Examples: whether
  // the input is offsets (its values count from the batch's first element).
  int offsets = -1;
  bool isOffsets = false;
  // BagElements, BagCount: the offsets' values and the elements' number.
  std::vector<int64_t> starts;
  int64_t elements = 0;
};

/// Evaluates the row ids of one worker's batch with the dialect's own
/// folders (the one constant evaluator of the compiler): each graph input
/// is a constant holding the batch's examples, and every op between it and
/// the ids folds on its operands' constants. The constants live as long as
/// the context: a few per op on the ids' path, of one batch's size.
class IdEvaluator {
public:
  IdEvaluator(ArrayRef<::parallax::runtime::NpyArray> files,
              ArrayRef<InputLayout> layouts, int64_t firstExample,
              int64_t batch)
      : files(files), layouts(layouts), firstExample(firstExample),
        batch(batch) {}

  FailureOr<DenseElementsAttr> eval(Value value) {
    auto it = memo.find(value);
    if (it != memo.end())
      return it->second;
    FailureOr<DenseElementsAttr> result = compute(value);
    if (succeeded(result))
      memo[value] = *result;
    return result;
  }

private:
  ArrayRef<::parallax::runtime::NpyArray> files;
  ArrayRef<InputLayout> layouts;
  int64_t firstExample, batch;
  DenseMap<Value, DenseElementsAttr> memo;

  /// The batch's view of argument `arg` whose file is not one example per
  /// row: a bag's elements, padded, or their number.
  FailureOr<DenseElementsAttr> bagInput(BlockArgument arg,
                                        RankedTensorType type) {
    const InputLayout &layout = layouts[arg.getArgNumber()];
    ::parallax::runtime::SegmentRange range = ::parallax::runtime::segmentRange(
        layout.starts.data(), layout.starts.size(), layout.elements,
        firstExample, batch);
    if (layout.kind == InputLayout::BagCount)
      return DenseElementsAttr::get(type, range.size());
    StringRef name =
        cast<func::FuncOp>(arg.getOwner()->getParentOp())
            .getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                          ParallaxDialect::getNameAttrName())
            .getValue();
    if (range.size() > type.getNumElements())
      return emitError(arg.getLoc())
             << "--profile-data: the bags of examples [" << firstExample << ", "
             << firstExample + batch << ") hold " << range.size()
             << " elements, more than the " << type.getNumElements()
             << " of graph input '" << name << "' (--bind " << name
             << ":0=" << range.size() << ")";
    int64_t width = type.getElementTypeBitWidth() / CHAR_BIT;
    std::vector<char> bytes(type.getNumElements() * width);
    ::parallax::runtime::copySegment(bytes.data(), type.getNumElements(),
                                     files[arg.getArgNumber()].data.data(),
                                     range, width);
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  }

  FailureOr<DenseElementsAttr> compute(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      // The examples of this batch, in the file's (little-endian) layout.
      const ::parallax::runtime::NpyArray &file = files[arg.getArgNumber()];
      Type element = type.getElementType();
      bool sameLayout = (element.isInteger(64) && file.dtype == "<i8") ||
                        (element.isInteger(32) && file.dtype == "<i4") ||
                        (element.isF32() && file.dtype == "<f4") ||
                        (element.isF64() && file.dtype == "<f8");
      if (!sameLayout)
        return emitError(value.getLoc())
               << "cannot compute row ids from the profile data: graph input "
               << arg.getArgNumber() << " is " << type << ", its file holds "
               << file.dtype;
      const InputLayout &layout = layouts[arg.getArgNumber()];
      if (layout.kind != InputLayout::Examples)
        return bagInput(arg, type);
      int64_t bytes =
          type.getNumElements() * (type.getElementTypeBitWidth() / CHAR_BIT);
      int64_t first = firstExample * (bytes / type.getDimSize(0));
      auto batchOf = DenseElementsAttr::getFromRawBuffer(
          type, ArrayRef<char>(file.data.data() + first, bytes));
      if (!layout.isOffsets)
        return batchOf;
      // Offsets into the batch's elements, not the file's.
      SmallVector<APInt> offsets(batchOf.getValues<APInt>());
      for (APInt &offset : llvm::reverse(offsets))
        offset -= offsets.front();
      return DenseElementsAttr::get(type, offsets);
    }
    Operation *op = value.getDefiningOp();
    Attribute constant;
    if (matchPattern(value, m_Constant(&constant))) {
      if (auto elements = dyn_cast<DenseElementsAttr>(constant))
        return elements;
      return fail(op);
    }
    SmallVector<Attribute> operands;
    for (Value operand : op->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()))
        return fail(op);
      FailureOr<DenseElementsAttr> in = eval(operand);
      if (failed(in))
        return failure();
      operands.push_back(*in);
    }
    SmallVector<OpFoldResult> results;
    if (failed(op->fold(operands, results)) || results.empty())
      return fail(op);
    OpFoldResult result = results[cast<OpResult>(value).getResultNumber()];
    if (auto folded = dyn_cast<Attribute>(result)) {
      if (auto elements = dyn_cast<DenseElementsAttr>(folded))
        return elements;
      return fail(op);
    }
    // An identity fold: the value is one of the op's operands.
    if (cast<Value>(result) == value)
      return fail(op);
    return eval(cast<Value>(result));
  }

  FailureOr<DenseElementsAttr> fail(Operation *op) {
    return op->emitError()
           << "cannot compute row ids from the profile data through '"
           << op->getName()
           << "': it does not fold on constants (reshape, cast, slice, "
              "concat, gather, elementwise arithmetic and constants do)";
  }
};

} // namespace

LogicalResult mlir::parallax::measureSparsity(ModuleOp module,
                                              StringRef dataDir,
                                              int64_t workers) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step)
    return module.emitError("--profile-data needs the training step (run "
                            "--parallax-autodiff first)");
  // The sparse gradients and the ids they hold.
  SmallVector<std::pair<VariableOp, Value>> sparse;
  SymbolTable symbols(module);
  step.walk([&](ApplyGradientOp apply) {
    if (auto pack = apply.getGradient().getDefiningOp<RowSparsePackOp>())
      sparse.push_back(
          {symbols.lookup<VariableOp>(apply.getVariable()), pack.getIndices()});
  });
  if (sparse.empty())
    return success();

  // Every graph input's data; the batch is the inputs' leading dimension,
  // but for the elements of bags (docs/training.md).
  SmallVector<InputLayout> layouts(step.getNumArguments());
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    StringAttr bags;
    InputLayout::Kind kind = InputLayout::Examples;
    if ((bags = step.getArgAttrOfType<StringAttr>(
             i, ParallaxDialect::getSegmentedByAttrName())))
      kind = InputLayout::BagElements;
    else if ((bags = step.getArgAttrOfType<StringAttr>(
                  i, ParallaxDialect::getSegmentCountAttrName())))
      kind = InputLayout::BagCount;
    if (!bags)
      continue;
    layouts[i].kind = kind;
    for (unsigned j = 0; j < step.getNumArguments(); ++j)
      if (step.getArgAttrOfType<StringAttr>(
              j, ParallaxDialect::getNameAttrName()) == bags) {
        layouts[i].offsets = j;
        layouts[j].isOffsets = true;
      }
    if (layouts[i].offsets < 0)
      return module.emitError()
             << "argument " << i << "'s bags start at '" << bags.getValue()
             << "', which no argument is named";
  }
  SmallVector<::parallax::runtime::NpyArray> files;
  int64_t batch = 0, examples = -1;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto name = step.getArgAttrOfType<StringAttr>(
        i, ParallaxDialect::getNameAttrName());
    auto type = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    if (layouts[i].kind == InputLayout::BagCount) {
      files.emplace_back(); // computed from the offsets
      continue;
    }
    std::string path =
        (dataDir + "/" + (name ? name.getValue() : "") + ".npy").str();
    ::parallax::runtime::NpyArray array;
    std::string error;
    if (!::parallax::runtime::readNpy(path, array, error))
      return module.emitError() << "--profile-data: " << error;
    SmallVector<int64_t> expected(type.getShape());
    std::string dtype = type.getElementType().isInteger(64)   ? "<i8"
                        : type.getElementType().isInteger(32) ? "<i4"
                                                              : array.dtype;
    bool elements = layouts[i].kind == InputLayout::BagElements;
    if (elements && (array.dtype != dtype || array.shape.size() != 1))
      return module.emitError()
             << "--profile-data: '" << path << "' holds "
             << ::parallax::runtime::shapeString(array.shape) << " "
             << array.dtype << ", graph input '"
             << (name ? name.getValue() : "") << "' needs (N) of "
             << type.getElementType()
             << ": the elements of every bag, one after another";
    if (elements) {
      files.push_back(std::move(array));
      continue;
    }
    if (array.shape.empty() || array.dtype != dtype ||
        ArrayRef<int64_t>(array.shape).drop_front() !=
            ArrayRef<int64_t>(expected).drop_front())
      return module.emitError() << "--profile-data: '" << path << "' holds "
                                << ::parallax::runtime::shapeString(array.shape)
                                << " " << array.dtype << ", graph input '"
                                << (name ? name.getValue() : "") << "' needs (N"
                                << (expected.size() > 1 ? ", ..." : "")
                                << ") of " << type.getElementType();
    batch = type.getDimSize(0);
    examples = examples < 0 ? array.shape.front()
                            : std::min<int64_t>(examples, array.shape.front());
    files.push_back(std::move(array));
  }
  for (auto [i, layout] : llvm::enumerate(layouts)) {
    if (layout.kind != InputLayout::BagElements)
      continue;
    const ::parallax::runtime::NpyArray &offsets = files[layout.offsets];
    std::vector<int64_t> starts;
    bool integers = ::parallax::runtime::segmentOffsetsOf(offsets, starts);
    // The group's count reads the same offsets and elements.
    for (InputLayout &other : layouts)
      if (other.kind != InputLayout::Examples &&
          other.offsets == layout.offsets) {
        other.starts = starts;
        other.elements = files[i].shape.front();
      }
    std::string error =
        !integers ? std::string("the offsets of bags must be int64 or int32")
                  : ::parallax::runtime::checkSegmentOffsets(
                        starts.data(), starts.size(), files[i].shape.front());
    if (!error.empty())
      return module.emitError()
             << "--profile-data: the offsets of '"
             << step.getArgAttrOfType<StringAttr>(
                        i, ParallaxDialect::getNameAttrName())
                    .getValue()
             << "': " << error;
  }
  int64_t global = batch * workers;
  int64_t steps = global ? examples / global : 0;
  if (steps < 1)
    return module.emitError() << "--profile-data: one global step of "
                              << workers << " workers needs " << global
                              << " examples, the data has " << examples;

  for (auto [variable, ids] : sparse) {
    RankedTensorType type = variable.getTensorType();
    int64_t rows = type.getDimSize(0);
    // Distinct ids of the whole step, and of each worker's batch alone.
    double unique = 0, workerUnique = 0;
    for (int64_t s = 0; s < steps; ++s) {
      llvm::DenseSet<int64_t> seen;
      for (int64_t r = 0; r < workers; ++r) {
        IdEvaluator evaluator(files, layouts, (s * workers + r) * batch, batch);
        FailureOr<DenseElementsAttr> values = evaluator.eval(ids);
        if (failed(values))
          return failure();
        llvm::DenseSet<int64_t> mine;
        for (const APInt &id : values->getValues<APInt>())
          if (id.getSExtValue() >= 0 && id.getSExtValue() < rows) {
            seen.insert(id.getSExtValue());
            mine.insert(id.getSExtValue());
          }
        workerUnique += mine.size();
      }
      unique += seen.size();
    }
    unique /= steps;
    workerUnique /= steps * workers;
    int64_t measuredRows = std::max<int64_t>(1, std::llround(unique));
    int64_t workerRows =
        std::clamp<int64_t>(std::llround(workerUnique), 1, measuredRows);
    variable.setSparsityAttr(SparsityAttr::get(
        module.getContext(), GradientKind::Sparse,
        APFloat(std::max(unique, 1.0) / rows), measuredRows, workerRows));
  }
  return success();
}
