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
        // gpu-to-llvm lowers only the asynchronous form: on a stream of
        // its own, waited for at once (the driver's free synchronises).
        Location loc = op->getLoc();
        Type token = gpu::AsyncTokenType::get(op->getContext());
        Value stream = gpu::WaitOp::create(builder, loc, token, ValueRange())
                           .getAsyncToken();
        Value freed =
            gpu::DeallocOp::create(builder, loc, token, ValueRange{stream},
                                   cast<memref::DeallocOp>(op).getMemref())
                .getAsyncToken();
        gpu::WaitOp::create(builder, loc, Type(), ValueRange{freed});
      }
      op->erase();
    }
  }
};

} // namespace
