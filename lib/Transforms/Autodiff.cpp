//===- Autodiff.cpp - Reverse-mode differentiation into a training step ---===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/DebugStringHelper.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXAUTODIFF
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// Sums gradient contributions, keeping row-sparse ones sparse while every
/// contribution is.
struct Accumulator {
  OpBuilder &b;

  Value densify(Location loc, Value grad) {
    if (isa<RowSparseType>(grad.getType()))
      return RowSparseToDenseOp::create(b, loc, grad);
    return grad;
  }

  Value add(Location loc, Value sum, Value grad) {
    if (!sum)
      return grad;
    auto sparseSum = dyn_cast<RowSparseType>(sum.getType());
    auto sparseGrad = dyn_cast<RowSparseType>(grad.getType());
    if (sparseSum && sparseGrad) {
      auto lhs = RowSparseUnpackOp::create(b, loc, sum);
      auto rhs = RowSparseUnpackOp::create(b, loc, grad);
      Value ids = ConcatOp::create(
          b, loc, ValueRange{lhs.getIndices(), rhs.getIndices()}, 0);
      Value rows = ConcatOp::create(
          b, loc, ValueRange{lhs.getValues(), rhs.getValues()}, 0);
      auto type = RowSparseType::get(
          sparseSum.getDenseType(), sparseSum.getRows() + sparseGrad.getRows());
      return RowSparsePackOp::create(b, loc, type, ids, rows);
    }
    return AddOp::create(b, loc, densify(loc, sum), densify(loc, grad));
  }
};

struct AutodiffPass : parallax::impl::ParallaxAutodiffBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func) {
      module.emitError() << "no function '" << function << "' to differentiate";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitError("the function to differentiate must have one block");
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError("the module already has a 'train_step'");
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    FailureOr<unsigned> lossIndex = findLoss(func);
    if (failed(lossIndex))
      return signalPassFailure();
    Value loss = ret.getOperand(*lossIndex);

    SymbolTable symbols(module);
    // Forward: values that depend on a trainable variable.
    DenseSet<Value> varied;
    for (Operation &op : body.without_terminator()) {
      if (op.getNumRegions()) {
        op.emitError("cannot differentiate through an op with regions");
        return signalPassFailure();
      }
      bool depends = false;
      if (auto read = dyn_cast<ReadOp>(op)) {
        auto variable = symbols.lookup<VariableOp>(read.getVariable());
        depends = variable && variable.getTrainable();
      } else {
        depends = llvm::any_of(op.getOperands(),
                               [&](Value v) { return varied.contains(v); });
      }
      if (depends)
        for (Value result : op.getResults())
          if (isFloatTensor(result))
            varied.insert(result);
    }

    // Backward, in reverse program order, emitted after the forward ops.
    OpBuilder builder(ret);
    Accumulator acc{builder};
    DenseMap<Value, Value> grads;
    llvm::MapVector<StringAttr, Value> variableGrads;
    if (varied.contains(loss)) {
      auto lossType = cast<RankedTensorType>(loss.getType());
      grads[loss] = arith::ConstantOp::create(
          builder, ret.getLoc(),
          DenseElementsAttr::get(
              lossType,
              builder.getFloatAttr(lossType.getElementType(), 1.0).getValue()));
    }
    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      forward.push_back(&op);
    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> resultGrads;
      bool any = false;
      for (Value result : op->getResults()) {
        Value grad = grads.lookup(result);
        any |= static_cast<bool>(grad);
        resultGrads.push_back(grad);
      }
      if (!any)
        continue;
      if (auto read = dyn_cast<ReadOp>(op)) {
        Value &sum = variableGrads[read.getVariableAttr().getAttr()];
        sum = acc.add(read.getLoc(), sum, resultGrads.front());
        continue;
      }
      auto rule = dyn_cast<GradientOpInterface>(op);
      if (!rule) {
        op->emitError() << "no gradient rule for '" << op->getName()
                        << "', which lies between a trainable variable and "
                           "the loss";
        return signalPassFailure();
      }
      for (auto [result, grad] : llvm::zip(op->getResults(), resultGrads)) {
        if (!grad)
          grad = arith::ConstantOp::create(
              builder, op->getLoc(),
              cast<TypedAttr>(builder.getZeroAttr(result.getType())));
        grad = acc.densify(op->getLoc(), grad);
      }
      SmallVector<Value> operandGrads;
      if (failed(rule.buildGradients(builder, resultGrads, operandGrads)))
        return signalPassFailure();
      for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
        if (grad && varied.contains(operand))
          grads[operand] = acc.add(op->getLoc(), grads.lookup(operand), grad);
    }

    // One apply_gradient per trainable variable, in declaration order (or
    // one more result per variable with return-gradients).
    DictionaryAttr lossAttrs = func.getResultAttrDict(*lossIndex);
    SmallVector<Value> results{loss};
    SmallVector<Attribute> resultAttrs{
        lossAttrs ? lossAttrs : builder.getDictionaryAttr({})};
    for (auto variable : module.getOps<VariableOp>()) {
      if (!variable.getTrainable())
        continue;
      Value grad = variableGrads.lookup(variable.getSymNameAttr());
      if (!grad)
        variable.emitWarning()
            << "the loss does not depend on trainable variable '"
            << variable.getSymName() << "': it will not be trained";
      if (!returnGradients) {
        if (grad)
          ApplyGradientOp::create(builder, variable.getLoc(),
                                  variable.getSymName(), grad);
        continue;
      }
      results.push_back(
          grad ? acc.densify(variable.getLoc(), grad)
               : arith::ConstantOp::create(
                     builder, variable.getLoc(),
                     cast<TypedAttr>(builder.getZeroAttr(variable.getType()))));
      resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
          ParallaxDialect::getNameAttrName(),
          builder.getStringAttr("d_" + variable.getSymName()))));
    }

    // Assignments (running statistics) go last, after every use of the
    // values read from the variables, as the updates do.
    for (AssignOp assign : llvm::to_vector(body.getOps<AssignOp>()))
      assign->moveBefore(ret);
    func::ReturnOp::create(builder, ret.getLoc(), results);
    ret.erase();
    func.setFunctionType(builder.getFunctionType(
        func.getArgumentTypes(), ValueRange(results).getTypes()));
    func.setResAttrsAttr(builder.getArrayAttr(resultAttrs));
    if (failed(symbols.rename(func, builder.getStringAttr("train_step")))) {
      func.emitError("cannot rename the function to 'train_step'");
      return signalPassFailure();
    }
  }

  StringRef resultName(func::FuncOp func, unsigned i) {
    if (auto name = func.getResultAttrOfType<StringAttr>(
            i, ParallaxDialect::getNameAttrName()))
      return name.getValue();
    return "";
  }

  FailureOr<unsigned> findLoss(func::FuncOp func) {
    SmallVector<unsigned> candidates;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      if (!loss.empty()) {
        if (resultName(func, i) == loss)
          candidates.push_back(i);
        continue;
      }
      auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
      if (type && type.getRank() == 0 && isa<FloatType>(type.getElementType()))
        candidates.push_back(i);
    }
    auto names = [&](ArrayRef<unsigned> indices) {
      std::string list;
      for (unsigned i : indices)
        list += (list.empty() ? "'" : ", '") + resultName(func, i).str() +
                "' (" + debugString(func.getResultTypes()[i]) + ")";
      return list;
    };
    auto all = llvm::to_vector(llvm::seq<unsigned>(0, func.getNumResults()));
    if (candidates.empty()) {
      func.emitError() << (loss.empty()
                               ? Twine("no scalar float output to use as the "
                                       "loss")
                               : "no output named '" + loss + "'")
                       << "; the outputs are: " << names(all);
      return failure();
    }
    if (candidates.size() > 1) {
      func.emitError() << "several scalar float outputs could be the loss ("
                       << names(candidates) << "): choose one with --loss";
      return failure();
    }
    auto type =
        dyn_cast<RankedTensorType>(func.getResultTypes()[candidates.front()]);
    if (!type || type.getRank() != 0 ||
        !isa<FloatType>(type.getElementType())) {
      func.emitError() << "the loss '" << loss << "' must be a scalar float, "
                       << "got " << func.getResultTypes()[candidates.front()];
      return failure();
    }
    return candidates.front();
  }
};

} // namespace
