//===- VariablesToRuntime.cpp - Variables, updates, row-sparse values -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

Value globalBuffer(OpBuilder &b, Location loc, SymbolTable &globals,
                   StringRef name) {
  auto global = globals.lookup<memref::GlobalOp>(name);
  return memref::GetGlobalOp::create(b, loc, global.getType(), name);
}

/// dense[indices[i], ...] += values[i, ...] for every row i; negative
/// indices count from the end (as the gather they come from), any other
/// index outside the rows ends the program naming `op`.
Value scatterAddRows(OpBuilder &b, Location loc, Operation *op,
                     RankedTensorType denseType, Value indices, Value values) {
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
        Value raw = arith::IndexCastOp::create(
            nb, nloc, nb.getIndexType(),
            tensor::ExtractOp::create(nb, nloc, indices, ValueRange{i}));
        int64_t size = denseType.getDimSize(0);
        Value row = checkedIndex(nb, nloc, op, raw, size,
                                 "row id of a sparse gradient (" +
                                     std::to_string(size) + " rows)");
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

/// Partitions and first server of a parameter-server variable.
struct Shards {
  int64_t partitions, firstServer;
};

/// The shards of every variable on parameter servers, and of their
/// optimizer state: variables by decreasing size, each starting at the
/// server with the fewest bytes so far, its partitions on the servers
/// after it.
llvm::StringMap<Shards> assignShards(ModuleOp module) {
  int64_t workers = ParallaxDialect::getStaticWorkers(module).value_or(1);
  SmallVector<std::pair<int64_t, VariableOp>> byBytes;
  for (VariableOp variable : module.getOps<VariableOp>()) {
    DistributionAttr distribution = variable.getDistributionAttr();
    if (!distribution || distribution.getPlacement() != Placement::PS)
      continue;
    RankedTensorType type = variable.getTensorType();
    byBytes.push_back(
        {type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8),
         variable});
  }
  llvm::stable_sort(
      byBytes, [](const auto &a, const auto &b) { return a.first > b.first; });
  std::vector<double> load(std::max<int64_t>(workers, 1), 0.0);
  llvm::StringMap<Shards> shards;
  for (auto [bytes, variable] : byBytes) {
    int64_t partitions = variable.getDistributionAttr().getPartitions();
    int64_t first = std::min_element(load.begin(), load.end()) - load.begin();
    for (int64_t p = 0; p < partitions; ++p)
      load[(first + p) % load.size()] += double(bytes) / partitions;
    shards[variable.getSymName()] = {partitions, first};
  }
  module.walk([&](PushOp push) {
    auto it = shards.find(push.getVariable());
    if (it == shards.end() || !push.getStateAttr())
      return;
    Shards owner = it->second;
    for (auto symbol : push.getStateAttr().getAsRange<FlatSymbolRefAttr>())
      shards[symbol.getValue()] = owner;
  });
  return shards;
}

struct ConvertParallaxVariablesPass
    : parallax::impl::ConvertParallaxVariablesBase<
          ConvertParallaxVariablesPass> {
  llvm::StringMap<Shards> shards;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    shards = assignShards(module);
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
      auto it = shards.find(variable.getSymName());
      if (it != shards.end())
        global->setAttr(ParallaxDialect::getShardsAttrName(),
                        builder.getDenseI64ArrayAttr(
                            {it->second.partitions, it->second.firstServer}));
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
            scatterAddRows(builder, loc, toDense, toDense.getResult().getType(),
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
        return lowerOptimizerCall(builder, module, globals, update, {},
                                  /*push=*/false, update.getVariable(),
                                  update.getOptimizer(), update.getStateAttr(),
                                  update.getGradient());
      if (auto push = dyn_cast<PushOp>(op))
        return lowerPush(builder, module, globals, push);
      if (auto pull = dyn_cast<PullOp>(op))
        return lowerPull(builder, module, globals, pull);
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

  /// The variable's shards as call arguments (partitions, first server),
  /// or an error when `op` names a variable not on parameter servers.
  FailureOr<SmallVector<Value>>
  shardArguments(OpBuilder &builder, Operation *op, StringRef variable) {
    auto it = shards.find(variable);
    if (it == shards.end()) {
      op->emitError() << "'" << variable
                      << "' is not placed on parameter servers "
                         "(#parallax.distribution<ps, ...>)";
      return failure();
    }
    Location loc = op->getLoc();
    return SmallVector<Value>{
        arith::ConstantOp::create(
            builder, loc, builder.getI64IntegerAttr(it->second.partitions)),
        arith::ConstantOp::create(
            builder, loc, builder.getI64IntegerAttr(it->second.firstServer))};
  }

  /// The rule's update (or, with `push`, its push) entry point (name,
  /// leading..., variable, state..., gradient | ids + rows, lr, momentum,
  /// beta1, beta2, epsilon, weight_decay, lr_decay, nesterov), replacing
  /// `op`.
  WalkResult lowerOptimizerCall(OpBuilder &builder, ModuleOp module,
                                SymbolTable &globals, Operation *op,
                                ArrayRef<Value> leading, bool push,
                                StringRef variable, OptimizerAttr config,
                                ArrayAttr state, Value gradient) {
    Location loc = op->getLoc();
    auto variableType =
        cast<MemRefType>(globals.lookup<memref::GlobalOp>(variable).getType());
    if (!variableType.getElementType().isF32())
      return op->emitError()
             << "the runtime updates f32 variables only, '" << variable
             << "' is " << variableType.getElementType();
    SmallVector<Value> args{runtimeString(builder, module, loc, variable)};
    args.append(leading.begin(), leading.end());
    args.push_back(unrankedMemRef(
        builder, loc, globalBuffer(builder, loc, globals, variable)));
    if (state)
      for (auto symbol : state.getAsRange<FlatSymbolRefAttr>())
        args.push_back(unrankedMemRef(
            builder, loc,
            globalBuffer(builder, loc, globals, symbol.getValue())));
    bool sparse = isa<RowSparseType>(gradient.getType());
    if (sparse) {
      auto pack = gradient.getDefiningOp<RowSparsePackOp>();
      if (!pack)
        return op->emitError("cannot lower a row-sparse gradient not built "
                             "by parallax.row_sparse.pack");
      args.push_back(readOnlyBuffer(builder, loc, pack.getIndices()));
      args.push_back(readOnlyBuffer(builder, loc, pack.getValues()));
    } else {
      args.push_back(readOnlyBuffer(builder, loc, gradient));
    }
    args.push_back(runtimeHyperParameters(builder, module, loc, config));
    callRuntime(builder, module, loc,
                abi::optimizer(config.getKind(), push, sparse), args);
    op->erase();
    return WalkResult::advance();
  }

  /// The servers of the variable's rows apply the optimizer.
  WalkResult lowerPush(OpBuilder &builder, ModuleOp module,
                       SymbolTable &globals, PushOp push) {
    if (!push.getOptimizer())
      return push.emitError() << "the push of '" << push.getVariable()
                              << "' names no optimizer (run "
                                 "--parallax-optimizer first)";
    FailureOr<SmallVector<Value>> leading =
        shardArguments(builder, push, push.getVariable());
    if (failed(leading))
      return WalkResult::interrupt();
    return lowerOptimizerCall(builder, module, globals, push, *leading,
                              /*push=*/true, push.getVariable(),
                              *push.getOptimizer(), push.getStateAttr(),
                              push.getGradient());
  }

  /// Rows: a fresh buffer filled by parallax_rt_pull_rows_f32. The whole
  /// variable: parallax_rt_pull_f32 refreshes the global, then a view of it
  /// as for a read.
  WalkResult lowerPull(OpBuilder &builder, ModuleOp module,
                       SymbolTable &globals, PullOp pull) {
    Location loc = pull.getLoc();
    FailureOr<SmallVector<Value>> args =
        shardArguments(builder, pull, pull.getVariable());
    if (failed(args))
      return WalkResult::interrupt();
    RankedTensorType type = pull.getType();
    if (!type.getElementType().isF32())
      return pull.emitError()
             << "the runtime serves f32 variables only, '" << pull.getVariable()
             << "' is " << type.getElementType();
    args->insert(args->begin(),
                 runtimeString(builder, module, loc, pull.getVariable()));
    Value global = globalBuffer(builder, loc, globals, pull.getVariable());
    args->push_back(unrankedMemRef(builder, loc, global));
    Value result;
    if (Value ids = pull.getIndices()) {
      Value rows = freshBuffer(builder, loc, type);
      args->push_back(readOnlyBuffer(builder, loc, ids));
      args->push_back(unrankedMemRef(builder, loc, rows));
      result = bufferContents(builder, loc, rows);
    } else {
      result = bufferization::ToTensorOp::create(builder, loc, type, global,
                                                 /*restrict=*/true,
                                                 /*writable=*/false);
    }
    // The call fills the buffer the tensor views: it goes before the view.
    callRuntime(builder, module, loc,
                pull.getIndices() ? abi::Function::pull_rows_f32
                                  : abi::Function::pull_f32,
                *args)
        ->moveBefore(result.getDefiningOp());
    pull.replaceAllUsesWith(result);
    pull.erase();
    return WalkResult::advance();
  }
};

} // namespace
