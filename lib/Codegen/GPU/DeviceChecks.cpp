//===- DeviceChecks.cpp - Failed run-time checks reported by kernels ------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/GPU/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUDEVICECHECKS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

constexpr StringLiteral indexCheck = "parallax_rt_index_out_of_range";

/// The NUL-terminated string an `llvm.mlir.addressof` points to.
FailureOr<std::string> messageOf(Value pointer) {
  auto address = pointer.getDefiningOp<LLVM::AddressOfOp>();
  if (!address)
    return failure();
  auto global = SymbolTable::lookupNearestSymbolFrom<LLVM::GlobalOp>(
      address, address.getGlobalNameAttr());
  auto text = global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull())
                     : StringAttr();
  if (!text)
    return failure();
  return text.getValue().take_until([](char c) { return c == '\0'; }).str();
}

struct DeviceChecksPass
    : parallax::impl::ParallaxGPUDeviceChecksBase<DeviceChecksPass> {
  void runOnOperation() override {
    SmallVector<func::CallOp> calls;
    getOperation()->walk([&](gpu::LaunchOp launch) {
      launch.walk([&](func::CallOp call) { calls.push_back(call); });
    });
    for (func::CallOp call : calls) {
      if (call.getCallee() != indexCheck) {
        call.emitOpError("inside a kernel calls '")
            << call.getCallee() << "', a host function";
        return signalPassFailure();
      }
      FailureOr<std::string> where = messageOf(call.getOperand(0));
      if (failed(where)) {
        call.emitOpError("'s message is not a constant string");
        return signalPassFailure();
      }
      // printf's format: a '%' of the message is a literal one.
      std::string format;
      for (char c : *where)
        format += c == '%' ? std::string("%%") : std::string(1, c);
      OpBuilder builder(call);
      gpu::PrintfOp::create(builder, call.getLoc(),
                            "error: " + format +
                                ": index %lld is outside [%lld, %lld)\n",
                            call.getOperands().drop_front());
      LLVM::Trap::create(builder, call.getLoc());
      call.erase();
    }
  }
};

} // namespace
