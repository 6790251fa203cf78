//===- InlineVariables.cpp - Variables as constants for inference ---------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXINLINEVARIABLES
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct InlineVariablesPass
    : public parallax::impl::ParallaxInlineVariablesBase<InlineVariablesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> written;
    module.walk([&](Operation *op) {
      if (auto assign = dyn_cast<AssignOp>(op))
        written.insert(assign.getVariable());
      else if (auto push = dyn_cast<PushOp>(op))
        written.insert(push.getVariable());
      else if (auto apply = dyn_cast<ApplyGradientOp>(op))
        written.insert(apply.getVariable());
      else if (auto update = dyn_cast<UpdateOp>(op)) {
        written.insert(update.getVariable());
        if (ArrayAttr state = update.getStateAttr())
          for (auto symbol : state.getAsRange<FlatSymbolRefAttr>())
            written.insert(symbol.getValue());
      }
    });
    SymbolTable symbols(module);
    module.walk([&](ReadOp read) {
      auto variable = symbols.lookup<VariableOp>(read.getVariable());
      if (!variable || !variable.getInitialValue() ||
          written.contains(read.getVariable()))
        return;
      OpBuilder builder(read);
      auto value = cast<TypedAttr>(*variable.getInitialValue());
      read.replaceAllUsesWith(
          arith::ConstantOp::create(builder, read.getLoc(), value).getResult());
      read.erase();
    });
    for (VariableOp variable :
         llvm::make_early_inc_range(module.getOps<VariableOp>()))
      if (SymbolTable::symbolKnownUseEmpty(variable, module))
        variable.erase();
  }
};

} // namespace
