//===- ChannelsInnermost.cpp - Window ops vectorized along channels -------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXCHANNELSINNERMOST
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// The coefficient of `loop` in `expr`, or nullopt where `expr` is not a
/// linear function of the loops.
std::optional<int64_t> coefficientOf(AffineExpr expr, unsigned loop,
                                     unsigned loops) {
  SmallVector<int64_t> flat;
  if (failed(getFlattenedAffineExpr(expr, loops, /*numSymbols=*/0, &flat)))
    return std::nullopt;
  return flat[loop];
}

/// The one result of `map` that `loop` moves, if it moves exactly one,
/// by one.
std::optional<unsigned> indexMovedByOne(AffineMap map, unsigned loop) {
  std::optional<unsigned> found;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(loop))
      continue;
    std::optional<int64_t> step = coefficientOf(expr, loop, map.getNumDims());
    if (found || step != 1)
      return std::nullopt;
    found = i;
  }
  return found;
}

/// The permutation of `rank` dimensions that moves `dim` last.
SmallVector<int64_t> moveLast(unsigned dim, unsigned rank) {
  SmallVector<int64_t> perm;
  for (unsigned i = 0; i < rank; ++i)
    if (i != dim)
      perm.push_back(i);
  perm.push_back(dim);
  return perm;
}

RankedTensorType permuted(RankedTensorType type, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t from : perm)
    shape.push_back(type.getDimSize(from));
  return RankedTensorType::get(shape, type.getElementType());
}

/// `value` with its dimensions permuted (result dim i = value dim
/// perm[i]). A constant pad is moved after the transpose, which then reads
/// the smaller unpadded tensor and leaves the pad's copy as it was.
Value transposed(OpBuilder &b, Location loc, Value value,
                 ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  if (auto pad = value.getDefiningOp<tensor::PadOp>()) {
    if (Value padding = pad.getConstantPaddingValue()) {
      Value source = transposed(b, loc, pad.getSource(), perm);
      SmallVector<OpFoldResult> low = pad.getMixedLowPad(),
                                high = pad.getMixedHighPad(), newLow, newHigh;
      for (int64_t from : perm) {
        newLow.push_back(low[from]);
        newHigh.push_back(high[from]);
      }
      return tensor::PadOp::create(b, loc, permuted(type, perm), source, newLow,
                                   newHigh, padding, pad.getNofold());
    }
  }
  RankedTensorType to = permuted(type, perm);
  Value empty =
      tensor::EmptyOp::create(b, loc, to.getShape(), to.getElementType());
  return linalg::TransposeOp::create(b, loc, value, empty, perm).getResult()[0];
}

struct ChannelsInnermostPass
    : parallax::impl::ParallaxChannelsInnermostBase<ChannelsInnermostPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, unsigned>> work;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<unsigned> channel = channelLoop(op))
        work.emplace_back(op, *channel);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, channel] : work)
      if (failed(rewrite(rewriter, op, channel))) {
        op->emitError("internal error: cannot interchange this op's loops");
        return signalPassFailure();
      }
  }

  /// The loop to run innermost along the channels, where `op` qualifies.
  std::optional<unsigned> channelLoop(linalg::GenericOp op) {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() == 0)
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return std::nullopt;
    int64_t points = 1;
    for (int64_t range : ranges)
      points *= range;
    if (points < minIterations)
      return std::nullopt;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || !type.hasStaticShape() || type.getRank() == 0)
        return std::nullopt;
    }
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (!outMap.isProjectedPermutation() || outMap.getNumResults() < 2)
      return std::nullopt;
    unsigned row = outMap.getDimPosition(outMap.getNumResults() - 1);
    unsigned loops = op.getNumLoops();
    bool strided = false;
    for (OpOperand *input : op.getDpsInputOperands())
      for (AffineExpr expr : op.getMatchingIndexingMap(input).getResults())
        if (std::optional<int64_t> step = coefficientOf(expr, row, loops))
          strided |= *step > 1;
    if (ranges[row] >= minInner && !strided)
      return std::nullopt;

    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (unsigned loop = 0; loop < loops; ++loop) {
      if (loop == row || iterators[loop] != utils::IteratorType::parallel ||
          ranges[loop] < minChannels)
        continue;
      bool everyOperand = llvm::all_of(op->getOpOperands(), [&](OpOperand &o) {
        return indexMovedByOne(op.getMatchingIndexingMap(&o), loop).has_value();
      });
      if (everyOperand)
        return loop;
    }
    return std::nullopt;
  }

  LogicalResult rewrite(IRRewriter &rewriter, linalg::GenericOp op,
                        unsigned channel) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<AffineMap> maps;
    SmallVector<Value> inputs;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto [value, map] = channelsLast(rewriter, op, *input, channel);
      inputs.push_back(value);
      maps.push_back(map);
    }
    OpOperand *init = op.getDpsInitOperand(0);
    auto [output, outMap] = channelsLast(rewriter, op, *init, channel);
    maps.push_back(outMap);

    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{output.getType()}, inputs, ValueRange{output},
        maps, op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                                generic.getRegion().begin());
    generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());

    // Back to the op's layout.
    AffineMap oldOutMap = op.getMatchingIndexingMap(init);
    unsigned outDim = *indexMovedByOne(oldOutMap, channel);
    SmallVector<int64_t> back =
        invertPermutationVector(moveLast(outDim, oldOutMap.getNumResults()));
    Value result = transposed(rewriter, loc, generic.getResult(0), back);
    rewriter.replaceOp(op, result);

    rewriter.setInsertionPoint(generic);
    return linalg::interchangeGenericOp(rewriter, generic,
                                        loopOrder(generic, channel));
  }

  /// `operand`'s value with the channel index last, and the map that reads
  /// it. An output that is a fill is filled in the new shape instead.
  std::pair<Value, AffineMap> channelsLast(IRRewriter &rewriter,
                                           linalg::GenericOp op,
                                           OpOperand &operand,
                                           unsigned channel) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    unsigned dim = *indexMovedByOne(map, channel);
    unsigned rank = map.getNumResults();
    if (dim + 1 == rank)
      return {operand.get(), map};
    SmallVector<int64_t> perm = moveLast(dim, rank);
    SmallVector<AffineExpr> results;
    for (int64_t from : perm)
      results.push_back(map.getResult(from));
    AffineMap newMap =
        AffineMap::get(map.getNumDims(), 0, results, op.getContext());
    Location loc = op.getLoc();
    if (auto fill = operand.get().getDefiningOp<linalg::FillOp>();
        fill && op.isDpsInit(&operand)) {
      auto to = permuted(cast<RankedTensorType>(operand.get().getType()), perm);
      Value empty = tensor::EmptyOp::create(rewriter, loc, to.getShape(),
                                            to.getElementType());
      Value filled = linalg::FillOp::create(rewriter, loc, fill.value(), empty)
                         .getResult(0);
      return {filled, newMap};
    }
    return {transposed(rewriter, loc, operand.get(), perm), newMap};
  }

  /// The loops other than `channel`, each in its order: the reductions
  /// outside the loops that index the output where the output is smaller
  /// than every input (a filter gradient: the output stays in the cache
  /// while the inputs stream past once), else inside them (each output
  /// element finished in turn); the channel loop last.
  SmallVector<unsigned> loopOrder(linalg::GenericOp op, unsigned channel) {
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    auto elements = [](Value value) {
      return cast<RankedTensorType>(value.getType()).getNumElements();
    };
    int64_t outElements = elements(op.getDpsInitOperand(0)->get());
    bool reductionsOutside =
        llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
          return elements(input->get()) > outElements;
        });
    SmallVector<unsigned> indexing, others;
    for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
      if (loop != channel)
        (outMap.isFunctionOfDim(loop) ? indexing : others).push_back(loop);
    }
    SmallVector<unsigned> order = reductionsOutside ? others : indexing;
    llvm::append_range(order, reductionsOutside ? indexing : others);
    order.push_back(channel);
    return order;
  }
};

} // namespace
