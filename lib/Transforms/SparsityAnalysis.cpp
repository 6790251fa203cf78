//===- SparsityAnalysis.cpp - Gradient kind and alpha of each variable ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/ProfileSparsity.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXSPARSITYANALYSIS
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct SparsityAnalysisPass
    : parallax::impl::ParallaxSparsityAnalysisBase<SparsityAnalysisPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t n = workers;
    if (n < 0) {
      module.emitError() << "workers must be positive, got " << n;
      return signalPassFailure();
    }
    if (n == 0)
      n = ParallaxDialect::getStaticWorkers(module).value_or(1);

    SymbolTable symbols(module);
    bool any = false;
    WalkResult result = module.walk([&](Operation *op) -> WalkResult {
      FlatSymbolRefAttr symbol;
      Value gradient;
      if (auto apply = dyn_cast<ApplyGradientOp>(op)) {
        symbol = apply.getVariableAttr();
        gradient = apply.getGradient();
      } else if (auto update = dyn_cast<UpdateOp>(op)) {
        symbol = update.getVariableAttr();
        gradient = update.getGradient();
      } else {
        return WalkResult::advance();
      }
      any = true;
      auto variable = symbols.lookup<VariableOp>(symbol.getValue());
      RankedTensorType type = variable.getTensorType();
      int64_t total = type.getRank() ? type.getDimSize(0) : 1;
      SparsityAttr sparsity;
      if (auto rowSparse = dyn_cast<RowSparseType>(gradient.getType())) {
        // Widen before multiplying: ids per worker times workers.
        int64_t rows = std::min<int64_t>(
            total, static_cast<int64_t>(std::min<double>(
                       static_cast<double>(rowSparse.getRows()) * n,
                       static_cast<double>(total))));
        int64_t stepRows = std::max<int64_t>(rows, 1);
        // One worker's ids bound what its machine moves (times its
        // workers), more tightly than the whole step's.
        int64_t workerRows =
            std::clamp<int64_t>(rowSparse.getRows(), 1, stepRows);
        sparsity =
            SparsityAttr::get(&getContext(), GradientKind::Sparse,
                              APFloat(static_cast<double>(stepRows) / total),
                              stepRows, workerRows);
      } else {
        sparsity = SparsityAttr::get(&getContext(), GradientKind::Dense,
                                     APFloat(1.0), total);
      }
      if (variable.getSparsityAttr() && variable.getSparsityAttr() != sparsity)
        return op->emitError() << "variable '" << symbol.getValue()
                               << "' has two gradients of different kinds";
      variable.setSparsityAttr(sparsity);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    if (!any) {
      module.emitError("no variable has a gradient: the loss depends on no "
                       "trainable variable, so there is nothing to train (or "
                       "--parallax-autodiff has not run)");
      return signalPassFailure();
    }
    if (!profileData.empty() && failed(measureSparsity(module, profileData, n)))
      return signalPassFailure();
  }
};

} // namespace
