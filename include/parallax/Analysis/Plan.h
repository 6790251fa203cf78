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

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <vector>

namespace mlir::parallax {

/// hybrid: the cheapest placement per variable (dense gradients: AllReduce;
/// sparse: PS or AllGather); allreduce / ps: every variable one way.
enum class Strategy { Hybrid, AllReduce, PS };

enum class PlacementKind { AllReduce, PS, AllGather };

struct VariablePlan {
  std::string name;
  std::vector<int64_t> shape;
  double bytes = 0;
  bool sparse = false;
  double alpha = 1;
  PlacementKind placement = PlacementKind::AllReduce;
  int64_t partitions = 1;
  /// Predicted bytes per machine per step under each placement (PS with
  /// `partitions` partitions).
  Transfer allReduce, ps, allGather;
};

struct Plan {
  Cluster cluster;
  Strategy strategy = Strategy::Hybrid;
  std::vector<VariablePlan> variables;

  /// Bytes per machine per step of the chosen placements.
  double bytes() const;
  /// The same under another strategy, for comparison.
  double bytesUnder(Strategy strategy) const;
  /// Predicted communication time per step: bytes at the bandwidth, plus
  /// the latency of the rounds, which variables of one placement share
  /// (dense gradients travel in 25 MB buckets).
  double secondsUnder(Strategy strategy) const;
};

/// Plans every variable with a `sparsity` attribute in `module`. Fails
/// (with a diagnostic on the module) when none has one.
FailureOr<Plan> planDistribution(ModuleOp module, const Cluster &cluster,
                                 Strategy strategy);

llvm::json::Value toJSON(const Plan &plan);
/// A table: one line per variable and the totals per strategy.
void printPlan(const Plan &plan, llvm::raw_ostream &os);

const char *stringify(Strategy strategy);
const char *stringify(PlacementKind placement);

} // namespace mlir::parallax

#endif // PARALLAX_ANALYSIS_PLAN_H
