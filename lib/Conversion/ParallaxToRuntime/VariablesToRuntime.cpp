//===- VariablesToRuntime.cpp - Variables, updates, row-sparse values -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RandomNumbers.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"
#include "parallax/Conversion/ParallaxToRuntime/UpdateLoops.h"

#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_CONVERTPARALLAXVARIABLES
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

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

/// What every pattern needs: the module, its globals (the variables,
/// lowered first) and the parameter-server shards.
struct Lowering {
  ModuleOp module;
  SymbolTable &globals;
  const llvm::StringMap<Shards> &shards;
  bool updatesAsLoops = false;

  Value globalBuffer(OpBuilder &b, Location loc, StringRef name) const {
    auto global = globals.lookup<memref::GlobalOp>(name);
    return memref::GetGlobalOp::create(b, loc, global.getType(), name);
  }

  /// A read-only view of a variable's `global` buffer as a tensor of
  /// `type`, never a copy.
  static Value view(OpBuilder &b, Location loc, Value global,
                    RankedTensorType type) {
    return bufferization::ToTensorOp::create(b, loc, type, global,
                                             /*restrict=*/true,
                                             /*writable=*/false);
  }

  /// The variable's shards as call arguments (partitions, first server);
  /// checkLowerable made sure it has them.
  SmallVector<Value> shardArguments(OpBuilder &builder, Operation *op,
                                    StringRef variable) const {
    auto it = shards.find(variable);
    assert(it != shards.end() && "checked before the conversion");
    Location loc = op->getLoc();
    return SmallVector<Value>{
        arith::ConstantOp::create(
            builder, loc, builder.getI64IntegerAttr(it->second.partitions)),
        arith::ConstantOp::create(
            builder, loc, builder.getI64IntegerAttr(it->second.firstServer))};
  }

  /// The rule's update (or, with `push`, its push) entry point (name,
  /// leading..., variable, state..., gradient | ids + rows,
  /// hyper-parameters). `gradient` is the converted gradient: one tensor,
  /// or a row-sparse value's indices and rows.
  void optimizerCall(OpBuilder &builder, Operation *op, ArrayRef<Value> leading,
                     bool push, StringRef variable, OptimizerAttr config,
                     ArrayAttr state, ValueRange gradient) const {
    Location loc = op->getLoc();
    SmallVector<Value> args{runtimeString(builder, module, loc, variable)};
    args.append(leading.begin(), leading.end());
    args.push_back(
        unrankedMemRef(builder, loc, globalBuffer(builder, loc, variable)));
    if (state)
      for (auto symbol : state.getAsRange<FlatSymbolRefAttr>())
        args.push_back(unrankedMemRef(
            builder, loc, globalBuffer(builder, loc, symbol.getValue())));
    for (Value part : gradient)
      args.push_back(readOnlyBuffer(builder, loc, part));
    args.push_back(runtimeHyperParameters(builder, module, loc, config));
    bool sparse = gradient.size() == 2;
    callRuntime(builder, module, loc,
                abi::optimizer(config.getKind(), push, sparse), args);
  }
};

/// A row-sparse value is its two tensors: the row indices and the rows.
struct RowSparseTypeConverter : TypeConverter {
  RowSparseTypeConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](RowSparseType type, SmallVectorImpl<Type> &parts) {
      parts.push_back(type.getIndicesType());
      parts.push_back(type.getValuesType());
      return success();
    });
  }
};

template <typename OpT> struct LoweringPattern : OpConversionPattern<OpT> {
  LoweringPattern(const TypeConverter &converter, MLIRContext *context,
                  const Lowering &lowering)
      : OpConversionPattern<OpT>(converter, context), lowering(lowering) {}
  const Lowering &lowering;
};

struct PackLowering : LoweringPattern<RowSparsePackOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(RowSparsePackOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> parts{adaptor.getIndices().front(),
                             adaptor.getValues().front()};
    rewriter.replaceOpWithMultiple(op, {parts});
    return success();
  }
};

struct UnpackLowering : LoweringPattern<RowSparseUnpackOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(RowSparseUnpackOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

struct ToDenseLowering : LoweringPattern<RowSparseToDenseOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(RowSparseToDenseOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange parts = adaptor.getInput();
    rewriter.replaceOp(op, scatterAddRows(rewriter, op.getLoc(), op,
                                          op.getResult().getType(), parts[0],
                                          parts[1]));
    return success();
  }
};

struct ReadLowering : LoweringPattern<ReadOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(ReadOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, Lowering::view(
                rewriter, op.getLoc(),
                lowering.globalBuffer(rewriter, op.getLoc(), op.getVariable()),
                op.getType()));
    return success();
  }
};

/// The value copied into the global. Autodiff put the assignment after
/// every use of the views of the variable, so the copy cannot change what
/// they read.
struct AssignLowering : LoweringPattern<AssignOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(AssignOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value global = lowering.globalBuffer(rewriter, loc, op.getVariable());
    Value value = bufferization::ToBufferOp::create(
        rewriter, loc, global.getType(), adaptor.getValue(),
        /*read_only=*/true);
    memref::CopyOp::create(rewriter, loc, value, global);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Counter-based draws keyed by the runtime's seed and example position.
struct RandomUniformLowering : LoweringPattern<RandomUniformOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(RandomUniformOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, emitRandomUniform(rewriter, lowering.module, op));
    return success();
  }
};

/// A replica's own update: the runtime's in-place update of the global, or
/// with updates-as-loops generated loops that do the same.
struct UpdateLowering : LoweringPattern<UpdateOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(UpdateOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (lowering.updatesAsLoops) {
      Location loc = op.getLoc();
      SmallVector<Value> state;
      if (ArrayAttr names = op.getStateAttr())
        for (auto name : names.getAsRange<FlatSymbolRefAttr>())
          state.push_back(
              lowering.globalBuffer(rewriter, loc, name.getValue()));
      Value weights = lowering.globalBuffer(rewriter, loc, op.getVariable());
      ValueRange gradient = adaptor.getGradient();
      if (gradient.size() == 1)
        emitDenseUpdateLoop(rewriter, lowering.module, loc, op.getOptimizer(),
                            weights, state, gradient.front());
      else
        emitSparseUpdateLoop(rewriter, lowering.module, loc, op.getVariable(),
                             op.getOptimizer(), weights, state, gradient[0],
                             gradient[1]);
      rewriter.eraseOp(op);
      return success();
    }
    lowering.optimizerCall(rewriter, op, {}, /*push=*/false, op.getVariable(),
                           op.getOptimizer(), op.getStateAttr(),
                           adaptor.getGradient());
    rewriter.eraseOp(op);
    return success();
  }
};

/// The servers of the variable's rows apply the optimizer.
struct PushLowering : LoweringPattern<PushOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(PushOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    lowering.optimizerCall(
        rewriter, op, lowering.shardArguments(rewriter, op, op.getVariable()),
        /*push=*/true, op.getVariable(), *op.getOptimizer(), op.getStateAttr(),
        adaptor.getGradient());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Rows: a fresh buffer that parallax_rt_pull_rows_request_f32 queues to
/// be filled (completePullRuns adds the call that fills it). The whole
/// variable: parallax_rt_pull_f32 refreshes the global, then a view of it
/// as for a read.
struct PullLowering : LoweringPattern<PullOp> {
  using LoweringPattern::LoweringPattern;
  LogicalResult
  matchAndRewrite(PullOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> args =
        lowering.shardArguments(rewriter, op, op.getVariable());
    RankedTensorType type = op.getType();
    args.insert(args.begin(), runtimeString(rewriter, lowering.module, loc,
                                            op.getVariable()));
    Value global = lowering.globalBuffer(rewriter, loc, op.getVariable());
    args.push_back(unrankedMemRef(rewriter, loc, global));
    Value ids = adaptor.getIndices();
    if (ids) {
      Value rows = freshBuffer(rewriter, loc, type);
      args.push_back(readOnlyBuffer(rewriter, loc, ids));
      args.push_back(unrankedMemRef(rewriter, loc, rows));
      callRuntime(rewriter, lowering.module, loc,
                  abi::Function::pull_rows_request_f32, args);
      rewriter.replaceOp(op, bufferContents(rewriter, loc, rows));
      return success();
    }
    // The call fills the buffer the tensor views: it goes before the view.
    callRuntime(rewriter, lowering.module, loc, abi::Function::pull_f32, args);
    rewriter.replaceOp(op, Lowering::view(rewriter, loc, global, type));
    return success();
  }
};

bool isCallOf(Operation *op, abi::Function function) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == abi::symbol(function);
}

/// Pulls of rows that follow each other, with only their buffers, ids and
/// constants between them, are fetched in one exchange: one
/// parallax_rt_pull_rows_complete follows the last request of each run,
/// before anything else, and the views of the pulled buffers move after
/// it (nothing reads a pulled buffer before it is filled).
void completePullRuns(ModuleOp module) {
  SmallVector<Operation *> requests;
  module.walk([&](Operation *op) {
    if (isCallOf(op, abi::Function::pull_rows_request_f32))
      requests.push_back(op);
  });
  llvm::DenseSet<Operation *> inRun;
  for (Operation *request : requests) {
    if (!inRun.insert(request).second)
      continue;
    SmallVector<Operation *> views;
    llvm::SmallPtrSet<Value, 8> viewed;
    Operation *next = request->getNextNode();
    for (; next; next = next->getNextNode()) {
      if (isCallOf(next, abi::Function::pull_rows_request_f32)) {
        inRun.insert(next);
        continue;
      }
      if (auto view = dyn_cast<bufferization::ToTensorOp>(next)) {
        views.push_back(view);
        viewed.insert(view.getResult());
        continue;
      }
      if (auto buffer = dyn_cast<bufferization::ToBufferOp>(next))
        if (!viewed.contains(buffer.getTensor()))
          continue;
      if (isa<memref::AllocOp, memref::CastOp, memref::GetGlobalOp,
              arith::ConstantOp, LLVM::AddressOfOp>(next))
        continue;
      break; // a block ends with its terminator: `next` is never null
    }
    OpBuilder builder(next);
    Operation *complete = callRuntime(builder, module, request->getLoc(),
                                      abi::Function::pull_rows_complete, {});
    for (Operation *view : llvm::reverse(views))
      view->moveAfter(complete);
  }
}

/// The runtime queues pushes, sparse and dense: one parallax_rt_push_send
/// after the last of each block sends them in one exchange, which goes on
/// beside the rest of the step (the dense buckets and updates) instead of
/// after it.
void sendPushesAfterLast(ModuleOp module) {
  llvm::SmallDenseSet<StringRef> pushes;
  for (uint32_t k = 0; k <= getMaxEnumValForOptimizerKind(); ++k)
    if (std::optional<OptimizerKind> kind = symbolizeOptimizerKind(k))
      for (bool sparse : {false, true})
        pushes.insert(
            abi::symbol(abi::optimizer(*kind, /*push=*/true, sparse)));
  // Ops of a block are visited in order: the last one recorded is last.
  llvm::MapVector<Block *, func::CallOp> lastPush;
  module.walk([&](func::CallOp call) {
    if (pushes.contains(call.getCallee()))
      lastPush[call->getBlock()] = call;
  });
  for (auto [block, push] : lastPush) {
    OpBuilder builder(push->getContext());
    builder.setInsertionPointAfter(push);
    callRuntime(builder, module, push.getLoc(), abi::Function::push_send, {});
  }
}

/// Variables become globals first (every pattern looks them up), then
/// reads, updates, pushes, pulls and row-sparse values are rewritten by
/// patterns under a 1:N type conversion: a row-sparse value is its indices
/// and rows wherever it flows (function boundaries and scf regions
/// included), with no need to find the pack that built it.
struct ConvertParallaxVariablesPass
    : parallax::impl::ConvertParallaxVariablesBase<
          ConvertParallaxVariablesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    llvm::StringMap<Shards> shards = assignShards(module);
    if (failed(checkLowerable(module, shards)))
      return signalPassFailure();
    lowerVariables(module, shards);
    SymbolTable globals(module);
    Lowering lowering{module, globals, shards, updatesAsLoops};

    RowSparseTypeConverter converter;
    RewritePatternSet patterns(ctx);
    patterns.add<PackLowering, UnpackLowering, ToDenseLowering, ReadLowering,
                 AssignLowering, RandomUniformLowering, UpdateLowering,
                 PushLowering, PullLowering>(converter, ctx, lowering);
    ConversionTarget target(*ctx);
    target.addIllegalOp<ReadOp, AssignOp, RandomUniformOp, UpdateOp, PushOp,
                        PullOp, RowSparsePackOp, RowSparseUnpackOp,
                        RowSparseToDenseOp>();
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    completePullRuns(module);
    sendPushesAfterLast(module);
  }

  /// What the runtime cannot do, diagnosed before anything is rewritten
  /// (the patterns then cannot fail).
  LogicalResult checkLowerable(ModuleOp module,
                               const llvm::StringMap<Shards> &shards) {
    SymbolTable variables(module);
    auto f32Variable = [&](Operation *op, StringRef name,
                           StringRef what) -> LogicalResult {
      auto variable = variables.lookup<VariableOp>(name);
      if (!variable)
        return op->emitError() << "no variable '" << name << "'";
      Type element = variable.getTensorType().getElementType();
      if (element.isF32())
        return success();
      return op->emitError()
             << "the runtime " << what << " f32 variables only, '" << name
             << "' is " << element;
    };
    auto onServers = [&](Operation *op, StringRef name) -> LogicalResult {
      if (shards.contains(name))
        return success();
      return op->emitError() << "'" << name
                             << "' is not placed on parameter servers "
                                "(#parallax.distribution<ps, ...>)";
    };
    WalkResult result = module.walk([&](Operation *op) -> WalkResult {
      if (auto update = dyn_cast<UpdateOp>(op))
        return f32Variable(op, update.getVariable(), "updates");
      if (auto push = dyn_cast<PushOp>(op)) {
        if (!push.getOptimizer())
          return push.emitError() << "the push of '" << push.getVariable()
                                  << "' names no optimizer (run "
                                     "--parallax-optimizer first)";
        if (failed(onServers(op, push.getVariable())))
          return failure();
        return f32Variable(op, push.getVariable(), "updates");
      }
      if (auto pull = dyn_cast<PullOp>(op)) {
        if (failed(onServers(op, pull.getVariable())))
          return failure();
        return f32Variable(op, pull.getVariable(), "serves");
      }
      return success();
    });
    return failure(result.wasInterrupted());
  }

  /// Every variable becomes a mutable, aligned memref.global marked for the
  /// entry point (checkpoints) and, on parameter servers, with its shards.
  void lowerVariables(ModuleOp module, const llvm::StringMap<Shards> &shards) {
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
      if (variable.getTrainable() || variable.getState() ||
          variable.getStatistics())
        global->setAttr(
            ParallaxDialect::getVariableAttrName(),
            builder.getStringAttr(variable.getTrainable() ? "trainable"
                                  : variable.getState()   ? "state"
                                                          : "statistics"));
      // Left uninitialized (zero pages, no bytes in the program): the
      // runtime loads it from the model when the program begins.
      if (variable->hasAttr(ParallaxDialect::getFromModelAttrName()))
        global->setAttr(ParallaxDialect::getFromModelAttrName(),
                        builder.getUnitAttr());
      auto it = shards.find(variable.getSymName());
      if (it != shards.end())
        global->setAttr(ParallaxDialect::getShardsAttrName(),
                        builder.getDenseI64ArrayAttr(
                            {it->second.partitions, it->second.firstServer}));
      variable.erase();
    }
  }
};

} // namespace
