//===- Plan.cpp - Per-variable distribution plan --------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/Plan.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parallax;

int64_t mlir::parallax::defaultPartitions(const Cluster &cluster,
                                          int64_t rows) {
  return std::max<int64_t>(1, std::min(cluster.machines, rows));
}

/// The placement `strategy` gives `v`: forced, or the cheapest by the cost
/// model (dense gradients always AllReduce: balanced PS moves the same
/// bytes with a server hot spot). A sparse gradient goes to AllReduce only
/// when that is strictly cheaper, as AllReduce densifies it and updates
/// every row: at a tie (one worker, where nothing moves) PS keeps the
/// row-wise update. Other ties go to PS.
static Placement choose(const VariablePlan &v, Strategy strategy,
                        const Cluster &cluster) {
  if (strategy == Strategy::AllReduce)
    return Placement::AllReduce;
  if (strategy == Strategy::PS)
    return Placement::PS;
  if (!v.sparse)
    return Placement::AllReduce;
  double ps = v.ps.seconds(cluster), allGather = v.allGather.seconds(cluster);
  double allReduce = v.allReduce.seconds(cluster);
  if (allReduce < ps && allReduce < allGather)
    return Placement::AllReduce;
  return ps <= allGather ? Placement::PS : Placement::AllGather;
}

static const Transfer &transferOf(const VariablePlan &v, Placement p) {
  return p == Placement::AllReduce ? v.allReduce
         : p == Placement::PS      ? v.ps
                                   : v.allGather;
}

double Plan::bytes() const {
  double total = batchStatistics.bytes;
  for (const VariablePlan &v : variables)
    total += transferOf(v, v.placement).bytes;
  return total;
}

double Plan::bytesUnder(Strategy other) const {
  double total = batchStatistics.bytes;
  for (const VariablePlan &v : variables)
    total += transferOf(v, choose(v, other, cluster)).bytes;
  return total;
}

double Plan::secondsUnder(Strategy other) const {
  // Bytes add up; latency is paid per round, and the variables of one
  // placement share rounds: dense gradients travel in 25 MB buckets (one
  // ring per bucket), pushes, pulls and allgathers of a step all at once.
  constexpr double kBucketBytes = 25 << 20;
  double bytes = 0, allReduceBytes = 0;
  int64_t rounds[3] = {0, 0, 0};
  for (const VariablePlan &v : variables) {
    Placement p = choose(v, other, cluster);
    const Transfer &t = transferOf(v, p);
    bytes += t.bytes;
    if (p == Placement::AllReduce)
      allReduceBytes += v.bytes;
    int64_t &r = rounds[static_cast<int>(p)];
    r = std::max(r, t.rounds);
  }
  double buckets = std::max(1.0, std::ceil(allReduceBytes / kBucketBytes));
  double latencyRounds =
      rounds[static_cast<int>(Placement::AllReduce)] * buckets +
      rounds[static_cast<int>(Placement::PS)] +
      rounds[static_cast<int>(Placement::AllGather)];
  return bytes / 2 / cluster.bandwidth + latencyRounds * cluster.latency +
         batchStatistics.seconds(cluster);
}

FailureOr<Plan> mlir::parallax::planDistribution(ModuleOp module,
                                                 const Cluster &cluster,
                                                 Strategy strategy,
                                                 bool localBatchStatistics) {
  Plan plan;
  plan.cluster = cluster;
  plan.strategy = strategy;
  for (auto variable : module.getOps<VariableOp>()) {
    SparsityAttr sparsity = variable.getSparsityAttr();
    if (!sparsity)
      continue;
    RankedTensorType type = variable.getTensorType();
    VariablePlan v;
    v.name = variable.getSymName().str();
    v.shape.assign(type.getShape().begin(), type.getShape().end());
    v.bytes = static_cast<double>(type.getNumElements()) *
              type.getElementTypeBitWidth() / 8;
    v.sparse = sparsity.getGradient() == GradientKind::Sparse;
    v.alpha = sparsity.getAlpha().convertToDouble();
    int64_t rows = type.getRank() ? type.getDimSize(0) : 1;
    v.partitions = defaultPartitions(cluster, rows);
    v.allReduce = allReduceTransfer(cluster, v.bytes);
    v.ps = psTransfer(cluster, v.bytes, v.alpha, v.partitions);
    v.allGather = allGatherTransfer(cluster, v.bytes, v.alpha);
    v.placement = choose(v, strategy, cluster);
    if (v.placement != Placement::PS)
      v.partitions = 1;
    plan.variables.push_back(std::move(v));
  }
  for (auto variable : module.getOps<VariableOp>())
    if (variable.getStatistics())
      plan.statistics.push_back(variable.getSymName().str());
  if (!localBatchStatistics)
    module.walk([&](BatchSumOp sum) {
      int64_t values = 0, bytes = 0;
      for (Type type : sum.getInputs().getTypes()) {
        auto tensor = cast<RankedTensorType>(type);
        values += tensor.getNumElements();
        bytes += tensor.getNumElements() * tensor.getElementTypeBitWidth() / 8;
      }
      Transfer t = allReduceTransfer(cluster, static_cast<double>(bytes));
      plan.batchStatistics.bytes += t.bytes;
      plan.batchStatistics.rounds += t.rounds;
      plan.batchStatisticsValues += values;
    });
  if (plan.variables.empty()) {
    module.emitError("nothing to plan: no variable has a gradient (run "
                     "--parallax-autodiff and --parallax-sparsity-analysis)");
    return failure();
  }
  return plan;
}

llvm::json::Value mlir::parallax::toJSON(const Plan &plan) {
  llvm::json::Array variables;
  for (const VariablePlan &v : plan.variables) {
    variables.push_back(llvm::json::Object{
        {"name", v.name},
        {"shape", llvm::json::Array(v.shape)},
        {"bytes", v.bytes},
        {"gradient", v.sparse ? "sparse" : "dense"},
        {"alpha", v.alpha},
        {"placement", stringifyPlacement(v.placement).data()},
        {"partitions", v.partitions},
        {"predicted_bytes_per_step",
         llvm::json::Object{{"allreduce", v.allReduce.bytes},
                            {"ps", v.ps.bytes},
                            {"allgather", v.allGather.bytes}}},
    });
  }
  llvm::json::Object totals;
  for (Strategy s : {Strategy::Hybrid, Strategy::AllReduce, Strategy::PS})
    totals[stringifyStrategy(s).data()] =
        llvm::json::Object{{"bytes_per_step", plan.bytesUnder(s)},
                           {"seconds_per_step", plan.secondsUnder(s)}};
  const Cluster &c = plan.cluster;
  return llvm::json::Object{
      {"workers", c.workers()},
      {"cluster",
       llvm::json::Object{{"machines", c.machines},
                          {"workers_per_machine", c.workersPerMachine},
                          {"bandwidth_bytes_per_s", c.bandwidth},
                          {"latency_s", c.latency}}},
      {"strategy", stringifyStrategy(plan.strategy).data()},
      {"variables", std::move(variables)},
      {"statistics", llvm::json::Array(plan.statistics)},
      {"batch_statistics",
       llvm::json::Object{{"values", plan.batchStatisticsValues},
                          {"bytes_per_step", plan.batchStatistics.bytes},
                          {"rounds", plan.batchStatistics.rounds}}},
      {"totals", std::move(totals)},
  };
}

void mlir::parallax::printPlan(const Plan &plan, llvm::raw_ostream &os) {
  os << "plan for " << plan.cluster.str() << ", strategy "
     << stringifyStrategy(plan.strategy).data()
     << " (predicted bytes per machine per step)\n";
  os << llvm::format("%-36s %-14s %12s %-6s %9s %-9s %5s %12s %12s %12s\n",
                     "variable", "shape", "bytes", "grad", "alpha", "placement",
                     "parts", "allreduce", "ps", "allgather");
  for (const VariablePlan &v : plan.variables) {
    std::string shape;
    for (int64_t d : v.shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    os << llvm::format("%-36s %-14s %12.0f %-6s %9.4f %-9s %5lld %12.0f "
                       "%12.0f %12.0f\n",
                       v.name.c_str(), shape.c_str(), v.bytes,
                       v.sparse ? "sparse" : "dense", v.alpha,
                       stringifyPlacement(v.placement).data(),
                       static_cast<long long>(v.partitions), v.allReduce.bytes,
                       v.ps.bytes, v.allGather.bytes);
  }
  if (!plan.statistics.empty())
    os << "statistics (assigned by the step, replicated): "
       << llvm::join(plan.statistics, ", ") << "\n";
  if (plan.batchStatisticsValues)
    os << llvm::format("batch statistics: %lld values in %lld rounds, "
                       "%.0f bytes/step (every strategy)\n",
                       static_cast<long long>(plan.batchStatisticsValues),
                       static_cast<long long>(plan.batchStatistics.rounds),
                       plan.batchStatistics.bytes);
  for (Strategy s : {Strategy::Hybrid, Strategy::AllReduce, Strategy::PS})
    os << llvm::format("total %-10s %14.0f bytes/step  %10.6f s/step\n",
                       stringifyStrategy(s).data(), plan.bytesUnder(s),
                       plan.secondsUnder(s));
}
