//===- StridedCopiesToLinalg.cpp - Strided copies as loop nests -----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXSTRIDEDCOPIESTOLINALG
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

struct StridedCopiesToLinalgPass
    : parallax::impl::ParallaxStridedCopiesToLinalgBase<
          StridedCopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!source || !target || !source.hasStaticShape() ||
          !target.hasStaticShape())
        return;
      // One run on both sides: MLIR's LLVM lowering copies it with
      // llvm.memcpy.
      if (memref::isStaticShapeAndContiguousRowMajor(source) &&
          memref::isStaticShapeAndContiguousRowMajor(target))
        return;
      copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy->erase();
    }
  }
};

} // namespace
