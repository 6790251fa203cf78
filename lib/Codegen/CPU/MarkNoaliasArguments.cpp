//===- MarkNoaliasArguments.cpp - llvm.noalias on kernel pointers ---------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXMARKNOALIASARGUMENTS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct MarkNoaliasArgumentsPass
    : parallax::impl::ParallaxMarkNoaliasArgumentsBase<
          MarkNoaliasArgumentsPass> {
  void runOnOperation() override {
    StringRef name = ParallaxDialect::getNoaliasPointersAttrName();
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp function) {
      auto positions = function->getAttrOfType<DenseI64ArrayAttr>(name);
      if (!positions)
        return WalkResult::advance();
      function->removeAttr(name);
      ArrayRef<Type> parameters = function.getFunctionType().getParams();
      for (int64_t position : positions.asArrayRef()) {
        if (position >= static_cast<int64_t>(parameters.size()) ||
            !isa<LLVM::LLVMPointerType>(parameters[position])) {
          function.emitError()
              << "internal error: '" << name << "' names argument " << position
              << ", which is not a pointer";
          return WalkResult::interrupt();
        }
        function.setArgAttr(position, LLVM::LLVMDialect::getNoAliasAttrName(),
                            UnitAttr::get(&getContext()));
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
