//===- AllReduceInPlace.cpp - A gradient's AllReduce into its own buffer --===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXALLREDUCEINPLACE
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// Whether every use of `buffer` and of its views (transitively) is `call`
/// itself or an op that is not a call and comes before `call` in its block.
bool onlyUsedBefore(Value buffer, func::CallOp call) {
  Block *block = call->getBlock();
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == call.getOperation())
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || ancestor == call.getOperation() ||
          call->isBeforeInBlock(ancestor) || isa<CallOpInterface>(user))
        return false;
    }
  }
  return true;
}

/// The memref a `memref.cast` to the runtime's unranked type was made from.
Value castSource(Value value) {
  auto cast = value.getDefiningOp<memref::CastOp>();
  return cast ? cast.getSource() : Value();
}

/// Makes the gradient's buffer the result's where the conditions of the
/// pass's description hold.
void reduceInPlace(func::CallOp call) {
  Value gradientCast = call.getOperand(2), resultCast = call.getOperand(3);
  Value gradient = castSource(gradientCast);
  Value result = castSource(resultCast);
  if (!gradient || !result || gradient.getType() != result.getType())
    return;
  auto fresh = result.getDefiningOp<memref::AllocOp>();
  Value root = memref::skipViewLikeOps(cast<MemrefValue>(gradient));
  auto rootAlloc = root.getDefiningOp<memref::AllocOp>();
  Block *block = call->getBlock();
  if (!fresh || !rootAlloc || fresh->getBlock() != block ||
      rootAlloc->getBlock() != block || !onlyUsedBefore(root, call))
    return;
  // The result's cast may serve later calls too (CSE): it moves to the
  // call, after the gradient's view.
  Operation *cast = resultCast.getDefiningOp();
  auto after = [&](Operation *user) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    return ancestor && call->isBeforeInBlock(ancestor);
  };
  for (Operation *user : fresh->getUsers())
    if (user != cast && !after(user))
      return;
  for (Operation *user : cast->getUsers())
    if (user != call.getOperation() && !after(user))
      return;
  cast->moveBefore(call);
  cast->setOperand(0, gradient);
  fresh.getResult().replaceAllUsesWith(gradient);
  fresh->erase();
}

struct AllReduceInPlacePass
    : parallax::impl::ParallaxAllReduceInPlaceBase<AllReduceInPlacePass> {
  void runOnOperation() override {
    StringRef add =
        parallax::abi::symbol(parallax::abi::Function::allreduce_add_f32);
    SmallVector<func::CallOp> adds;
    getOperation().walk([&](func::CallOp call) {
      if (call.getCallee() == add && call.getNumOperands() == 4)
        adds.push_back(call);
    });
    for (func::CallOp call : adds)
      reduceInPlace(call);
  }
};

} // namespace
