//===- GlobalsToBuffers.cpp - Globals kept in buffers allocated at start --===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "HostEffects.h"
#include "parallax/Codegen/GPU/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGPUGLOBALSTOBUFFERS
#include "parallax/Codegen/GPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;

namespace {

/// The buffer in `slot` as a memref of `type` (contiguous, offset 0): the
/// LLVM lowering's own descriptor of the pointer, cast to the memref type
/// (the cast folds away when memrefs are lowered to LLVM).
Value viewOfSlot(OpBuilder &b, Location loc, LLVM::GlobalOp slot,
                 MemRefType type, const LLVMTypeConverter &converter) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value address = LLVM::AddressOfOp::create(b, loc, slot);
  Value pointer = LLVM::LoadOp::create(b, loc, ptr, address);
  Value descriptor =
      MemRefDescriptor::fromStaticShape(b, loc, converter, type, pointer);
  auto view = UnrealizedConversionCastOp::create(b, loc, type, descriptor);
  view->setAttr(parallax::ParallaxDialect::getGlobalBufferSlotAttrName(),
                slot.getSymNameAttr());
  return view.getResult(0);
}

/// The op after main's call of the runtime's command-line parsing
/// (training or inference), where the globals' buffers are allocated: so
/// `--help` and a bad argument are answered before the program takes its
/// memory. Null (allocate first) when main reads a global before it.
Operation *commandLineParsed(func::FuncOp main) {
  for (Operation &op : main.getBody().front()) {
    if (op.walk([](memref::GetGlobalOp) {
            return WalkResult::interrupt();
          }).wasInterrupted())
      return nullptr;
    std::optional<parallax::abi::Function> function =
        parallax::calledRuntimeFunction(&op);
    if (function && (*function == parallax::abi::Function::train_init ||
                     *function == parallax::abi::Function::init))
      return op.getNextNode();
  }
  return nullptr;
}

struct GlobalsToBuffersPass
    : parallax::impl::ParallaxGPUGlobalsToBuffersBase<GlobalsToBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("parallax-gpu-globals-to-buffers needs the program's "
                       "main (run it after the entry point is generated)");
      return signalPassFailure();
    }
    SmallVector<memref::GlobalOp> globals(module.getOps<memref::GlobalOp>());
    if (globals.empty())
      return;
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    OpBuilder init = OpBuilder::atBlockBegin(&main.getBody().front());
    if (Operation *parsed = commandLineParsed(main))
      init.setInsertionPoint(parsed);
    SymbolTable symbols(module);
    llvm::StringMap<std::pair<LLVM::GlobalOp, MemRefType>> slots;
    for (memref::GlobalOp global : globals) {
      MemRefType type = global.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
        global.emitOpError("is not a statically shaped, contiguous buffer");
        return signalPassFailure();
      }
      OpBuilder builder(global);
      auto slot = LLVM::GlobalOp::create(
          builder, global.getLoc(), ptr, /*isConstant=*/false,
          LLVM::Linkage::Internal, (global.getSymName() + ".buffer").str(),
          Attribute());
      Block *body = new Block();
      slot.getInitializerRegion().push_back(body);
      OpBuilder initializer = OpBuilder::atBlockBegin(body);
      LLVM::ReturnOp::create(
          initializer, global.getLoc(),
          LLVM::ZeroOp::create(initializer, global.getLoc(), ptr).getResult());
      symbols.insert(slot);
      slots[global.getSymName()] = {slot, type};

      // At the start of main: the buffer, its initial value, the slot.
      Location loc = global.getLoc();
      auto buffer = memref::AllocOp::create(
          init, loc, type,
          init.getI64IntegerAttr(global.getAlignment().value_or(64)));
      buffer->setAttr(parallax::ParallaxDialect::getGlobalBufferSlotAttrName(),
                      slot.getSymNameAttr());
      if (global.getInitialValue() && !global.isUninitialized())
        memref::CopyOp::create(
            init, loc,
            memref::GetGlobalOp::create(init, loc, type, global.getSymName()),
            buffer);
      Value address =
          memref::ExtractAlignedPointerAsIndexOp::create(init, loc, buffer);
      Value integer =
          arith::IndexCastOp::create(init, loc, init.getI64Type(), address);
      Value pointer = LLVM::IntToPtrOp::create(init, loc, ptr, integer);
      LLVM::StoreOp::create(init, loc, pointer,
                            LLVM::AddressOfOp::create(init, loc, slot));
    }
    // Every other read of a global reads its buffer.
    Operation *firstUse = &*init.getInsertionPoint();
    SmallVector<memref::GetGlobalOp> reads;
    module.walk([&](memref::GetGlobalOp read) {
      if (read->getBlock() != firstUse->getBlock() ||
          !read->isBeforeInBlock(firstUse))
        reads.push_back(read);
    });
    // Each function loads each slot once, first: a load is a host read,
    // before which gpu-async-region would wait for the stream.
    LLVMTypeConverter converter(ctx);
    llvm::DenseMap<std::pair<Operation *, StringRef>, Value> views;
    for (memref::GetGlobalOp read : reads) {
      auto [slot, type] = slots.lookup(read.getName());
      auto function = read->getParentOfType<FunctionOpInterface>();
      Value &view = views[{function, read.getName()}];
      if (!view) {
        OpBuilder builder = OpBuilder::atBlockBegin(
            function == main ? init.getInsertionBlock()
                             : &function.getFunctionBody().front());
        if (function == main)
          builder.setInsertionPoint(firstUse);
        view = viewOfSlot(builder, read.getLoc(), slot, type, converter);
      }
      read.replaceAllUsesWith(view);
      read.erase();
    }
    // Variables hold nothing until the runtime loads them: their storage
    // is the buffer alone.
    for (memref::GlobalOp global : globals)
      if (global.isUninitialized())
        global.erase();
  }
};

} // namespace
