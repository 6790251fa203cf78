//===- ShortenBufferLifetimes.cpp - Free buffers after their last use -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXSHORTENBUFFERLIFETIMES
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Whether `call` passes `value` to a parameter its callee's declaration
/// marks `parallax.retained`.
bool passesToRetainedParameter(func::CallOp call, Value value,
                               SymbolTableCollection &symbols) {
  auto callee =
      symbols.lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  if (!callee)
    return false;
  for (OpOperand &operand : call->getOpOperands())
    if (operand.get() == value &&
        callee.getArgAttr(operand.getOperandNumber(),
                          ParallaxDialect::getRetainedAttrName()))
      return true;
  return false;
}

/// Whether the uses of `alias` keep the buffer beyond what the IR shows.
bool escapes(Operation *user, Value alias, SymbolTableCollection &symbols) {
  if (user->hasTrait<OpTrait::IsTerminator>())
    return true;
  if (isa<memref::ExtractAlignedPointerAsIndexOp, UnrealizedConversionCastOp>(
          user))
    return true;
  if (auto call = dyn_cast<func::CallOp>(user))
    return passesToRetainedParameter(call, alias, symbols);
  return false;
}

struct ShortenBufferLifetimesPass
    : parallax::impl::ParallaxShortenBufferLifetimesBase<
          ShortenBufferLifetimesPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    BufferViewFlowAnalysis analysis(function);
    SymbolTableCollection symbols;
    function.walk(
        [&](memref::AllocOp alloc) { shorten(alloc, analysis, symbols); });
  }

  /// Moves the deallocation of `alloc` after its buffer's last use, where
  /// that is safe.
  static void shorten(memref::AllocOp alloc, BufferViewFlowAnalysis &analysis,
                      SymbolTableCollection &symbols) {
    Block *block = alloc->getBlock();
    // Every view of the buffer: the analysis's, and conservatively every
    // memref an op makes from one.
    llvm::SetVector<Value> aliases;
    for (Value alias : analysis.resolve(alloc.getResult()))
      aliases.insert(alias);
    for (size_t i = 0; i < aliases.size(); ++i)
      for (Operation *user : aliases[i].getUsers())
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            aliases.insert(result);

    memref::DeallocOp dealloc;
    Operation *last = nullptr;
    for (Value alias : aliases) {
      for (Operation *user : alias.getUsers()) {
        if (auto free = dyn_cast<memref::DeallocOp>(user)) {
          if (dealloc || free->getBlock() != block)
            return;
          dealloc = free;
          continue;
        }
        if (escapes(user, alias, symbols))
          return;
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top)
          return;
        if (!last || last->isBeforeInBlock(top))
          last = top;
      }
    }
    if (!dealloc || dealloc.getMemref() != alloc.getResult() || !last ||
        dealloc->isBeforeInBlock(last))
      return;
    dealloc->moveAfter(last);
  }
};

} // namespace
