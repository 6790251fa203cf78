//===- GenerateInferenceMain.cpp - The entry point of inference programs --===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGENERATEINFERENCEMAIN
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct GenerateInferenceMainPass
    : parallax::impl::ParallaxGenerateInferenceMainBase<
          GenerateInferenceMainPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    func::FuncOp target = findEntryTarget(module, function, "run");
    if (!target)
      return signalPassFailure();
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    Location loc = target.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);

    auto call = [&](OpBuilder &b, abi::Function function, ValueRange args) {
      return callRuntime(b, module, loc, function, args);
    };
    auto cString = [&](OpBuilder &b, StringRef text) {
      return runtimeString(b, module, loc, text);
    };
    // The memref<*xT> and the runtime function for one argument or result.
    auto io = [&](Value value, StringRef what, unsigned index, StringRef name,
                  bool read) -> LogicalResult {
      auto type = dyn_cast<MemRefType>(value.getType());
      std::optional<abi::Function> callee;
      if (type)
        callee = read ? abi::readInput(type.getElementType())
                      : abi::writeOutput(type.getElementType());
      if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !callee)
        return target.emitError()
               << what << " " << index << " (" << value.getType()
               << ") is not supported as a program input or output: .npy "
                  "files hold statically shaped, contiguous f32, f64, f16, "
                  "i64, i32, i16, i8 or i1 data";
      call(builder, *callee,
           {cString(builder, name), unrankedMemRef(builder, loc, value)});
      return success();
    };
    auto nameOf = [&](DictionaryAttr attrs, StringRef what, unsigned i) {
      if (attrs)
        if (auto name =
                attrs.getAs<StringAttr>(ParallaxDialect::getNameAttrName()))
          return name.getValue().str();
      return (what + Twine(i)).str();
    };

    auto mainType = builder.getFunctionType({builder.getI32Type(), ptr},
                                            {builder.getI32Type()});
    auto main = func::FuncOp::create(builder, loc, "main", mainType);
    Block *body = main.addEntryBlock();
    builder.setInsertionPointToEnd(body);
    call(builder, abi::Function::init, body->getArguments());

    SmallVector<Value> arguments;
    for (auto [i, type] : llvm::enumerate(target.getArgumentTypes())) {
      auto memrefType = dyn_cast<MemRefType>(type);
      if (!memrefType)
        return emitBadSignature(target, "argument", i, type);
      Value buffer = memref::AllocOp::create(builder, loc, memrefType);
      arguments.push_back(buffer);
      if (auto offsets = target.getArgAttrOfType<StringAttr>(
              i, ParallaxDialect::getSegmentCountAttrName())) {
        call(builder, abi::Function::segment_count,
             {cString(builder, offsets.getValue()),
              unrankedMemRef(builder, loc, buffer)});
        continue;
      }
      std::string name = nameOf(target.getArgAttrDict(i), "input", i);
      declareInputRanges(builder, module, loc, target, i, name);
      declareSegmentedInput(builder, module, loc, target, i, name);
      if (failed(io(buffer, "argument", i, name, true)))
        return signalPassFailure();
    }
    // The model's own time, reported by the runtime when PARALLAX_TIMING
    // is set (benchmarks time compute apart from .npy I/O). With --repeat N
    // the first N-1 runs' results are dropped; the last run's are written.
    auto timedCall = [&](OpBuilder &b) {
      Value start = call(b, abi::Function::now, {}).getResult(0);
      auto run = func::CallOp::create(b, loc, target, arguments);
      Value end = call(b, abi::Function::now, {}).getResult(0);
      call(b, abi::Function::report_time, {cString(b, function), start, end});
      return run;
    };
    Value repeat = call(builder, abi::Function::repeat_count, {}).getResult(0);
    repeat = arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                        repeat);
    Value one = arith::ConstantIndexOp::create(builder, loc, 1);
    scf::ForOp::create(builder, loc, one, repeat, one, ValueRange{},
                       [&](OpBuilder &b, Location, Value, ValueRange) {
                         timedCall(b);
                         scf::YieldOp::create(b, loc);
                       });
    auto run = timedCall(builder);
    for (auto [i, result] : llvm::enumerate(run.getResults()))
      if (failed(io(result, "result", i,
                    nameOf(target.getResultAttrDict(i), "output", i), false)))
        return signalPassFailure();
    Value zero =
        arith::ConstantOp::create(builder, loc, builder.getI32IntegerAttr(0));
    func::ReturnOp::create(builder, loc, zero);

    dropEntryAttributes(target);
  }

  void emitBadSignature(func::FuncOp target, StringRef what, unsigned i,
                        Type type) {
    target.emitError() << what << " " << i << " has type " << type
                       << ": the module must be bufferized first";
    signalPassFailure();
  }
};

} // namespace
