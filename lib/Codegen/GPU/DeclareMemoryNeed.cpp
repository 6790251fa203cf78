//===- DeclareMemoryNeed.cpp - The GPU memory a program's buffers take ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

#include <map>

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUDECLAREMEMORYNEED
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// A block the runtime hands out and keeps: its bytes and whether it is
/// managed memory.
using BlockKind = std::pair<int64_t, bool>;

/// The bytes mgpuMemAlloc is asked for: the elements as the LLVM lowering
/// stores them (i1 as a byte, index as 64 bits); nullopt for a dynamic
/// shape.
std::optional<int64_t> bytesOf(MemRefType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  Type element = type.getElementType();
  int64_t elementBytes = 8;
  if (element.isIntOrFloat())
    elementBytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  else if (!element.isIndex())
    return std::nullopt;
  return type.getNumElements() * elementBytes;
}

/// Follows the program's allocations in the order they run, counting,
/// for each size and kind, the most blocks live at once.
class Simulation {
public:
  explicit Simulation(SymbolTable &symbols) : symbols(symbols) {}

  void run(Region &region) {
    for (Block &block : region)
      for (Operation &op : block)
        visit(op);
  }

  int64_t need() const {
    int64_t bytes = 0;
    for (const auto &[kind, most] : mostLive)
      bytes += kind.first * most;
    return bytes;
  }

private:
  void visit(Operation &op) {
    if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      std::optional<int64_t> bytes = bytesOf(alloc.getType());
      if (!bytes || *bytes == 0)
        return;
      BlockKind kind{*bytes, alloc.getHostShared()};
      int64_t &now = live[kind];
      ++now;
      mostLive[kind] = std::max(mostLive[kind], now);
      blocks[alloc.getMemref()] = kind;
      return;
    }
    if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
      auto block = blocks.find(dealloc.getMemref());
      if (block != blocks.end() && live[block->second] > 0)
        --live[block->second];
      return;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal() && active.insert(callee).second) {
        // The callee frees what it is handed as the caller's block.
        for (auto [operand, parameter] :
             llvm::zip(call.getOperands(), callee.getArguments())) {
          auto block = blocks.find(operand);
          if (block != blocks.end()) {
            BlockKind kind = block->second; // before the map may grow
            blocks[parameter] = kind;
          }
        }
        run(callee.getBody());
        active.erase(callee);
      }
      return;
    }
    // Loop and branch bodies once: a step frees what it allocates.
    for (Region &region : op.getRegions())
      if (!isa<gpu::LaunchOp>(op))
        run(region);
  }

  SymbolTable &symbols;
  std::map<BlockKind, int64_t> live, mostLive;
  DenseMap<Value, BlockKind> blocks;
  DenseSet<Operation *> active;
};

struct DeclareMemoryNeedPass
    : parallax::impl::ParallaxGPUDeclareMemoryNeedBase<DeclareMemoryNeedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("parallax-gpu-declare-memory-need needs the "
                       "program's main");
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    Simulation simulation(symbols);
    simulation.run(main.getBody());
    // Before main's first allocation (after its command line is parsed).
    Block &entry = main.getBody().front();
    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    for (Operation &op : entry)
      if (isa<gpu::AllocOp>(op)) {
        builder.setInsertionPoint(&op);
        break;
      }
    Value bytes = arith::ConstantIntOp::create(builder, main.getLoc(),
                                               simulation.need(), 64);
    parallax::callRuntime(builder, module, main.getLoc(),
                          parallax::abi::Function::cuda_memory_need, bytes);
  }
};

} // namespace
