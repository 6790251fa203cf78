//===- DeclareIndexRanges.cpp - Valid ranges of index-valued inputs -------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXDECLAREINDEXRANGES
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// The function arguments every element of which reaches `value`
/// unchanged: through ops that move or copy all their elements, and casts
/// that widen integers. (A slice uses only part of its input, so a range
/// of the slice says nothing of the rest: its indices are left to the
/// kernels' own checks.)
void collectSources(Value value, SmallVectorImpl<BlockArgument> &sources) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    if (isa<func::FuncOp>(argument.getOwner()->getParentOp()))
      sources.push_back(argument);
    return;
  }
  Operation *op = value.getDefiningOp();
  if (isa<ReshapeOp, TransposeOp, ExpandOp, TileOp, ConcatOp>(op)) {
    for (Value operand : op->getOperands())
      collectSources(operand, sources);
    return;
  }
  if (auto castOp = dyn_cast<CastOp>(op)) {
    auto from = dyn_cast<IntegerType>(
        getElementTypeOrSelf(castOp.getInput().getType()));
    auto to = dyn_cast<IntegerType>(getElementTypeOrSelf(castOp.getType()));
    if (from && to && from.getWidth() <= to.getWidth() && from.getWidth() > 1)
      collectSources(castOp.getInput(), sources);
  }
}

/// The variable `data` reads, if it is a parallax.read.
StringRef variableOf(Value data) {
  if (auto read = data.getDefiningOp<ReadOp>())
    return read.getVariable();
  return "";
}

struct DeclareIndexRangesPass
    : parallax::impl::ParallaxDeclareIndexRangesBase<DeclareIndexRangesPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    llvm::MapVector<BlockArgument, llvm::SetVector<Attribute>> ranges;
    auto declare = [&](Value indices, int64_t low, int64_t high,
                       std::optional<int64_t> ignored, const std::string &use) {
      SmallVector<BlockArgument> sources;
      collectSources(indices, sources);
      for (BlockArgument argument : sources)
        ranges[argument].insert(
            IndexRangeAttr::get(ctx, low, high, ignored, use));
    };
    getOperation().walk([&](Operation *op) {
      if (auto gather = dyn_cast<GatherOp>(op)) {
        int64_t axis = gather.getAxis();
        int64_t size =
            cast<RankedTensorType>(gather.getData().getType()).getDimSize(axis);
        std::string use =
            "the indices of " + ParallaxDialect::describeNode(op->getLoc());
        StringRef variable = variableOf(gather.getData());
        if (!variable.empty() && axis == 0)
          use += " into '" + variable.str() + "' (" + std::to_string(size) +
                 " rows; negative ones count from the end)";
        else
          use += " (dimension " + std::to_string(axis) + " of size " +
                 std::to_string(size) + "; negative ones count from the end)";
        declare(gather.getIndices(), -size, size, std::nullopt, use);
        return;
      }
      auto declareLabels = [&](auto loss) {
        int64_t classes =
            cast<RankedTensorType>(loss.getInput().getType()).getDimSize(1);
        std::optional<int64_t> ignored;
        if (IntegerAttr attr = loss.getIgnoreIndexAttr())
          ignored = attr.getInt();
        declare(loss.getLabels(), 0, classes, ignored,
                "the class labels of " +
                    ParallaxDialect::describeNode(op->getLoc()) + " (" +
                    std::to_string(classes) + " classes)");
      };
      if (auto loss = dyn_cast<SoftmaxCrossEntropyOp>(op))
        declareLabels(loss);
      else if (auto loss = dyn_cast<NegativeLogLikelihoodOp>(op))
        declareLabels(loss);
    });
    StringAttr name =
        StringAttr::get(ctx, ParallaxDialect::getIndexRangesAttrName());
    for (auto &[argument, attrs] : ranges) {
      auto function = cast<func::FuncOp>(argument.getOwner()->getParentOp());
      function.setArgAttr(argument.getArgNumber(), name,
                          ArrayAttr::get(ctx, attrs.getArrayRef()));
    }
  }
};

} // namespace
