//===- LoopAccess.cpp - How a linalg op's loops walk memory ---------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/LoopAccess.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"

using namespace mlir;

bool mlir::parallax::isContiguousAlong(linalg::GenericOp op, unsigned loop,
                                       int64_t maxInputStep) {
  unsigned numDims = op.getNumLoops();
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    int64_t maxStep = op.isDpsInput(&operand) ? maxInputStep : 1;
    ArrayRef<AffineExpr> results = map.getResults();
    for (auto [i, expr] : llvm::enumerate(results)) {
      if (!expr.isFunctionOfDim(loop))
        continue;
      std::optional<int64_t> step = coefficientOf(expr, loop, numDims);
      if (i + 1 != results.size() || !step || *step < 1 || *step > maxStep)
        return false;
    }
  }
  return true;
}

std::optional<int64_t>
mlir::parallax::coefficientOf(AffineExpr expr, unsigned loop, unsigned loops) {
  SmallVector<int64_t> flat;
  if (failed(getFlattenedAffineExpr(expr, loops, /*numSymbols=*/0, &flat)))
    return std::nullopt;
  return flat[loop];
}

bool mlir::parallax::isReassociableSum(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1)
    return false;
  BlockArgument out = op.getBlock()->getArguments().back();
  auto add = op.getBlock()
                 ->getTerminator()
                 ->getOperand(0)
                 .getDefiningOp<arith::AddFOp>();
  if (!add || !out.hasOneUse() ||
      !bitEnumContainsAll(add.getFastmath(), arith::FastMathFlags::reassoc))
    return false;
  return add.getLhs() == out || add.getRhs() == out;
}
