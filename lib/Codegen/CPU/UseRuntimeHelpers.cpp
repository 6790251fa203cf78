//===- UseRuntimeHelpers.cpp - Runtime helpers for MLIR's runner calls ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXUSERUNTIMEHELPERS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct UseRuntimeHelpersPass
    : parallax::impl::ParallaxUseRuntimeHelpersBase<UseRuntimeHelpersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // MLIR's runner-utility function, and the runtime entry point that
    // replaces it.
    struct Helper {
      StringRef runner;
      abi::Function runtime;
    } helpers[] = {{"memrefCopy", abi::Function::memref_copy}};
    for (const Helper &helper : helpers) {
      auto declaration = module.lookupSymbol<LLVM::LLVMFuncOp>(helper.runner);
      if (!declaration)
        continue;
      StringRef symbol = abi::symbol(helper.runtime);
      FunctionType expected = abi::type(helper.runtime, &getContext());
      LLVM::LLVMFunctionType actual = declaration.getFunctionType();
      if (actual.getParams() != expected.getInputs() ||
          !isa<LLVM::LLVMVoidType>(actual.getReturnType()) ||
          !expected.getResults().empty()) {
        declaration.emitError()
            << "'" << helper.runner << "' does not have the signature of "
            << symbol << " " << expected;
        return signalPassFailure();
      }
      if (module.lookupSymbol(symbol)) {
        declaration.emitError() << "'" << symbol << "' is already declared";
        return signalPassFailure();
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              declaration, StringAttr::get(&getContext(), symbol), module)))
        return signalPassFailure();
      SymbolTable::setSymbolName(declaration, symbol);
    }
  }
};

} // namespace
