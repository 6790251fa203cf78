//===- MergeKernelModules.cpp - One gpu.module for all kernels ------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUMERGEKERNELMODULES
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// `kernel` followed by the first node its location names, as a PTX
/// identifier ("train_step_kernel_85__features_features_5_BatchNormalization"):
/// profiles and compute-sanitizer report kernels by name.
std::string nameAfterNode(StringRef kernel, Location loc) {
  std::string node;
  loc->walk([&](Location inner) {
    auto name = dyn_cast<NameLoc>(inner);
    if (!name)
      return WalkResult::advance();
    node = name.getName().str();
    return WalkResult::interrupt();
  });
  std::string suffix;
  for (char c : node) {
    if (suffix.size() >= 64)
      break;
    if (llvm::isAlnum(c))
      suffix += c;
    else if (!suffix.empty() && suffix.back() != '_')
      suffix += '_';
  }
  while (!suffix.empty() && suffix.back() == '_')
    suffix.pop_back();
  return suffix.empty() ? kernel.str() : (kernel + "__" + suffix).str();
}

struct MergeKernelModulesPass
    : parallax::impl::ParallaxGPUMergeKernelModulesBase<
          MergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernels(module.getOps<gpu::GPUModuleOp>());
    if (kernels.size() < 2)
      return;
    MLIRContext *ctx = &getContext();
    OpBuilder builder(kernels.front());
    auto merged =
        gpu::GPUModuleOp::create(builder, kernels.front().getLoc(),
                                 (kernels.front().getName() + "s").str());
    SymbolTable mergedSymbols(merged);
    // Kernel module name -> (function name -> new function name).
    llvm::StringMap<llvm::StringMap<std::string>> renamed;
    for (gpu::GPUModuleOp kernel : kernels) {
      for (Operation &op : llvm::make_early_inc_range(kernel.getOps())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol) {
          op.moveBefore(merged.getBody(), merged.getBody()->end());
          continue;
        }
        std::string name = symbol.getName().str();
        if (isa<gpu::GPUFuncOp>(op) && cast<gpu::GPUFuncOp>(op).isKernel()) {
          name = nameAfterNode(kernel.getName(), op.getLoc());
          renamed[kernel.getName()][symbol.getName()] = name;
          symbol.setName(name);
        } else if (mergedSymbols.lookup(name)) {
          // A copy outlining made for each kernel that uses it.
          op.erase();
          continue;
        }
        op.remove();
        mergedSymbols.insert(&op);
      }
      kernel.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr old = launch.getKernel();
      auto byModule = renamed.find(old.getRootReference());
      if (byModule == renamed.end())
        return;
      auto byFunction = byModule->second.find(old.getLeafReference());
      if (byFunction == byModule->second.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          ctx, merged.getName(),
          {FlatSymbolRefAttr::get(ctx, byFunction->second)}));
    });
  }
};

} // namespace
