//===- DeviceMemory.cpp - Buffers in device or managed memory -------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "HostEffects.h"
#include "parallax/Codegen/GPU/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringSet.h"

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

/// Whether `op` fills `buffer`, a global's buffer, with the global's
/// initial value.
bool isInitialValueCopy(Operation *op, Value buffer) {
  auto copy = dyn_cast<memref::CopyOp>(op);
  return copy && copy.getTarget() == buffer &&
         copy.getSource().getDefiningOp<memref::GetGlobalOp>();
}

/// Whether the address `pointer` takes is only compared with others, as
/// the deallocation's alias checks do (directly, or stored into the list
/// of base pointers its helper compares): never turned back into a
/// pointer the host could load through.
bool onlyCompared(memref::ExtractAlignedPointerAsIndexOp pointer) {
  return llvm::all_of(pointer->getUses(), [](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto store = dyn_cast<memref::StoreOp>(user))
      return use.get() == store.getValueToStore();
    return isa<arith::CmpIOp>(user);
  });
}

/// Whether only the device reaches the memory of `buffer`, allocated in
/// a host function, and, when it is a global's, of `loadedViews`, its
/// views loaded from the global's pointer slot: every use, every use of a view
/// of it, and every use of a function parameter it is passed as, is on the
/// device, its deallocation, or reads no element (its sizes, its address
/// compared). A global's buffer may also be filled with its initial value and
/// have its pointer stored in its slot. Anything else (a host load or copy, a
/// call the host runs, a pointer taken, a value returned or carried by a loop)
/// may touch it from the host.
bool onlyTheDeviceReaches(Value buffer, bool global,
                          ArrayRef<Value> loadedViews, SymbolTable &symbols) {
  SmallVector<Value> views{buffer};
  views.append(loadedViews.begin(), loadedViews.end());
  DenseSet<Value> seen(views.begin(), views.end());
  auto follow = [&](Value view) {
    if (seen.insert(view).second)
      views.push_back(view);
  };
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (usesOnDevice(user) || isa<memref::DeallocOp, memref::DimOp>(user))
        continue;
      if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user))
        if ((global && view == buffer) || onlyCompared(pointer))
          continue;
      if (global && view == buffer && isInitialValueCopy(user, buffer))
        continue;
      auto viewLike = dyn_cast<ViewLikeOpInterface>(user);
      if ((isa<memref::TransposeOp>(user) ||
           (viewLike && viewLike.getViewSource() == view)) &&
          user->getNumResults() == 1) {
        follow(user->getResult(0));
        continue;
      }
      // Passed to a function of the program: what it does with it.
      if (auto call = dyn_cast<func::CallOp>(user)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (callee && !callee.isExternal()) {
          follow(callee.getArgument(use.getOperandNumber()));
          continue;
        }
      }
      return false;
    }
  }
  return true;
}

/// Fills `buffer`, device memory, with the initial value the host copy
/// `copy` gave it: a splat of 32-bit elements (the optimizer's zeroed
/// state) by a device memset, anything else by a copy from the host.
/// Returns the global's name.
StringRef fillOnDevice(memref::CopyOp copy, Value buffer,
                       SymbolTable &symbols) {
  OpBuilder builder(copy);
  Location loc = copy.getLoc();
  auto read = copy.getSource().getDefiningOp<memref::GetGlobalOp>();
  auto global = symbols.lookup<memref::GlobalOp>(read.getName());
  auto dense =
      dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr());
  Type element = global.getType().getElementType();
  if (dense && dense.isSplat() && element.isIntOrFloat() &&
      element.getIntOrFloatBitWidth() == 32) {
    Value value = arith::ConstantOp::create(
        builder, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    gpu::MemsetOp::create(builder, loc, /*asyncToken=*/Type(),
                          /*asyncDependencies=*/ValueRange(), buffer, value);
  } else {
    gpu::MemcpyOp::create(builder, loc, /*asyncToken=*/Type(),
                          /*asyncDependencies=*/ValueRange(), buffer,
                          copy.getSource());
  }
  copy->erase();
  if (read->use_empty())
    read->erase();
  return global.getSymName();
}

struct DeviceMemoryPass
    : parallax::impl::ParallaxGPUDeviceMemoryBase<DeviceMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<Operation *> ops;
    llvm::StringMap<SmallVector<Value>> loadedViews;
    SmallVector<StringRef> filled;
    module.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (isa<memref::AllocOp, memref::DeallocOp>(op))
        ops.push_back(op);
      else if (auto slot = op->getAttrOfType<StringAttr>(
                   parallax::ParallaxDialect::getGlobalBufferSlotAttrName()))
        loadedViews[slot.getValue()].push_back(op->getResult(0));
    });
    for (Operation *op : ops) {
      OpBuilder builder(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto slot = alloc->getAttrOfType<StringAttr>(
            parallax::ParallaxDialect::getGlobalBufferSlotAttrName());
        ArrayRef<Value> views;
        if (slot)
          views = loadedViews[slot.getValue()];
        bool deviceOnly =
            onlyTheDeviceReaches(alloc.getMemref(),
                                 /*global=*/bool(slot), views, symbols);
        auto allocated = gpu::AllocOp::create(
            builder, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
            alloc.getSymbolOperands(), /*hostShared=*/!deviceOnly);
        Value buffer = allocated.getMemref();
        alloc.replaceAllUsesWith(buffer);
        if (deviceOnly)
          for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
            if (isInitialValueCopy(user, buffer))
              filled.push_back(
                  fillOnDevice(cast<memref::CopyOp>(user), buffer, symbols));
      } else {
        // Synchronous: gpu-async-region orders it on the stream.
        gpu::DeallocOp::create(builder, op->getLoc(), /*asyncToken=*/Type(),
                               /*asyncDependencies=*/ValueRange(),
                               cast<memref::DeallocOp>(op).getMemref());
      }
      op->erase();
    }
    // A global whose only read was the fill a device memset replaced is
    // not needed (nor its bytes in the program).
    llvm::StringSet<> read;
    module.walk([&](memref::GetGlobalOp op) { read.insert(op.getName()); });
    for (StringRef name : filled)
      if (!read.contains(name))
        symbols.erase(symbols.lookup(name));
  }
};

} // namespace
