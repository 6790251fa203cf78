//===- UnchainManagedAllocs.cpp - Managed allocations off the stream ------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUUNCHAINMANAGEDALLOCS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

struct UnchainManagedAllocsPass
    : parallax::impl::ParallaxGPUUnchainManagedAllocsBase<
          UnchainManagedAllocsPass> {
  void runOnOperation() override {
    SmallVector<gpu::AllocOp> allocs;
    getOperation().walk([&](gpu::AllocOp alloc) {
      if (alloc.getHostShared() && alloc.getAsyncToken())
        allocs.push_back(alloc);
    });
    for (gpu::AllocOp alloc : allocs) {
      if (alloc.getAsyncDependencies().size() != 1) {
        alloc.emitOpError("with ")
            << alloc.getAsyncDependencies().size()
            << " dependencies: expected the one gpu-async-region gives";
        return signalPassFailure();
      }
      OpBuilder builder(alloc);
      auto managed = gpu::AllocOp::create(
          builder, alloc.getLoc(), alloc.getMemref().getType(),
          /*asyncToken=*/Type(), /*asyncDependencies=*/ValueRange(),
          alloc.getDynamicSizes(), alloc.getSymbolOperands(),
          /*hostShared=*/true);
      alloc.getMemref().replaceAllUsesWith(managed.getMemref());
      alloc.getAsyncToken().replaceAllUsesWith(
          alloc.getAsyncDependencies().front());
      alloc.erase();
    }
  }
};

} // namespace
