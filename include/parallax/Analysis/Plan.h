//===- Plan.h - Per-variable distribution plan ------------------*- C++ -*-===//
//
// Part of the Parallax project.
//
// Chooses, for each trained variable, how it is synchronised across the
// workers of a cluster, from its gradient kind and sparsity (set by
// --parallax-sparsity-analysis) and the cost model, and reports the plan
// (parallax-compile --plan-report / --print-plan; docs/cost-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_ANALYSIS_PLAN_H
#define PARALLAX_ANALYSIS_PLAN_H

#include "parallax/Analysis/CostModel.h"
#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <vector>

namespace mlir::parallax {

// Strategy (hybrid: the cheapest placement per variable, dense gradients
// AllReduce and sparse ones PS or AllGather; allreduce / ps: every variable
// one way) and Placement are the dialect's enums.

/// The one partition rule: one partition per server (a machine), never more
/// than the variable's rows. Every planner uses it: --print-plan,
/// --plan-report and --parallax-distribute (which records it in each
/// variable's distribution, kept by --parallax-partition).
int64_t defaultPartitions(const Cluster &cluster, int64_t rows);

struct VariablePlan {
  std::string name;
  std::vector<int64_t> shape;
  double bytes = 0;
  bool sparse = false;
  /// Fraction of the rows the whole step touches, and one machine's
  /// workers (at most alpha; what a machine pushes and pulls).
  double alpha = 1, machineAlpha = 1;
  Placement placement = Placement::AllReduce;
  int64_t partitions = 1;
  /// Predicted bytes per machine per step under each placement (PS with
  /// `partitions` partitions).
  Transfer allReduce, ps, allGather;
};

/// The traffic name of the allreduces of synchronised batch statistics.
constexpr llvm::StringLiteral kBatchStatisticsTraffic = "batch_statistics";

struct Plan {
  Cluster cluster;
  Strategy strategy = Strategy::Hybrid;
  std::vector<VariablePlan> variables;
  /// Variables the step assigns itself (BatchNorm running statistics):
  /// replicated, never synchronised (every worker computes the same).
  std::vector<std::string> statistics;
  /// The allreduces of the global batch's statistics (one per
  /// `parallax.batch_sum`, in sequence), whatever the strategy.
  Transfer batchStatistics;
  int64_t batchStatisticsValues = 0;

  /// Bytes per machine per step of the chosen placements.
  double bytes() const;
  /// The same under another strategy, for comparison.
  double bytesUnder(Strategy strategy) const;
  /// Bytes on the busiest worker's link within its machine (Transfer's
  /// localBytes), under `strategy`.
  double localBytesUnder(Strategy strategy) const;
  /// Communication rounds per step, one after another, the way the runtime
  /// runs them: variables of one placement share rounds (dense gradients
  /// travel in 25 MB buckets, a step's rows in one exchange each way), plus
  /// the batch statistics' and the mean loss's AllReduces.
  int64_t roundsUnder(Strategy strategy) const;
  /// Predicted communication time per step: bytes at the bandwidth (the
  /// NIC's and, where given, the local links', the slower of the two),
  /// plus one latency per round.
  double secondsUnder(Strategy strategy) const;
};

/// Plans every variable with a `sparsity` attribute in `module`, and the
/// batch statistics of its `parallax.batch_sum`s unless each worker keeps
/// its own (`localBatchStatistics`). Fails (with a diagnostic on the
/// module) when no variable has a sparsity attribute.
FailureOr<Plan> planDistribution(ModuleOp module, const Cluster &cluster,
                                 Strategy strategy,
                                 bool localBatchStatistics = false);

llvm::json::Value toJSON(const Plan &plan);
/// A table: one line per variable and the totals per strategy.
void printPlan(const Plan &plan, llvm::raw_ostream &os);

} // namespace mlir::parallax

#endif // PARALLAX_ANALYSIS_PLAN_H
