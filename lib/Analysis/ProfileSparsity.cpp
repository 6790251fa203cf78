//===- ProfileSparsity.cpp - Measured alpha from sample data --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/ProfileSparsity.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Support/Npy.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <cstring>

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// An integer tensor evaluated at compile time.
struct IntTensor {
  SmallVector<int64_t> shape;
  std::vector<int64_t> values;
};

/// Evaluates index computations on the examples of one worker's batch.
class IdEvaluator {
public:
  IdEvaluator(ArrayRef<::parallax::runtime::NpyArray> files,
              int64_t firstExample)
      : files(files), firstExample(firstExample) {}

  FailureOr<IntTensor> eval(Value value) {
    auto it = memo.find(value);
    if (it != memo.end())
      return it->second;
    FailureOr<IntTensor> result = compute(value);
    if (succeeded(result))
      memo[value] = *result;
    return result;
  }

private:
  ArrayRef<::parallax::runtime::NpyArray> files;
  int64_t firstExample;
  DenseMap<Value, IntTensor> memo;

  FailureOr<IntTensor> compute(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    IntTensor out;
    out.shape.assign(type.getShape().begin(), type.getShape().end());
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      const ::parallax::runtime::NpyArray &file = files[arg.getArgNumber()];
      int64_t count = type.getNumElements();
      int64_t width = file.dtype == "<i8" ? 8 : 4;
      const char *data = file.data.data() +
                         firstExample * (count / type.getDimSize(0)) * width;
      out.values.resize(count);
      for (int64_t i = 0; i < count; ++i) {
        if (width == 8) {
          std::memcpy(&out.values[i], data + 8 * i, 8);
        } else {
          int32_t v;
          std::memcpy(&v, data + 4 * i, 4);
          out.values[i] = v;
        }
      }
      return out;
    }
    Operation *op = value.getDefiningOp();
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = dyn_cast<DenseIntElementsAttr>(constant.getValue());
      if (!attr)
        return fail(op);
      for (const APInt &v : attr.getValues<APInt>())
        out.values.push_back(v.getSExtValue());
      return out;
    }
    if (isa<ReshapeOp, CastOp>(op)) {
      FailureOr<IntTensor> in = eval(op->getOperand(0));
      if (failed(in))
        return failure();
      out.values = in->values;
      return out;
    }
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      // Rows of every input, interleaved per outer index.
      int64_t axis = concat.getAxis();
      SmallVector<IntTensor> inputs;
      for (Value input : concat.getInputs()) {
        FailureOr<IntTensor> in = eval(input);
        if (failed(in))
          return failure();
        inputs.push_back(std::move(*in));
      }
      int64_t outer = 1;
      for (int64_t d = 0; d < axis; ++d)
        outer *= out.shape[d];
      for (int64_t o = 0; o < outer; ++o)
        for (IntTensor &in : inputs) {
          int64_t chunk = in.values.size() / outer;
          out.values.insert(out.values.end(), in.values.begin() + o * chunk,
                            in.values.begin() + (o + 1) * chunk);
        }
      return out;
    }
    if (auto slice = dyn_cast<SliceOp>(op)) {
      FailureOr<IntTensor> in = eval(slice.getInput());
      if (failed(in))
        return failure();
      int64_t rank = in->shape.size();
      SmallVector<int64_t> inStrides(rank, 1);
      for (int64_t d = rank - 2; d >= 0; --d)
        inStrides[d] = inStrides[d + 1] * in->shape[d + 1];
      int64_t count = type.getNumElements();
      SmallVector<int64_t> index(rank, 0);
      for (int64_t n = 0; n < count; ++n) {
        int64_t offset = 0;
        for (int64_t d = 0; d < rank; ++d)
          offset += (slice.getOffsets()[d] + index[d] * slice.getStrides()[d]) *
                    inStrides[d];
        out.values.push_back(in->values[offset]);
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++index[d] < out.shape[d])
            break;
          index[d] = 0;
        }
      }
      return out;
    }
    return fail(op);
  }

  FailureOr<IntTensor> fail(Operation *op) {
    op->emitError() << "cannot compute row ids from the profile data "
                       "through '"
                    << op->getName()
                    << "' (only reshape, cast, slice, concat and constants)";
    return failure();
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

  // Every graph input's data; the batch is the inputs' leading dimension.
  SmallVector<::parallax::runtime::NpyArray> files;
  int64_t batch = 0, examples = -1;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto name = step.getArgAttrOfType<StringAttr>(
        i, ParallaxDialect::getNameAttrName());
    auto type = cast<RankedTensorType>(step.getArgumentTypes()[i]);
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
  int64_t global = batch * workers;
  int64_t steps = global ? examples / global : 0;
  if (steps < 1)
    return module.emitError() << "--profile-data: one global step of "
                              << workers << " workers needs " << global
                              << " examples, the data has " << examples;

  for (auto [variable, ids] : sparse) {
    RankedTensorType type = variable.getTensorType();
    int64_t rows = type.getDimSize(0);
    double unique = 0;
    for (int64_t s = 0; s < steps; ++s) {
      llvm::DenseSet<int64_t> seen;
      for (int64_t r = 0; r < workers; ++r) {
        IdEvaluator evaluator(files, (s * workers + r) * batch);
        FailureOr<IntTensor> values = evaluator.eval(ids);
        if (failed(values))
          return failure();
        for (int64_t id : values->values)
          if (id >= 0 && id < rows)
            seen.insert(id);
      }
      unique += seen.size();
    }
    unique /= steps;
    int64_t measuredRows = std::max<int64_t>(1, std::llround(unique));
    variable.setSparsityAttr(
        SparsityAttr::get(module.getContext(), GradientKind::Sparse,
                          APFloat(std::max(unique, 1.0) / rows), measuredRows));
  }
  return success();
}
