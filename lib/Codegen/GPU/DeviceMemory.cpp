//===- DeviceMemory.cpp - Buffers that kernels and the runtime reach ------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUDEVICEMEMORY
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

struct DeviceMemoryPass
    : parallax::impl::ParallaxGPUDeviceMemoryBase<DeviceMemoryPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::DeallocOp>(op) &&
          !op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder builder(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto shared = gpu::AllocOp::create(
            builder, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
            alloc.getSymbolOperands(), /*hostShared=*/true);
        alloc.replaceAllUsesWith(shared.getMemref());
      } else {
        // Synchronous: gpu-async-region orders it on the stream.
        gpu::DeallocOp::create(builder, op->getLoc(), /*asyncToken=*/Type(),
                               /*asyncDependencies=*/ValueRange(),
                               cast<memref::DeallocOp>(op).getMemref());
      }
      op->erase();
    }
  }
};

} // namespace
