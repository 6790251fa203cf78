//===- LocalWhenAlone.cpp - One worker reads and updates tables in place --===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXLOCALWHENALONE
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

bool isLocalizable(Operation *op) {
  if (isa<PullOp>(op))
    return true;
  auto push = dyn_cast<PushOp>(op);
  return push && push.getOptimizerAttr();
}

/// Runs of consecutive pulls, and of consecutive pushes, in `block`.
SmallVector<SmallVector<Operation *>> runsOf(Block &block) {
  SmallVector<SmallVector<Operation *>> runs;
  Operation *previous = nullptr;
  for (Operation &op : block) {
    if (!isLocalizable(&op)) {
      previous = nullptr;
      continue;
    }
    if (!previous || previous->getName() != op.getName())
      runs.emplace_back();
    runs.back().push_back(&op);
    previous = &op;
  }
  return runs;
}

/// What one worker does instead of `op`: its results.
SmallVector<Value> local(OpBuilder &builder, Operation *op) {
  Location loc = op->getLoc();
  if (auto push = dyn_cast<PushOp>(op)) {
    UpdateOp::create(builder, loc, push.getVariableAttr(), push.getGradient(),
                     push.getOptimizerAttr(), push.getStateAttr());
    return {};
  }
  auto pull = cast<PullOp>(op);
  auto variable = SymbolTable::lookupNearestSymbolFrom<VariableOp>(
      op, pull.getVariableAttr());
  Value table = ReadOp::create(builder, loc, variable.getTensorType(),
                               pull.getVariableAttr());
  if (!pull.getIndices())
    return {table};
  return {GatherOp::create(builder, loc, table, pull.getIndices(),
                           builder.getI64IntegerAttr(0))
              .getResult()};
}

/// `run` becomes `scf.if %alone` with what one worker does in the then
/// branch and the run itself in the else branch.
void branch(ArrayRef<Operation *> run, Value alone) {
  OpBuilder builder(run.front());
  SmallVector<Value> results;
  for (Operation *op : run)
    llvm::append_range(results, op->getResults());
  auto choice = scf::IfOp::create(builder, run.front()->getLoc(),
                                  ValueRange(results).getTypes(), alone,
                                  /*withElseRegion=*/true);
  auto terminate = [&](Block *block, ValueRange values) {
    if (block->mightHaveTerminator())
      block->getTerminator()->erase();
    builder.setInsertionPointToEnd(block);
    scf::YieldOp::create(builder, choice.getLoc(), values);
  };
  builder.setInsertionPointToStart(choice.thenBlock());
  SmallVector<Value> localResults;
  for (Operation *op : run)
    llvm::append_range(localResults, local(builder, op));
  terminate(choice.thenBlock(), localResults);
  terminate(choice.elseBlock(), results);
  for (auto [result, replacement] : llvm::zip(results, choice.getResults()))
    result.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !choice->isProperAncestor(use.getOwner());
    });
  for (Operation *op : run)
    op->moveBefore(choice.elseBlock()->getTerminator());
}

struct LocalWhenAlonePass
    : parallax::impl::ParallaxLocalWhenAloneBase<LocalWhenAlonePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!ParallaxDialect::hasWorldAtRunTime(module))
      return;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      SmallVector<SmallVector<Operation *>> runs;
      function.walk(
          [&](Block *block) { llvm::append_range(runs, runsOf(*block)); });
      if (runs.empty())
        continue;
      OpBuilder builder = OpBuilder::atBlockBegin(&function.front());
      Location loc = function.getLoc();
      Value alone = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::eq,
          WorkersOp::create(builder, loc, builder.getI64Type()),
          arith::ConstantOp::create(builder, loc,
                                    builder.getI64IntegerAttr(1)));
      for (ArrayRef<Operation *> run : runs)
        branch(run, alone);
    }
  }
};

} // namespace
