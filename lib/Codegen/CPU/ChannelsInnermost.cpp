//===- ChannelsInnermost.cpp - Window ops vectorized along channels -------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/LoopAccess.h"
#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXCHANNELSINNERMOST
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// A filter gradient's batch is summed in at most this many groups, each
/// into partial sums of its own that threads can share out.
constexpr int64_t kMaxBatchGroups = 8;

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
    if (llvm::any_of(ranges, ShapedType::isDynamic) ||
        ShapedType::getNumElements(ranges) < minIterations)
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

    bool reductionsOutside = outputSmallerThanInputs(generic);
    SmallVector<unsigned> order =
        loopOrder(generic, channel, reductionsOutside);
    if (reductionsOutside) {
      if (std::optional<unsigned> batch = batchLoop(generic, order.front()))
        return splitBatch(rewriter, generic, *batch, order);
    }
    rewriter.setInsertionPoint(generic);
    return linalg::interchangeGenericOp(rewriter, generic, order);
  }

  /// `loop`, where it is a loop that `generic`'s sum can be split along
  /// into groups: it indexes the first dimension of every input, through
  /// that index alone, and not the output (the batch of a filter
  /// gradient), has a divisor of at least two groups, and the body adds
  /// its terms to the output with `reassoc`.
  std::optional<unsigned> batchLoop(linalg::GenericOp generic, unsigned loop) {
    if (generic.hasIndexSemantics() || !isReassociableSum(generic) ||
        batchGroups(generic.getStaticLoopRanges()[loop]) < 2)
      return std::nullopt;
    AffineExpr batch = getAffineDimExpr(loop, generic.getContext());
    for (OpOperand &operand : generic->getOpOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(&operand);
      bool isInput = generic.isDpsInput(&operand);
      for (auto [i, expr] : llvm::enumerate(map.getResults()))
        if (expr.isFunctionOfDim(loop) && !(isInput && i == 0 && expr == batch))
          return std::nullopt;
      if (isInput && map.getResult(0) != batch)
        return std::nullopt;
    }
    return loop;
  }

  /// The most groups, up to kMaxBatchGroups, that divide `extent`.
  static int64_t batchGroups(int64_t extent) {
    for (int64_t groups = kMaxBatchGroups; groups > 1; --groups)
      if (extent % groups == 0)
        return groups;
    return 1;
  }

  /// `generic` (loops in `order` once interchanged) as partial sums over
  /// groups of its batch, in a parallel loop outside the others, then the
  /// groups' sums added to its init:
  ///
  ///   partial[grp, ...] = sum over (n in grp, the other reductions) of ...
  ///   result[...]       = init[...] + sum over grp of partial[grp, ...]
  ///
  /// The groups depend on the shape alone, so the sums do not depend on the
  /// thread count.
  LogicalResult splitBatch(IRRewriter &rewriter, linalg::GenericOp generic,
                           unsigned batch, ArrayRef<unsigned> order) {
    Location loc = generic.getLoc();
    MLIRContext *context = generic.getContext();
    rewriter.setInsertionPoint(generic);
    unsigned loops = generic.getNumLoops(), group = loops;
    int64_t groups = batchGroups(generic.getStaticLoopRanges()[batch]);
    AffineExpr groupDim = getAffineDimExpr(group, context);

    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      auto type = cast<RankedTensorType>(input->get().getType());
      SmallVector<int64_t> shape{groups, type.getDimSize(0) / groups};
      SmallVector<ReassociationIndices> reassociation{{0, 1}};
      for (int64_t dim = 1; dim < type.getRank(); ++dim) {
        shape.push_back(type.getDimSize(dim));
        reassociation.push_back({dim + 1});
      }
      inputs.push_back(tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
          input->get(), reassociation));
      SmallVector<AffineExpr> results{groupDim};
      llvm::append_range(results,
                         generic.getMatchingIndexingMap(input).getResults());
      maps.push_back(AffineMap::get(loops + 1, 0, results, context));
    }
    OpOperand *init = generic.getDpsInitOperand(0);
    auto outType = cast<RankedTensorType>(init->get().getType());
    SmallVector<int64_t> partialShape{groups};
    llvm::append_range(partialShape, outType.getShape());
    Type element = outType.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc, element,
                                           rewriter.getZeroAttr(element));
    Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, element);
    Value partialInit =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    SmallVector<AffineExpr> partialResults{groupDim};
    llvm::append_range(partialResults,
                       generic.getMatchingIndexingMap(init).getResults());
    maps.push_back(AffineMap::get(loops + 1, 0, partialResults, context));
    SmallVector<utils::IteratorType> iterators =
        generic.getIteratorTypesArray();
    iterators.push_back(utils::IteratorType::parallel);
    auto partial = linalg::GenericOp::create(
        rewriter, loc, TypeRange{partialInit.getType()}, inputs,
        ValueRange{partialInit}, maps, iterators);
    rewriter.cloneRegionBefore(generic.getRegion(), partial.getRegion(),
                               partial.getRegion().begin());

    // The groups' sums added to the init: loops (o..., grp, c), the
    // output's last index (the channels) innermost.
    unsigned rank = outType.getRank();
    SmallVector<AffineExpr> outResults,
        fromPartial{getAffineDimExpr(rank - 1, context)};
    for (unsigned dim = 0; dim < rank; ++dim) {
      outResults.push_back(
          getAffineDimExpr(dim + 1 == rank ? rank : dim, context));
      fromPartial.push_back(outResults.back());
    }
    SmallVector<utils::IteratorType> sumIterators(
        rank + 1, utils::IteratorType::parallel);
    sumIterators[rank - 1] = utils::IteratorType::reduction;
    auto sum = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, ValueRange{partial.getResult(0)},
        ValueRange{init->get()},
        SmallVector<AffineMap>{
            AffineMap::get(rank + 1, 0, fromPartial, context),
            AffineMap::get(rank + 1, 0, outResults, context)},
        sumIterators, [](OpBuilder &b, Location l, ValueRange args) {
          Value added = arith::AddFOp::create(b, l, args[1], args[0],
                                              arith::FastMathFlags::reassoc);
          linalg::YieldOp::create(b, l, added);
        });
    rewriter.replaceOp(generic, sum.getResult(0));

    SmallVector<unsigned> partialOrder{group};
    llvm::append_range(partialOrder, order);
    rewriter.setInsertionPoint(partial);
    return linalg::interchangeGenericOp(rewriter, partial, partialOrder);
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

  /// Whether `op`'s output has fewer elements than each of its inputs (a
  /// filter gradient): its reductions then go outside, so the output stays
  /// in the cache while the inputs stream past once.
  static bool outputSmallerThanInputs(linalg::GenericOp op) {
    auto elements = [](Value value) {
      return cast<RankedTensorType>(value.getType()).getNumElements();
    };
    int64_t outElements = elements(op.getDpsInitOperand(0)->get());
    return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
      return elements(input->get()) > outElements;
    });
  }

  /// The loops other than `channel`, each in its order: the reductions
  /// outside the loops that index the output where `reductionsOutside`,
  /// else inside them (each output element finished in turn); the channel
  /// loop last.
  static SmallVector<unsigned> loopOrder(linalg::GenericOp op, unsigned channel,
                                         bool reductionsOutside) {
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
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
