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

/// Whether `a` moves fewer bytes than `b`, with a tolerance for the
/// formulas' rounding.
static bool fewerBytes(const Transfer &a, const Transfer &b) {
  double scale = std::max({1.0, a.bytes, b.bytes});
  return b.bytes - a.bytes > 1e-9 * scale;
}

/// The placement `strategy` gives `v`: forced, or the cheapest by the cost
/// model. A step's variables of one placement share its rounds (dense
/// gradients travel in buckets, rows in one exchange each way), so one
/// more variable adds bytes, not rounds: the fewer bytes win, and rounds
/// only decide between equal bytes (PS and AllGather on two machines).
/// Dense gradients always AllReduce (balanced PS moves the same bytes with
/// a server hot spot). A sparse gradient goes to AllReduce only when that
/// moves strictly fewer bytes, as AllReduce densifies it and updates every
/// row. On one worker, where nothing moves, a sparse gradient is gathered
/// (from that worker alone: the distribution then adds no collective) and
/// the worker updates its rows in place, with no parameter store to pull
/// rows from and push them to.
static Placement choose(const VariablePlan &v, Strategy strategy,
                        const Cluster &cluster) {
  if (strategy == Strategy::AllReduce)
    return Placement::AllReduce;
  if (strategy == Strategy::PS)
    return Placement::PS;
  if (!v.sparse)
    return Placement::AllReduce;
  if (cluster.workers() == 1)
    return Placement::AllGather;
  if (fewerBytes(v.allReduce, v.ps) && fewerBytes(v.allReduce, v.allGather))
    return Placement::AllReduce;
  bool allGather =
      fewerBytes(v.allGather, v.ps) ||
      (!fewerBytes(v.ps, v.allGather) && v.allGather.rounds < v.ps.rounds);
  return allGather ? Placement::AllGather : Placement::PS;
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

/// One of Transfer's byte counts, summed over `plan`'s transfers under
/// `strategy`.
static double sumUnder(const Plan &plan, Strategy strategy,
                       double Transfer::*bytes) {
  double total = plan.batchStatistics.*bytes;
  for (const VariablePlan &v : plan.variables)
    total += transferOf(v, choose(v, strategy, plan.cluster)).*bytes;
  return total;
}

double Plan::bytesUnder(Strategy other) const {
  return sumUnder(*this, other, &Transfer::bytes);
}

double Plan::localBytesUnder(Strategy other) const {
  return sumUnder(*this, other, &Transfer::localBytes);
}

int64_t Plan::roundsUnder(Strategy other) const {
  if (cluster.machines <= 1)
    return 0;
  // Dense gradients travel in 25 MB buckets (one AllReduce each); a step's
  // pushes and pulls of rows, its dense pushes to servers, and its
  // allgathers, each go out together.
  constexpr double kBucketBytes = 25 << 20;
  double allReduceBytes = 0, densePsBytes = 0;
  int64_t rows = 0, allGather = 0;
  for (const VariablePlan &v : variables) {
    Placement p = choose(v, other, cluster);
    const Transfer &t = transferOf(v, p);
    if (p == Placement::AllReduce)
      allReduceBytes += v.bytes;
    else if (p == Placement::AllGather)
      allGather = std::max(allGather, t.rounds);
    else if (v.sparse)
      rows = std::max(rows, t.rounds);
    else
      densePsBytes += v.bytes;
  }
  int64_t whole = densePsBytes ? densePsRounds(cluster, densePsBytes) : 0;
  int64_t buckets =
      static_cast<int64_t>(std::ceil(allReduceBytes / kBucketBytes));
  int64_t bucketRounds =
      buckets ? buckets *
                    allReduceTransfer(cluster, allReduceBytes / buckets).rounds
              : 0;
  // Every step ends with an AllReduce of the mean loss.
  int64_t loss = treeRounds(cluster.workers());
  return bucketRounds + rows + whole + allGather + batchStatistics.rounds +
         loss;
}

double Plan::secondsUnder(Strategy other) const {
  return linkSeconds(cluster, bytesUnder(other), localBytesUnder(other)) +
         roundsUnder(other) * cluster.latency;
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
    v.machineAlpha = v.alpha;
    if (int64_t workerRows = sparsity.getWorkerRows())
      v.machineAlpha = std::min(v.alpha, static_cast<double>(workerRows) *
                                             cluster.workersPerMachine /
                                             static_cast<double>(rows));
    // Ids travel with the rows of sparse gradients.
    int64_t idRows = v.sparse ? rows : 0;
    v.partitions = defaultPartitions(cluster, rows);
    v.allReduce = allReduceTransfer(cluster, v.bytes);
    v.ps = psTransfer(cluster, v.bytes, v.machineAlpha, v.partitions, v.sparse,
                      idRows);
    v.allGather = allGatherTransfer(cluster, v.bytes, v.machineAlpha, idRows);
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
      plan.batchStatistics.localBytes += t.localBytes;
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
        {"machine_alpha", v.machineAlpha},
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
                           {"local_bytes_per_step", plan.localBytesUnder(s)},
                           {"seconds_per_step", plan.secondsUnder(s)},
                           {"rounds_per_step", plan.roundsUnder(s)}};
  const Cluster &c = plan.cluster;
  return llvm::json::Object{
      {"workers", c.workers()},
      {"cluster",
       llvm::json::Object{{"machines", c.machines},
                          {"workers_per_machine", c.workersPerMachine},
                          {"bandwidth_bytes_per_s", c.bandwidth},
                          {"latency_s", c.latency},
                          {"local_bandwidth_bytes_per_s", c.localBandwidth}}},
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
  if (plan.cluster.workers() == 1)
    os << "one worker: nothing is exchanged; the program has no collectives "
          "(allreduce: the gradient itself; allgather: the worker's own rows, "
          "updated in place)\n";
  for (Strategy s : {Strategy::Hybrid, Strategy::AllReduce, Strategy::PS}) {
    os << llvm::format("total %-10s %14.0f bytes/step  %10.6f s/step  %3lld "
                       "rounds/step",
                       stringifyStrategy(s).data(), plan.bytesUnder(s),
                       plan.secondsUnder(s),
                       static_cast<long long>(plan.roundsUnder(s)));
    if (plan.cluster.workersPerMachine > 1)
      os << llvm::format("  %14.0f bytes/step within a machine",
                         plan.localBytesUnder(s));
    os << "\n";
  }
}
