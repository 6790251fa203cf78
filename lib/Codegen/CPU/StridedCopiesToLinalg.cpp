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

/// Whether MLIR's LLVM lowering copies `type` as one run of memory
/// (`llvm.memcpy`), as its memref.copy lowering decides.
bool isOneRun(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

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
      if (isOneRun(source) && isOneRun(target))
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
