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

/// A strided part of a tensor: (offset, size, stride) per dimension.
using Region = SmallVector<int64_t>;

/// A function argument that indexes, and the part of it that does.
struct Source {
  BlockArgument argument;
  std::optional<Region> region;
};

/// The function arguments whose elements (all of them, or the `region` of
/// a slice) reach `value` unchanged. Ops that pass on every element
/// (reshape, transpose, expand, tile, concat, integer widening casts) are
/// followed only while no slice has been seen: after one, elements move
/// in ways a region cannot describe. The indices not traced to an input
/// are left to the kernels' own checks.
void collectSources(Value value, std::optional<Region> region,
                    SmallVectorImpl<Source> &sources) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    if (isa<func::FuncOp>(argument.getOwner()->getParentOp()))
      sources.push_back({argument, region});
    return;
  }
  Operation *op = value.getDefiningOp();
  if (auto slice = dyn_cast<SliceOp>(op)) {
    Region composed;
    for (size_t d = 0; d < slice.getOffsets().size(); ++d) {
      int64_t offset = slice.getOffsets()[d], stride = slice.getStrides()[d];
      int64_t size = cast<RankedTensorType>(slice.getType()).getDimSize(d);
      if (stride < 1)
        return; // reversed: not a region
      if (region) {
        offset += (*region)[3 * d] * stride;
        size = (*region)[3 * d + 1];
        stride *= (*region)[3 * d + 2];
      }
      composed.append({offset, size, stride});
    }
    collectSources(slice.getInput(), composed, sources);
    return;
  }
  if (region)
    return;
  if (isa<ReshapeOp, TransposeOp, ExpandOp, TileOp, ConcatOp>(op)) {
    for (Value operand : op->getOperands())
      collectSources(operand, std::nullopt, sources);
    return;
  }
  if (auto castOp = dyn_cast<CastOp>(op)) {
    auto from = dyn_cast<IntegerType>(
        getElementTypeOrSelf(castOp.getInput().getType()));
    auto to = dyn_cast<IntegerType>(getElementTypeOrSelf(castOp.getType()));
    if (from && to && from.getWidth() <= to.getWidth() && from.getWidth() > 1)
      collectSources(castOp.getInput(), std::nullopt, sources);
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
      SmallVector<Source> sources;
      collectSources(indices, std::nullopt, sources);
      for (const Source &source : sources)
        ranges[source.argument].insert(IndexRangeAttr::get(
            ctx, low, high, ignored, use,
            source.region ? DenseI64ArrayAttr::get(ctx, *source.region)
                          : DenseI64ArrayAttr()));
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
