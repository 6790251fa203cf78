//===- VariablesToRuntime.cpp - Variables, updates, row-sparse values -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_CONVERTPARALLAXVARIABLES
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// The buffer of a tensor, for a runtime call that only reads it.
Value readOnlyBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
  return unrankedMemRef(b, loc, buffer);
}

Value globalBuffer(OpBuilder &b, Location loc, SymbolTable &globals,
                   StringRef name) {
  auto global = globals.lookup<memref::GlobalOp>(name);
  return memref::GetGlobalOp::create(b, loc, global.getType(), name);
}

/// dense[indices[i], ...] += values[i, ...] for every row i.
Value scatterAddRows(OpBuilder &b, Location loc, RankedTensorType denseType,
                     Value indices, Value values) {
  Type element = denseType.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value dense =
      linalg::FillOp::create(
          b, loc, zero,
          tensor::EmptyOp::create(b, loc, denseType.getShape(), element)
              .getResult())
          .getResult(0);
  int64_t rank = denseType.getRank();
  int64_t rows = cast<RankedTensorType>(values.getType()).getDimSize(0);
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, rows);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, step, ValueRange{dense},
      [&](OpBuilder &nb, Location nloc, Value i, ValueRange iterArgs) {
        Value row = arith::IndexCastOp::create(
            nb, nloc, nb.getIndexType(),
            tensor::ExtractOp::create(nb, nloc, indices, ValueRange{i}));
        SmallVector<OpFoldResult> sourceOffsets(rank, nb.getIndexAttr(0));
        SmallVector<OpFoldResult> targetOffsets(rank, nb.getIndexAttr(0));
        sourceOffsets[0] = i;
        targetOffsets[0] = row;
        SmallVector<OpFoldResult> sizes, strides(rank, nb.getIndexAttr(1));
        sizes.push_back(nb.getIndexAttr(1));
        for (int64_t d = 1; d < rank; ++d)
          sizes.push_back(nb.getIndexAttr(denseType.getDimSize(d)));
        Value accumulated = iterArgs.front();
        Value source = tensor::ExtractSliceOp::create(
            nb, nloc, values, sourceOffsets, sizes, strides);
        Value target = tensor::ExtractSliceOp::create(
            nb, nloc, accumulated, targetOffsets, sizes, strides);
        Value sum = linalg::AddOp::create(nb, nloc, ValueRange{source, target},
                                          ValueRange{target})
                        .getResult(0);
        Value updated = tensor::InsertSliceOp::create(
            nb, nloc, sum, accumulated, targetOffsets, sizes, strides);
        scf::YieldOp::create(nb, nloc, updated);
      });
  return loop.getResult(0);
}

struct ConvertParallaxVariablesPass
    : parallax::impl::ConvertParallaxVariablesBase<
          ConvertParallaxVariablesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (VariableOp variable :
         llvm::make_early_inc_range(module.getOps<VariableOp>())) {
      OpBuilder builder(variable);
      RankedTensorType type = variable.getTensorType();
      auto global = memref::GlobalOp::create(
          builder, variable.getLoc(), variable.getSymName(),
          builder.getStringAttr("private"),
          MemRefType::get(type.getShape(), type.getElementType()),
          variable.getInitialValueAttr()
              ? Attribute(variable.getInitialValueAttr())
              : Attribute(builder.getUnitAttr()),
          /*constant=*/false, builder.getI64IntegerAttr(64));
      if (variable.getTrainable() || variable.getState())
        global->setAttr(ParallaxDialect::getVariableAttrName(),
                        builder.getStringAttr(
                            variable.getTrainable() ? "trainable" : "state"));
      variable.erase();
    }

    SymbolTable globals(module);
    WalkResult result = module.walk([&](Operation *op) -> WalkResult {
      OpBuilder builder(op);
      Location loc = op->getLoc();
      if (auto read = dyn_cast<ReadOp>(op)) {
        Value buffer = globalBuffer(builder, loc, globals, read.getVariable());
        read.replaceAllUsesWith(
            bufferization::ToTensorOp::create(builder, loc, read.getType(),
                                              buffer, /*restrict=*/true,
                                              /*writable=*/false)
                .getResult());
        read.erase();
        return WalkResult::advance();
      }
      if (auto toDense = dyn_cast<RowSparseToDenseOp>(op)) {
        auto pack = toDense.getInput().getDefiningOp<RowSparsePackOp>();
        if (!pack)
          return toDense.emitError(
              "cannot lower a row-sparse value not built by "
              "parallax.row_sparse.pack");
        toDense.replaceAllUsesWith(
            scatterAddRows(builder, loc, toDense.getResult().getType(),
                           pack.getIndices(), pack.getValues()));
        toDense.erase();
        return WalkResult::advance();
      }
      if (auto unpack = dyn_cast<RowSparseUnpackOp>(op)) {
        if (auto pack = unpack.getInput().getDefiningOp<RowSparsePackOp>()) {
          unpack.getIndices().replaceAllUsesWith(pack.getIndices());
          unpack.getValues().replaceAllUsesWith(pack.getValues());
        }
        return WalkResult::advance();
      }
      if (auto update = dyn_cast<UpdateOp>(op))
        return lowerUpdate(builder, module, globals, update);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // Packs and unpacks are dead now (their consumers were lowered or
    // forwarded).
    SmallVector<Operation *> rowSparse;
    module.walk([&](Operation *op) {
      if (isa<RowSparsePackOp, RowSparseUnpackOp>(op))
        rowSparse.push_back(op);
    });
    for (Operation *op : llvm::reverse(rowSparse)) {
      if (!op->use_empty()) {
        op->emitError("row-sparse value left with a use the lowering does "
                      "not handle");
        return signalPassFailure();
      }
      op->erase();
    }
  }

  /// parallax_rt_update_<kind>[_sparse]_f32(name, variable, state...,
  /// gradient | indices + rows, lr, momentum, beta1, beta2, epsilon,
  /// weight_decay, lr_decay, nesterov).
  WalkResult lowerUpdate(OpBuilder &builder, ModuleOp module,
                         SymbolTable &globals, UpdateOp update) {
    Location loc = update.getLoc();
    OptimizerAttr config = update.getOptimizer();
    auto variableType = cast<MemRefType>(
        globals.lookup<memref::GlobalOp>(update.getVariable()).getType());
    if (!variableType.getElementType().isF32())
      return update.emitError() << "the runtime updates f32 variables only, '"
                                << update.getVariable() << "' is "
                                << variableType.getElementType();
    SmallVector<Value> args{
        runtimeString(builder, module, loc, update.getVariable()),
        unrankedMemRef(
            builder, loc,
            globalBuffer(builder, loc, globals, update.getVariable()))};
    if (ArrayAttr state = update.getStateAttr())
      for (auto symbol : state.getAsRange<FlatSymbolRefAttr>())
        args.push_back(unrankedMemRef(
            builder, loc,
            globalBuffer(builder, loc, globals, symbol.getValue())));
    bool sparse = isa<RowSparseType>(update.getGradient().getType());
    if (sparse) {
      auto pack = update.getGradient().getDefiningOp<RowSparsePackOp>();
      if (!pack)
        return update.emitError("cannot lower a row-sparse gradient not built "
                                "by parallax.row_sparse.pack");
      args.push_back(readOnlyBuffer(builder, loc, pack.getIndices()));
      args.push_back(readOnlyBuffer(builder, loc, pack.getValues()));
    } else {
      args.push_back(readOnlyBuffer(builder, loc, update.getGradient()));
    }
    for (const APFloat &value :
         {config.getLr(), config.getMomentum(), config.getBeta1(),
          config.getBeta2(), config.getEpsilon(), config.getWeightDecay(),
          config.getLrDecay(), APFloat(config.getNesterov() ? 1.0 : 0.0)})
      args.push_back(arith::ConstantOp::create(
          builder, loc, builder.getF64FloatAttr(value.convertToDouble())));
    std::string callee =
        ("parallax_rt_update_" + stringifyOptimizerKind(config.getKind()) +
         (sparse ? "_sparse" : "") + "_f32")
            .str();
    declareRuntimeFunction(
        module, callee,
        builder.getFunctionType(ValueRange(args).getTypes(), {}));
    func::CallOp::create(builder, loc, callee, TypeRange{}, args);
    update.erase();
    return WalkResult::advance();
  }
};

} // namespace
