//===- CostModel.cpp - Communication cost of synchronising a variable -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/CostModel.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

using namespace mlir::parallax;

namespace {

/// Parses a number followed by one of `units` (name, factor); the unit is
/// required.
bool parseWithUnit(const std::string &text,
                   std::initializer_list<std::pair<const char *, double>> units,
                   double &value) {
  char *end = nullptr;
  errno = 0;
  double number = std::strtod(text.c_str(), &end);
  if (errno || end == text.c_str() || !(number > 0))
    return false;
  std::string unit(end);
  for (auto [name, factor] : units)
    if (unit == name) {
      value = number * factor;
      return true;
    }
  return false;
}

} // namespace

std::optional<Cluster> Cluster::parse(const std::string &spec,
                                      const Cluster &defaults,
                                      std::string &error) {
  Cluster cluster = defaults;
  const std::initializer_list<std::pair<const char *, double>> bandwidthUnits =
      {{"Gbps", 1e9 / 8}, {"Mbps", 1e6 / 8}, {"GB/s", 1e9}, {"MB/s", 1e6}};
  std::stringstream fields(spec);
  std::string field;
  while (std::getline(fields, field, ',')) {
    size_t eq = field.find('=');
    std::string key = field.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : field.substr(eq + 1);
    auto count = [&](int64_t &target) {
      char *end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || n < 1)
        return false;
      target = n;
      return true;
    };
    bool ok;
    if (key == "machines")
      ok = count(cluster.machines);
    else if (key == "workers-per-machine")
      ok = count(cluster.workersPerMachine);
    else if (key == "bandwidth")
      ok = parseWithUnit(value, bandwidthUnits, cluster.bandwidth);
    else if (key == "latency")
      ok = parseWithUnit(value, {{"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}},
                         cluster.latency);
    else if (key == "local-bandwidth")
      ok = parseWithUnit(value, bandwidthUnits, cluster.localBandwidth);
    else {
      error = "unknown cluster field '" + key +
              "' (expected machines, workers-per-machine, bandwidth, latency, "
              "local-bandwidth)";
      return std::nullopt;
    }
    if (!ok) {
      bool bandwidth = key == "bandwidth" || key == "local-bandwidth";
      error = "bad value '" + value + "' for cluster field '" + key + "'" +
              (bandwidth          ? " (e.g. 10Gbps, 100Mbps, 1.25GB/s)"
               : key == "latency" ? " (e.g. 50us, 1ms)"
                                  : " (a positive integer)");
      return std::nullopt;
    }
  }
  return cluster;
}

std::string Cluster::str() const {
  std::ostringstream os;
  os << machines << " machine(s) x " << workersPerMachine << " worker(s), "
     << bandwidth * 8 / 1e9 << " Gb/s, " << latency * 1e6 << " us";
  if (localBandwidth > 0)
    os << ", " << localBandwidth * 8 / 1e9 << " Gb/s within a machine";
  return os.str();
}

double mlir::parallax::linkSeconds(const Cluster &cluster, double bytes,
                                   double localBytes) {
  // Sends and receives overlap on a full-duplex link: half the bytes each.
  double network = bytes / 2 / cluster.bandwidth;
  double local = cluster.localBandwidth > 0
                     ? localBytes / 2 / cluster.localBandwidth
                     : 0.0;
  return std::max(network, local);
}

double Transfer::seconds(const Cluster &cluster) const {
  return linkSeconds(cluster, bytes, localBytes) + rounds * cluster.latency;
}

int64_t mlir::parallax::treeRounds(int64_t ranks) {
  int64_t rounds = 0;
  for (int64_t reached = 1; reached < ranks; reached *= 2)
    ++rounds;
  return rounds;
}

int64_t mlir::parallax::rowExchangeRounds(const Cluster &cluster) {
  if (cluster.machines <= 1)
    return 0;
  int64_t localAggregation = cluster.workersPerMachine > 1 ? 2 : 0;
  return localAggregation + 2 + 3;
}

int64_t mlir::parallax::densePsRounds(const Cluster &cluster, double bytes) {
  int64_t m = cluster.machines, g = cluster.workersPerMachine;
  if (m <= 1)
    return 0;
  // A reduce-scatter and an allgather: on the ring from kRingMinBytes, else
  // MPI's (a tree reduce and a scatter, then one round).
  auto across = [](int64_t ranks, double bytes) {
    return bytes >= kRingMinBytes ? 2 * (ranks - 1) : treeRounds(ranks) + 2;
  };
  if (g > 1 && bytes >= kRingMinBytes)
    return 2 * (g - 1) + across(m, bytes / g); // by machine
  return across(m * g, bytes);
}

namespace {

/// One ring over every rank, a machine's ranks next to each other: its
/// NIC carries one edge out and one in, each 2 (N-1)/N of the bytes, and
/// so does each worker's link where a machine has several.
Transfer ringOverEveryRank(const Cluster &cluster, double bytes) {
  int64_t ranks = cluster.workers();
  double n = ranks, edges = 4 * bytes * (n - 1) / n;
  Transfer t;
  t.localBytes = cluster.workersPerMachine > 1 ? edges : 0;
  if (cluster.machines <= 1)
    return t;
  t.bytes = edges;
  t.rounds = bytes >= kRingMinBytes ? 2 * (ranks - 1) : treeRounds(ranks);
  return t;
}

} // namespace

Transfer mlir::parallax::allReduceTransfer(const Cluster &cluster,
                                           double bytes) {
  int64_t m = cluster.machines, g = cluster.workersPerMachine;
  if (m <= 1 || g <= 1 || bytes < kRingMinBytes)
    return ringOverEveryRank(cluster, bytes);
  // By machine: a ring within it, one AllReduce of each worker's 1/G
  // across the machines, a ring back. The NIC carries the G shares'
  // 4 (w/G)(M-1)/M; a worker's link its machine's ring and its share.
  double share = bytes / g, machines = m, workers = g;
  Transfer t;
  t.bytes = 4 * bytes * (machines - 1) / machines;
  t.localBytes = 4 * bytes * (workers - 1) / workers +
                 4 * share * (machines - 1) / machines;
  t.rounds =
      2 * (g - 1) + (share >= kRingMinBytes ? 2 * (m - 1) : treeRounds(m));
  return t;
}

Transfer mlir::parallax::allGatherTransfer(const Cluster &cluster, double bytes,
                                           double alpha, int64_t rows) {
  double m = cluster.machines, g = cluster.workersPerMachine;
  double withIds = bytes + kIdBytes * static_cast<double>(rows);
  Transfer t{2 * alpha * withIds * (m - 1), cluster.machines - 1};
  // A worker's share of its machine's rows goes to the G-1 others there,
  // and theirs come to it.
  t.localBytes = 2 * alpha * withIds * (g - 1) / g;
  return t;
}

Transfer mlir::parallax::psTransfer(const Cluster &cluster, double bytes,
                                    double alpha, int64_t partitions,
                                    bool sparse, int64_t rows) {
  // S servers hold 1/S of the variable each. The busiest machine is a
  // server: it pushes and pulls the (S-1)/S of the touched rows held
  // elsewhere, and receives the other M-1 machines' pushes of its 1/S and
  // answers their pulls. S = M gives the paper's 4·alpha·w(M-1)/M, S = 1
  // its 2·alpha·w(M-1).
  int64_t servers =
      std::max<int64_t>(1, std::min<int64_t>(partitions, cluster.machines));
  double s = servers, m = cluster.machines;
  double withIds = bytes + (sparse ? kIdBytes * static_cast<double>(rows) : 0);
  double moved = alpha * withIds / s;
  Transfer t{2 * moved * (s - 1) + 2 * moved * (m - 1),
             sparse ? rowExchangeRounds(cluster)
                    : densePsRounds(cluster, bytes)};
  // Within a machine: rows are summed on its first worker, which receives
  // the other G-1 workers' shares; dense variables go as the AllReduce.
  double g = cluster.workersPerMachine;
  t.localBytes = sparse ? alpha * withIds * (g - 1) / g
                        : allReduceTransfer(cluster, bytes).localBytes;
  return t;
}
