//===- ReduceInProducers.cpp - A reduction in its producer's loop nest ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXREDUCEINPRODUCERS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

bool isSingleResultOnTensors(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 &&
         op->getNumResults() == 1;
}

/// Whether `op`'s loops are parallel ones, then at least one reduction:
/// its innermost loop then accumulates one element of the result, which
/// stays in a register. (Accumulating a row of outputs across an outer
/// reduction loop, as a column sum does, next to the producer's stream
/// of writes, was twice as slow as the two passes.)
bool reducesInnermost(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto firstReduction = llvm::find(iterators, utils::IteratorType::reduction);
  return firstReduction != iterators.end() &&
         std::all_of(firstReduction, iterators.end(), [](auto type) {
           return type == utils::IteratorType::reduction;
         });
}

/// The elementwise op whose result `reduction` reads, when the pair can be
/// one loop nest (the conditions in Passes.td).
linalg::GenericOp fusableProducer(linalg::GenericOp reduction) {
  if (!isSingleResultOnTensors(reduction) || reduction.getNumDpsInputs() != 1 ||
      !reducesInnermost(reduction))
    return nullptr;
  OpOperand *input = reduction.getDpsInputOperand(0);
  auto producer = input->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || !isSingleResultOnTensors(producer) ||
      producer.getNumLoops() != producer.getNumParallelLoops() ||
      producer->getResult(0).hasOneUse() ||
      !reduction.getMatchingIndexingMap(input).isIdentity() ||
      !producer.getIndexingMapMatchingResult(producer->getResult(0))
           .isIdentity())
    return nullptr;
  SmallVector<int64_t> ranges = reduction.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) ||
      ranges != producer.getStaticLoopRanges())
    return nullptr;
  return producer;
}

/// `init` or, where it is defined after `point`, a copy of it there (a
/// fill of an empty tensor with a value available at `point` or a
/// constant); null when neither.
Value initBefore(Value init, Operation *point, DominanceInfo &dominance,
                 RewriterBase &rewriter) {
  if (dominance.properlyDominates(init, point))
    return init;
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics())
    return nullptr;
  Value value = fill.getDpsInputs()[0];
  Operation *constant = value.getDefiningOp();
  bool valueBefore = dominance.properlyDominates(value, point);
  if (!valueBefore &&
      !(constant && constant->hasTrait<OpTrait::ConstantLike>()))
    return nullptr;
  auto empty = fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  if (!empty || !empty.getDynamicSizes().empty())
    return nullptr;
  rewriter.setInsertionPoint(point);
  IRMapping mapping;
  if (!valueBefore)
    mapping.map(value, rewriter.clone(*constant)->getResult(0));
  mapping.map(empty.getResult(), rewriter.clone(*empty)->getResult(0));
  return rewriter.clone(*fill, mapping)->getResult(0);
}

/// One generic computing `producer`'s result and `reduction`'s.
linalg::GenericOp fuse(linalg::GenericOp producer, linalg::GenericOp reduction,
                       Value reductionInit, RewriterBase &rewriter) {
  rewriter.setInsertionPoint(producer);
  SmallVector<Value> inits = {producer.getDpsInits()[0], reductionInit};
  SmallVector<AffineMap> maps;
  for (OpOperand *input : producer.getDpsInputOperands())
    maps.push_back(producer.getMatchingIndexingMap(input));
  maps.push_back(
      producer.getMatchingIndexingMap(producer.getDpsInitOperand(0)));
  maps.push_back(
      reduction.getMatchingIndexingMap(reduction.getDpsInitOperand(0)));
  auto fused = linalg::GenericOp::create(
      rewriter, reduction.getLoc(), TypeRange(ValueRange(inits)),
      producer.getDpsInputs(), inits, maps, reduction.getIteratorTypesArray());
  fused->setDiscardableAttrs(producer->getDiscardableAttrDictionary());

  Block &producerBody = *producer.getBlock();
  Block &reductionBody = *reduction.getBlock();
  SmallVector<Type> argTypes(producerBody.getArgumentTypes());
  argTypes.push_back(reductionBody.getArgument(1).getType());
  SmallVector<Location> argLocs(argTypes.size(), reduction.getLoc());
  Block *body = rewriter.createBlock(&fused.getRegion(), {}, argTypes, argLocs);
  IRMapping mapping;
  for (auto [from, to] :
       llvm::zip(producerBody.getArguments(), body->getArguments()))
    mapping.map(from, to);
  for (Operation &op : producerBody.without_terminator())
    rewriter.clone(op, mapping);
  Value element = mapping.lookup(producerBody.getTerminator()->getOperand(0));
  mapping.map(reductionBody.getArgument(0), element);
  mapping.map(reductionBody.getArgument(1), body->getArguments().back());
  for (Operation &op : reductionBody.without_terminator())
    rewriter.clone(op, mapping);
  Value combined = mapping.lookup(reductionBody.getTerminator()->getOperand(0));
  linalg::YieldOp::create(rewriter, reduction.getLoc(),
                          ValueRange{element, combined});
  return fused;
}

/// Erases the fill (and its empty tensor) that a copy replaced.
void eraseIfUnused(Value init) {
  Operation *fill = init.getDefiningOp();
  if (!fill || !init.use_empty() || !isa<linalg::FillOp>(fill))
    return;
  Value empty = cast<linalg::FillOp>(fill).getDpsInits()[0];
  fill->erase();
  if (empty.use_empty() && empty.getDefiningOp())
    empty.getDefiningOp()->erase();
}

struct ReduceInProducersPass
    : parallax::impl::ParallaxReduceInProducersBase<ReduceInProducersPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (fusableProducer(op))
        reductions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(getOperation());
    for (linalg::GenericOp reduction : reductions) {
      // An earlier fusion may have taken this producer already.
      linalg::GenericOp producer = fusableProducer(reduction);
      if (!producer)
        continue;
      Value oldInit = reduction.getDpsInits()[0];
      Value init = initBefore(oldInit, producer, dominance, rewriter);
      if (!init)
        continue;
      linalg::GenericOp fused = fuse(producer, reduction, init, rewriter);
      rewriter.replaceOp(reduction, fused->getResult(1));
      rewriter.replaceOp(producer, fused->getResult(0));
      eraseIfUnused(oldInit);
    }
  }
};

} // namespace
