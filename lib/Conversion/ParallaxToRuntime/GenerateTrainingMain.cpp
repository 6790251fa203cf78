//===- GenerateTrainingMain.cpp - The entry point of training programs ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXGENERATETRAININGMAIN
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct GenerateTrainingMainPass
    : parallax::impl::ParallaxGenerateTrainingMainBase<
          GenerateTrainingMainPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    func::FuncOp step = findEntryTarget(module, function, "train with");
    if (!step)
      return signalPassFailure();
    auto lossType = step.getNumResults()
                        ? dyn_cast<MemRefType>(step.getResultTypes().front())
                        : MemRefType();
    if (!lossType || lossType.getRank() != 0 ||
        !lossType.getElementType().isF32()) {
      step.emitError("the training step must return its f32 loss first, as "
                     "memref<f32> (bufferize the module first)");
      return signalPassFailure();
    }

    Location loc = step.getLoc();
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = builder.getI32Type();
    auto call = [&](abi::Function function, ValueRange args) {
      return callRuntime(builder, module, loc, function, args);
    };

    auto main = func::FuncOp::create(
        builder, loc, "main", builder.getFunctionType({i32, ptr}, {i32}));
    Block *body = main.addEntryBlock();
    builder.setInsertionPointToEnd(body);
    call(abi::Function::train_init, body->getArguments());
    // The plan's world size: one worker when nothing was distributed, any
    // number when it is read at run time.
    int64_t workers = PARALLAX_RT_WORKERS_ANY;
    if (!ParallaxDialect::hasWorldAtRunTime(module))
      workers = ParallaxDialect::getStaticWorkers(module).value_or(
          PARALLAX_RT_WORKERS_ONE);
    call(abi::Function::set_workers,
         {arith::ConstantOp::create(builder, loc,
                                    builder.getI64IntegerAttr(workers))});
    if (auto model = module->getAttrOfType<StringAttr>(
            ParallaxDialect::getModelAttrName()))
      call(abi::Function::set_model,
           {runtimeString(builder, module, loc, model.getValue())});

    for (auto global : module.getOps<memref::GlobalOp>()) {
      auto kind = global->getAttrOfType<StringAttr>(
          ParallaxDialect::getVariableAttrName());
      if (!kind)
        continue;
      Value buffer = memref::GetGlobalOp::create(builder, loc, global.getType(),
                                                 global.getSymName());
      Value isState = arith::ConstantOp::create(
          builder, loc, builder.getI32IntegerAttr(kind.getValue() == "state"));
      auto shards = global->getAttrOfType<DenseI64ArrayAttr>(
          ParallaxDialect::getShardsAttrName());
      auto i64Constant = [&](int64_t value) -> Value {
        return arith::ConstantOp::create(builder, loc,
                                         builder.getI64IntegerAttr(value));
      };
      call(abi::Function::register_variable,
           {runtimeString(builder, module, loc, global.getSymName()), isState,
            i64Constant(shards ? shards[0] : 0),
            i64Constant(shards ? shards[1] : 0),
            unrankedMemRef(builder, loc, buffer)});
      if (global->hasAttr(ParallaxDialect::getFromModelAttrName()))
        call(abi::Function::variable_from_model,
             {runtimeString(builder, module, loc, global.getSymName())});
    }

    SmallVector<Value> buffers;
    for (auto [i, type] : llvm::enumerate(step.getArgumentTypes())) {
      auto memrefType = dyn_cast<MemRefType>(type);
      if (auto offsets = step.getArgAttrOfType<StringAttr>(
              i, ParallaxDialect::getSegmentCountAttrName());
          offsets && memrefType) {
        Value buffer = memref::AllocOp::create(builder, loc, memrefType);
        call(abi::Function::segment_count,
             {runtimeString(builder, module, loc, offsets.getValue()),
              unrankedMemRef(builder, loc, buffer)});
        buffers.push_back(buffer);
        continue;
      }
      std::optional<abi::Function> registerInput;
      if (memrefType)
        registerInput = abi::registerInput(memrefType.getElementType());
      if (!memrefType || !memrefType.hasStaticShape() ||
          !memrefType.getLayout().isIdentity() || !registerInput) {
        step.emitError() << "argument " << i << " (" << type
                         << ") cannot be a training input: .npy data holds "
                            "statically shaped, contiguous f32, f64, f16, "
                            "i64, i32, i16, i8 or i1 tensors";
        return signalPassFailure();
      }
      std::string name = ("input" + Twine(i)).str();
      if (auto attr = step.getArgAttrOfType<StringAttr>(
              i, ParallaxDialect::getNameAttrName()))
        name = attr.getValue().str();
      declareInputRanges(builder, module, loc, step, i, name);
      declareSegmentedInput(builder, module, loc, step, i, name);
      Value buffer = memref::AllocOp::create(builder, loc, memrefType);
      call(*registerInput, {runtimeString(builder, module, loc, name),
                            unrankedMemRef(builder, loc, buffer)});
      buffers.push_back(buffer);
    }

    Value first = call(abi::Function::begin, {}).getResult(0);
    Value last = call(abi::Function::end_step, {}).getResult(0);
    Value one =
        arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(1));
    scf::ForOp::create(
        builder, loc, first, last, one, ValueRange{},
        [&](OpBuilder &b, Location nloc, Value index, ValueRange) {
          OpBuilder::InsertionGuard guard(builder);
          builder.setInsertionPoint(b.getInsertionBlock(),
                                    b.getInsertionPoint());
          call(abi::Function::load_batch, {index});
          auto result = func::CallOp::create(builder, nloc, step, buffers);
          Value loss = memref::LoadOp::create(
              builder, nloc, result.getResult(0), ValueRange{});
          call(abi::Function::step_end, {index, loss});
          scf::YieldOp::create(builder, nloc);
        });
    Value status = call(abi::Function::finish, {}).getResult(0);
    func::ReturnOp::create(builder, loc, status);

    dropEntryAttributes(step);
  }
};

} // namespace
