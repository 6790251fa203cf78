//===- StepGraph.cpp - The training step as one CUDA graph ----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "HostEffects.h"
#include "parallax/Codegen/GPU/Passes.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUSTEPGRAPH
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// Finds what keeps a step from being captured as one CUDA graph: the
/// step may only queue work on the program's stream (launches, copies,
/// fills, the runtime's stream-ordered calls), allocate and free, and
/// compute on the host from values that are the same every step
/// (constants, the step's arguments, the globals' buffers, the runtime's
/// number of workers and seed). Its host
/// waits for the stream must all be its last op's: a wait in the middle
/// means the host reads what the GPU computed, and may compute the next
/// launches from it.
class ObstacleFinder {
public:
  ObstacleFinder(ModuleOp module) : symbols(module) {
    // The globals whose value is a buffer's pointer: loaded each step, the
    // same every step (parallax-gpu-globals-to-buffers).
    module.walk([&](Operation *op) {
      if (auto slot = op->getAttrOfType<StringAttr>(
              parallax::ParallaxDialect::getGlobalBufferSlotAttrName()))
        slots.insert(slot);
    });
  }

  /// The first obstacle in `step`, or an empty string.
  std::string find(func::FuncOp step) {
    active.insert(step);
    std::string found = inRegion(step.getBody(), /*stepBody=*/true);
    active.erase(step);
    return found;
  }

private:
  std::string inRegion(Region &region, bool stepBody) {
    for (Block &block : region)
      for (Operation &op : block)
        if (std::string found = inOp(op, stepBody); !found.empty())
          return found;
    return {};
  }

  std::string inOp(Operation &op, bool stepBody) {
    if (auto wait = dyn_cast<gpu::WaitOp>(op)) {
      if (wait.getAsyncToken())
        return {};
      // The step's last wait, before it returns the loss: the runtime
      // launches the graph there.
      Operation *next = op.getNextNode();
      if (stepBody && next && isa<func::ReturnOp>(next))
        return {};
      return "the host waits for the GPU inside the step" + before(op) +
             where(op);
    }
    if (isa<gpu::LaunchFuncOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
            gpu::MemsetOp, func::ReturnOp>(op))
      return {};
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (std::optional<parallax::abi::Function> function =
              parallax::calledRuntimeFunction(&op)) {
        // The number of workers and the seed: a replay computes from the
        // captured answer, which every step would give again.
        if (parallax::abi::queuesOnStream(*function) ||
            parallax::abi::answersTheSameEachStep(*function))
          return {};
        return ("the step calls the runtime's " + call.getCallee() +
                " on the host")
                   .str() +
               where(op);
      }
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return ("the step calls " + call.getCallee() + " on the host").str() +
               where(op);
      if (!active.insert(callee).second)
        return ("the step calls " + call.getCallee() + " recursively").str();
      std::string found = inRegion(callee.getBody(), /*stepBody=*/false);
      active.erase(callee);
      return found;
    }
    // A buffer's pointer, loaded from its global's slot.
    if (auto load = dyn_cast<LLVM::LoadOp>(op))
      if (auto address = load.getAddr().getDefiningOp<LLVM::AddressOfOp>())
        if (slots.contains(address.getGlobalNameAttr().getAttr()))
          return {};
    if (op.getNumRegions() == 0 && isMemoryEffectFree(&op))
      return {};
    // Host loops and branches: their bodies follow the same rules.
    if (op.getNumRegions() != 0 &&
        op.hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
      for (Region &region : op.getRegions())
        if (std::string found = inRegion(region, /*stepBody=*/false);
            !found.empty())
          return found;
      return {};
    }
    return ("the host reads or writes memory inside the step (" +
            op.getName().getStringRef() + ")")
               .str() +
           where(op);
  }

  /// What the host does after waiting at `wait`: the first op after it
  /// that touches memory.
  static std::string before(Operation &wait) {
    Operation *next = wait.getNextNode();
    while (next && next->getNumRegions() == 0 && isMemoryEffectFree(next))
      next = next->getNextNode();
    if (!next)
      return {};
    if (auto call = dyn_cast<func::CallOp>(next))
      return (", before it calls " + call.getCallee()).str();
    return (", before " + next->getName().getStringRef()).str();
  }

  /// Where `op` comes from: the model's file and line, or its node.
  static std::string where(Operation &op) {
    if (auto name = dyn_cast<NameLoc>(op.getLoc()))
      return (" (node " + name.getName().strref() + ")").str();
    if (auto file = dyn_cast<FileLineColLoc>(op.getLoc()))
      return (" (" + file.getFilename().strref() + ":" + Twine(file.getLine()) +
              ")")
          .str();
    return {};
  }

  SymbolTable symbols;
  DenseSet<Attribute> slots;
  DenseSet<Operation *> active;
};

struct StepGraphPass : parallax::impl::ParallaxGPUStepGraphBase<StepGraphPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    // The training loop's step: the call right after the batch is loaded.
    SmallVector<std::pair<func::CallOp, Value>> steps;
    main.walk([&](func::CallOp call) {
      auto loaded = dyn_cast_or_null<func::CallOp>(call->getPrevNode());
      if (loaded && parallax::calledRuntimeFunction(loaded) ==
                        parallax::abi::Function::load_batch)
        steps.push_back({call, loaded.getOperand(0)});
    });
    ObstacleFinder finder(module);
    for (auto [call, step] : steps) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      std::string obstacle = !callee || callee.isExternal()
                                 ? "the step is not defined in the program"
                                 : finder.find(callee);
      OpBuilder builder(call);
      Location loc = call.getLoc();
      Value text = parallax::runtimeString(builder, module, loc, obstacle);
      parallax::callRuntime(builder, module, loc,
                            parallax::abi::Function::cuda_step_graph_begin,
                            {step, text});
      builder.setInsertionPointAfter(call);
      parallax::callRuntime(builder, module, loc,
                            parallax::abi::Function::cuda_step_graph_end, {});
    }
  }
};

} // namespace
