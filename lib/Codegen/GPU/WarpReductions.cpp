//===- WarpReductions.cpp - Which reductions a warp shares out ------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "WarpReductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

Operation *parallax::neutralCombiner(linalg::GenericOp op) {
  SmallVector<Operation *, 4> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1 || combiners.front()->getNumOperands() != 2 ||
      combiners.front()->getNumResults() != 1 ||
      !arith::getNeutralElement(combiners.front()))
    return nullptr;
  return combiners.front();
}

Value parallax::combine(OpBuilder &builder, Location loc, Operation *combiner,
                        Value lhs, Value rhs) {
  OperationState state(loc, combiner->getName());
  state.addOperands({lhs, rhs});
  state.addTypes(combiner->getResultTypes());
  state.addAttributes(combiner->getAttrs());
  return builder.create(state)->getResult(0);
}

std::optional<parallax::WarpReduction>
parallax::warpReductionOf(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (reductions.empty())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t reduced = 1;
  for (unsigned loop : reductions) {
    if (ShapedType::isDynamic(ranges[loop]))
      return std::nullopt;
    reduced *= ranges[loop];
  }
  Operation *combiner = neutralCombiner(op);
  if (!combiner)
    return std::nullopt;
  Type type = combiner->getResult(0).getType();
  if (!type.isF32() && !type.isInteger(32))
    return std::nullopt;
  AffineExpr innermost = getAffineDimExpr(reductions.back(), op.getContext());
  bool readsRows = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<ShapedType>(input->get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    if (llvm::none_of(reductions,
                      [&](unsigned loop) { return map.isFunctionOfDim(loop); }))
      continue;
    if (map.getNumResults() == 0 || map.getResults().back() != innermost)
      return std::nullopt;
    readsRows = true;
  }
  if (!readsRows)
    return std::nullopt;
  return WarpReduction{combiner, *arith::getNeutralElement(combiner), reduced};
}
