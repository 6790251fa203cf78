//===- DeviceMemory.cpp - Buffers in device or managed memory -------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "HostEffects.h"
#include "parallax/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUDEVICEMEMORY
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// Whether `op` reads or writes the buffers it is given on the device:
/// inside a kernel, a runtime call that queues library work on the stream
/// (cuBLAS, cuDNN), or one that moves them by device copies (the
/// AllReduce).
bool usesOnDevice(Operation *op) {
  if (op->getParentOfType<gpu::LaunchOp>())
    return true;
  std::optional<parallax::abi::Function> function =
      parallax::calledRuntimeFunction(op);
  return function && (parallax::abi::queuesOnStream(*function) ||
                      parallax::abi::copiesOperandsOnDevice(*function));
}

/// Whether only the device reaches the memory of `buffer`: every use, and
/// every use of a view of it, is on the device, its deallocation, or
/// reads no element (its sizes). Anything else (a host load or copy, a
/// call the host runs, a pointer taken, a value returned or carried by a
/// loop) may touch it from the host.
bool onlyTheDeviceReaches(Value buffer) {
  SmallVector<Value> views{buffer};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (usesOnDevice(user) || isa<memref::DeallocOp, memref::DimOp>(user))
        continue;
      auto viewLike = dyn_cast<ViewLikeOpInterface>(user);
      if ((isa<memref::TransposeOp>(user) ||
           (viewLike && viewLike.getViewSource() == view)) &&
          user->getNumResults() == 1) {
        views.push_back(user->getResult(0));
        continue;
      }
      return false;
    }
  }
  return true;
}

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
        bool deviceOnly = onlyTheDeviceReaches(alloc.getMemref());
        auto allocated = gpu::AllocOp::create(
            builder, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
            alloc.getSymbolOperands(), /*hostShared=*/!deviceOnly);
        alloc.replaceAllUsesWith(allocated.getMemref());
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
