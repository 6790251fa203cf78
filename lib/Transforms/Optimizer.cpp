//===- Optimizer.cpp - Gradients into optimizer updates -------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXOPTIMIZER
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct OptimizerPass : parallax::impl::ParallaxOptimizerBase<OptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OptimizerKind kind = optimizer;
    double eps = epsilon >= 0.0                   ? epsilon
                 : kind == OptimizerKind::Adagrad ? 1e-10
                                                  : 1e-8;
    double decay = weightDecay >= 0.0             ? weightDecay
                   : kind == OptimizerKind::AdamW ? 0.01
                                                  : 0.0;
    auto diagnose = [&] { return module.emitError("invalid optimizer: "); };
    auto real = [](double x) { return APFloat(x); };
    OptimizerAttr config = OptimizerAttr::getChecked(
        diagnose, ctx, kind, real(lr),
        real(kind == OptimizerKind::Momentum ? momentum : 0.0), bool(nesterov),
        real(beta1), real(beta2), real(eps), real(decay), real(lrDecay),
        real(initialAccumulatorValue));
    if (!config)
      return signalPassFailure();

    SymbolTable symbols(module);
    // Each state goes right after the variable: create them last first.
    auto stateOf = [&](VariableOp variable) -> FailureOr<ArrayAttr> {
      SmallVector<StringRef> names = config.getStateNames();
      SmallVector<Attribute> state(names.size());
      for (size_t i = names.size(); i-- > 0;) {
        FailureOr<FlatSymbolRefAttr> symbol =
            createState(symbols, variable, names[i], config);
        if (failed(symbol))
          return failure();
        state[i] = *symbol;
      }
      return state.empty() ? ArrayAttr() : ArrayAttr::get(ctx, state);
    };
    SmallVector<Operation *> sinks;
    module.walk([&](Operation *op) {
      if (isa<ApplyGradientOp>(op) ||
          (isa<PushOp>(op) && !cast<PushOp>(op).getOptimizerAttr()))
        sinks.push_back(op);
    });
    for (Operation *op : sinks) {
      auto symbol = op->getAttrOfType<FlatSymbolRefAttr>("variable");
      FailureOr<ArrayAttr> state =
          stateOf(symbols.lookup<VariableOp>(symbol.getValue()));
      if (failed(state))
        return signalPassFailure();
      if (auto push = dyn_cast<PushOp>(op)) {
        // The servers owning the variable apply the update.
        push.setOptimizerAttr(config);
        if (*state)
          push.setStateAttr(*state);
        continue;
      }
      auto apply = cast<ApplyGradientOp>(op);
      OpBuilder builder(apply);
      UpdateOp::create(builder, apply.getLoc(), apply.getVariableAttr(),
                       apply.getGradient(), config, *state);
      apply.erase();
    }
  }

  /// `<variable>.<name>`, zero (or Adagrad's initial value), beside the
  /// variable.
  FailureOr<FlatSymbolRefAttr> createState(SymbolTable &symbols,
                                           VariableOp variable, StringRef name,
                                           OptimizerAttr config) {
    std::string symbol = (variable.getSymName() + "." + name).str();
    if (symbols.lookup(symbol)) {
      variable.emitError() << "cannot create optimizer state '" << symbol
                           << "': the name is taken";
      return failure();
    }
    RankedTensorType type = variable.getTensorType();
    double init = name == "sum"
                      ? config.getInitialAccumulatorValue().convertToDouble()
                      : 0.0;
    OpBuilder builder(variable->getBlock(),
                      std::next(Block::iterator(variable)));
    auto state = VariableOp::create(
        builder, variable.getLoc(), builder.getStringAttr(symbol),
        TypeAttr::get(type),
        DenseElementsAttr::get(
            type, builder.getFloatAttr(type.getElementType(), init).getValue()),
        /*trainable=*/UnitAttr(), /*state=*/builder.getUnitAttr(),
        /*statistics=*/UnitAttr(),
        /*distribution=*/DistributionAttr(), /*sparsity=*/SparsityAttr());
    symbols.insert(state);
    return FlatSymbolRefAttr::get(state.getSymNameAttr());
  }
};

} // namespace
