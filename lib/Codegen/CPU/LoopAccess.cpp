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
      // The coefficient of the loop in a linear index.
      SmallVector<int64_t> flat;
      if (i + 1 != results.size() ||
          failed(
              getFlattenedAffineExpr(expr, numDims, /*numSymbols=*/0, &flat)) ||
          flat[loop] < 1 || flat[loop] > maxStep)
        return false;
    }
  }
  return true;
}
