//===- Distribute.cpp - The training step for N workers -------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/Plan.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXDISTRIBUTE
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Builds right after the definition of `value` (or at the top of its
/// block for a block argument).
OpBuilder builderAfter(Value value) {
  if (Operation *def = value.getDefiningOp())
    return OpBuilder(def->getBlock(), std::next(Block::iterator(def)));
  return OpBuilder::atBlockBegin(cast<BlockArgument>(value).getOwner());
}

struct DistributePass : parallax::impl::ParallaxDistributeBase<DistributePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<Cluster> plannedCluster =
        workersAtRunTime ? runTimeCluster() : resolveCluster();
    if (failed(plannedCluster))
      return signalPassFailure();
    int64_t n = plannedCluster->workers();
    module->setAttr(ParallaxDialect::getWorldAttrName(),
                    WorldAttr::get(ctx, workersAtRunTime ? 0 : n));

    FailureOr<Plan> plan = planDistribution(module, *plannedCluster, strategy,
                                            localBatchStatistics);
    if (failed(plan))
      return signalPassFailure();
    if (workersAtRunTime)
      for (VariablePlan &v : plan->variables) {
        v.placement = ruleForAnyWorkers(v, strategy);
        v.partitions =
            v.placement == Placement::PS
                ? defaultPartitions(*plannedCluster,
                                    v.shape.empty() ? 1 : v.shape.front())
                : 1;
      }
    SymbolTable symbols(module);
    DenseMap<StringRef, const VariablePlan *> byName;
    for (const VariablePlan &v : plan->variables) {
      byName[v.name] = &v;
      auto variable = symbols.lookup<VariableOp>(v.name);
      variable.setDistributionAttr(
          DistributionAttr::get(ctx, v.placement, v.partitions));
    }

    // A plan for one worker has nothing to exchange: its gradients, rows
    // and batch sums are the worker's own, without collectives.
    bool alone = !workersAtRunTime && n == 1;
    SmallVector<ApplyGradientOp> applies;
    module.walk([&](ApplyGradientOp op) { applies.push_back(op); });
    for (ApplyGradientOp apply : applies) {
      const VariablePlan *v = byName.lookup(apply.getVariable());
      if (!v)
        continue; // not trained, or planned elsewhere
      switch (v->placement) {
      case Placement::AllReduce:
        averageDense(apply, alone);
        break;
      case Placement::AllGather:
        if (!alone)
          gatherSparse(apply, n);
        break;
      case Placement::PS:
        pushToServers(apply);
        break;
      }
    }
    pullFromServers(module, symbols);
    if (failed(checkBatchSumDevices(module, n)))
      return signalPassFailure();
    distributeBatchSums(module, alone);
  }

  /// Each batch_sum's `min_devices` against how the batch is split: `n`
  /// workers reducing their sums (0: a number known only at run time).
  LogicalResult checkBatchSumDevices(ModuleOp module, int64_t n) {
    WalkResult result = module.walk([&](BatchSumOp sum) {
      std::optional<int64_t> needed = sum.getMinDevices();
      if (!needed || *needed <= 1)
        return WalkResult::advance();
      InFlightDiagnostic error = sum.emitError()
                                 << "training-mode batch statistics with one "
                                    "value per channel on each worker need "
                                    "the sums of at least "
                                 << *needed << " workers";
      if (localBatchStatistics)
        error << ", not each worker's own (local batch statistics)";
      else if (workersAtRunTime)
        error << ": the number of workers is not known until the program "
                 "runs (compile with --workers N)";
      else if (n < *needed)
        error << ", not " << n;
      else {
        error.abandon();
        return WalkResult::advance();
      }
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  /// The sums over the global batch: one allreduce per batch_sum, or, with
  /// local statistics or one worker, each worker's own partial values.
  void distributeBatchSums(ModuleOp module, bool alone) {
    module.walk([&](BatchSumOp sum) {
      if (localBatchStatistics || alone) {
        sum.replaceAllUsesWith(sum.getInputs());
      } else {
        OpBuilder builder(sum);
        SmallVector<StringRef> names(sum.getNumOperands(),
                                     kBatchStatisticsTraffic);
        sum.replaceAllUsesWith(AllReduceOp::create(
            builder, sum.getLoc(), ReductionKind::Sum, sum.getInputs(),
            builder.getStrArrayAttr(names)));
      }
      sum.erase();
    });
  }

  /// The paper's placement, independent of the number of workers.
  static Placement ruleForAnyWorkers(const VariablePlan &v, Strategy strategy) {
    if (strategy == Strategy::AllReduce)
      return Placement::AllReduce;
    if (strategy == Strategy::PS || v.sparse)
      return Placement::PS;
    return Placement::AllReduce;
  }

  /// With workersAtRunTime: a cluster of runTimeServers machines, only for
  /// the partition counts; nothing may fix the number of workers.
  FailureOr<Cluster> runTimeCluster() {
    ModuleOp module = getOperation();
    if (workers || !cluster.empty() ||
        ParallaxDialect::getStaticWorkers(module)) {
      module.emitError("workers-at-run-time excludes workers, a cluster and "
                       "a parallax.world");
      return failure();
    }
    if (runTimeServers < 1) {
      module.emitError() << "workers-at-run-time-servers must be positive, got "
                         << static_cast<int64_t>(runTimeServers);
      return failure();
    }
    Cluster result;
    result.machines = static_cast<int64_t>(runTimeServers);
    return result;
  }

  /// The cluster from the options, checked against the module's world.
  FailureOr<Cluster> resolveCluster() {
    ModuleOp module = getOperation();
    std::optional<int64_t> world = ParallaxDialect::getStaticWorkers(module);
    int64_t n = workers ? static_cast<int64_t>(workers) : world.value_or(0);
    if (n < 0) {
      module.emitError() << "workers must be positive, got " << n;
      return failure();
    }
    Cluster result;
    if (!cluster.empty()) {
      std::string problem;
      std::optional<Cluster> parsed = Cluster::parse(cluster, result, problem);
      if (!parsed) {
        module.emitError() << "cluster: " << problem;
        return failure();
      }
      result = *parsed;
      if (n == 0)
        n = result.workers();
    }
    if (n == 0) {
      module.emitError("the number of workers is unknown: give workers=N, "
                       "a cluster, or a parallax.world");
      return failure();
    }
    if (cluster.empty())
      result.machines = n;
    if (result.workers() != n || (world && *world != n)) {
      module.emitError() << "the plan is for " << n << " workers, but the "
                         << (result.workers() != n ? "cluster has "
                                                   : "module's world has ")
                         << (result.workers() != n ? result.workers() : *world);
      return failure();
    }
    return result;
  }

  /// g -> allreduce mean g, where g is computed (`alone`: g itself, dense).
  void averageDense(ApplyGradientOp apply, bool alone) {
    Value gradient = apply.getGradient();
    if (isa<RowSparseType>(gradient.getType())) {
      OpBuilder builder = builderAfter(gradient);
      gradient = RowSparseToDenseOp::create(builder, apply.getLoc(), gradient);
      apply.getGradientMutable().assign(gradient);
    }
    if (alone)
      return;
    OpBuilder builder = builderAfter(gradient);
    auto allreduce = AllReduceOp::create(
        builder, apply.getLoc(), ReductionKind::Mean, ValueRange{gradient},
        builder.getStrArrayAttr({apply.getVariable()}));
    apply.getGradientMutable().assign(allreduce.getResult(0));
  }

  /// Every worker's rows, divided by the number of workers.
  void gatherSparse(ApplyGradientOp apply, int64_t n) {
    Value gradient = apply.getGradient();
    auto type = cast<RowSparseType>(gradient.getType());
    Location loc = apply.getLoc();
    OpBuilder builder = builderAfter(gradient);
    auto unpack = RowSparseUnpackOp::create(builder, loc, gradient);
    StringAttr variable = builder.getStringAttr(apply.getVariable());
    auto gatheredType = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(t.getShape());
      shape.front() *= n;
      return t.clone(shape);
    };
    Value ids =
        AllGatherOp::create(builder, loc, gatheredType(unpack.getIndices()),
                            unpack.getIndices(), variable);
    Value rows =
        AllGatherOp::create(builder, loc, gatheredType(unpack.getValues()),
                            unpack.getValues(), variable);
    auto elementType = cast<RankedTensorType>(rows.getType()).getElementType();
    Value scale = arith::ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(
            RankedTensorType::get({}, elementType),
            builder.getFloatAttr(elementType, 1.0 / n).getValue()));
    rows = MulOp::create(builder, loc, rows, scale);
    Value packed = RowSparsePackOp::create(
        builder, loc,
        RowSparseType::get(type.getDenseType(), type.getRows() * n), ids, rows);
    apply.getGradientMutable().assign(packed);
  }

  void pushToServers(ApplyGradientOp apply) {
    OpBuilder builder(apply);
    PushOp::create(builder, apply.getLoc(), apply.getVariableAttr(),
                   apply.getGradient(), OptimizerAttr(), ArrayAttr());
    apply.erase();
  }

  /// Reads of PS variables: a gather on axis 0 pulls the rows it reads;
  /// any other use pulls the whole variable.
  void pullFromServers(ModuleOp module, SymbolTable &symbols) {
    SmallVector<ReadOp> reads;
    module.walk([&](ReadOp read) {
      auto variable = symbols.lookup<VariableOp>(read.getVariable());
      if (variable && variable.getDistributionAttr() &&
          variable.getDistributionAttr().getPlacement() == Placement::PS)
        reads.push_back(read);
    });
    for (ReadOp read : reads) {
      Value whole;
      for (OpOperand &use : llvm::make_early_inc_range(read->getUses())) {
        auto gather = dyn_cast<GatherOp>(use.getOwner());
        if (gather && gather.getAxis() == 0 && use.getOperandNumber() == 0) {
          OpBuilder builder(gather);
          Location loc = gather.getLoc();
          auto idsType = cast<RankedTensorType>(gather.getIndices().getType());
          int64_t k = idsType.getNumElements();
          auto flatType = RankedTensorType::get({k}, idsType.getElementType());
          Value ids =
              ReshapeOp::create(builder, loc, flatType, gather.getIndices());
          if (!idsType.getElementType().isInteger(64))
            ids = CastOp::create(
                builder, loc, RankedTensorType::get({k}, builder.getI64Type()),
                ids);
          auto resultType = cast<RankedTensorType>(gather.getType());
          SmallVector<int64_t> rowShape(read.getType().getShape());
          rowShape.front() = k;
          Value rows = PullOp::create(builder, loc, resultType.clone(rowShape),
                                      read.getVariableAttr(), ids);
          gather.replaceAllUsesWith(
              ReshapeOp::create(builder, loc, resultType, rows).getResult());
          gather.erase();
          continue;
        }
        if (!whole) {
          OpBuilder builder(read);
          whole = PullOp::create(builder, read.getLoc(), read.getType(),
                                 read.getVariableAttr(), Value());
        }
        use.set(whole);
      }
      if (read.use_empty())
        read.erase();
    }
  }
};

} // namespace
