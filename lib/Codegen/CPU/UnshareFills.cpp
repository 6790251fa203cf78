//===- UnshareFills.cpp - One fill per accumulating op --------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXUNSHAREFILLS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// Whether `use` is the destination of a `tensor.insert_slice` whose
/// slice of the fill is also read by a `tensor.extract_slice` (an op
/// accumulating into one part of the fill, as col2im and the max-pool
/// gradient's residue classes do): the two stay on one buffer, updated in
/// place; a fill of its own for the insert would be a second fill and a
/// copy of the part.
bool updatesSliceInPlace(OpOperand &use) {
  auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
  if (!insert || use.get() != insert.getDest())
    return false;
  return llvm::any_of(use.get().getUsers(), [&](Operation *user) {
    auto extract = dyn_cast<tensor::ExtractSliceOp>(user);
    return extract && extract.getSource() == insert.getDest() &&
           extract.getMixedOffsets() == insert.getMixedOffsets() &&
           extract.getMixedSizes() == insert.getMixedSizes() &&
           extract.getMixedStrides() == insert.getMixedStrides();
  });
}

struct UnshareFillsPass
    : parallax::impl::ParallaxUnshareFillsBase<UnshareFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill->getResult(0).getUses()) {
        auto user = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
        if (user && user.isDpsInit(&use) && !updatesSliceInPlace(use))
          inits.push_back(&use);
      }
      for (OpOperand *use : inits) {
        OpBuilder builder(use->getOwner());
        Value destination = fill.getDpsInits()[0];
        if (auto empty = destination.getDefiningOp<tensor::EmptyOp>())
          destination = builder.clone(*empty)->getResult(0);
        IRMapping mapping;
        mapping.map(fill.getDpsInits()[0], destination);
        use->set(builder.clone(*fill, mapping)->getResult(0));
      }
      if (fill->use_empty()) {
        Value destination = fill.getDpsInits()[0];
        fill->erase();
        if (destination.use_empty() && destination.getDefiningOp())
          destination.getDefiningOp()->erase();
      }
    }
  }
};

} // namespace
