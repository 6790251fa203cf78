//===- CostModel.h - Communication cost of synchronising a variable -------===//
//
// Part of the Parallax project.
//
// The per-machine transfer formulas of the Parallax paper (Kim et al.,
// EuroSys 2019), with a per-message latency term. Plain C++:
// the compiler plans with it and the runtime can too. docs/cost-model.md
// derives every formula.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_ANALYSIS_COSTMODEL_H
#define PARALLAX_ANALYSIS_COSTMODEL_H

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::parallax {

/// The machines a plan is made for. Workers of one machine aggregate their
/// gradients locally (free, over shared memory), so network traffic is per
/// machine; each machine also runs one server.
struct Cluster {
  int64_t machines = 1;
  int64_t workersPerMachine = 1;
  /// Bytes per second a machine can send (and, at the same time, receive).
  double bandwidth = 1.25e9; // 10 Gb/s
  /// Seconds per message.
  double latency = 50e-6;
  /// Bytes per second (each way) of a worker's own link to the others of
  /// its machine (NVLink, PCIe); 0: they meet in memory, counted as free.
  double localBandwidth = 0;

  int64_t workers() const { return machines * workersPerMachine; }

  /// Parses "machines=M,workers-per-machine=G,bandwidth=B,latency=L,
  /// local-bandwidth=B" (any subset, any order, over `defaults`). Bandwidth
  /// takes a unit: Gbps, Mbps, GB/s or MB/s (bits or bytes per second); latency
  /// us, ms or s. Returns std::nullopt and sets `error` on a malformed spec.
  static std::optional<Cluster>
  parse(const std::string &spec, const Cluster &defaults, std::string &error);
  std::string str() const;
};

/// What one machine moves over the network in one step for one variable.
struct Transfer {
  /// Bytes sent plus bytes received.
  double bytes = 0;
  /// Communication rounds that must follow one another (messages sent in
  /// the same round overlap, so each round pays the latency once).
  int64_t rounds = 0;
  /// Bytes sent plus bytes received between workers of one machine, on
  /// the busiest worker's link (several workers per machine only).
  double localBytes = 0;

  /// The time the transfer takes: the send and receive halves overlap at
  /// `bandwidth` on the NIC and at `localBandwidth` on the local links,
  /// the two kinds of link at the same time (the slower decides), plus one
  /// latency per round.
  double seconds(const Cluster &cluster) const;
};

/// Seconds of `bytes` on the NIC and `localBytes` on a worker's link
/// within its machine (sent plus received, each), the two at once.
double linkSeconds(const Cluster &cluster, double bytes, double localBytes);

/// Rounds the runtime's collectives take, so that the latency term counts
/// what the runtime does (lib/Runtime: CommThread, ParameterStore).
///
/// An AllReduce of at least this many bytes goes around a ring; a smaller
/// one is one MPI_Iallreduce, which MPI runs by recursive doubling.
/// Equal to the runtime's kRingMinBytes (lib/Runtime/CommThread.h).
constexpr double kRingMinBytes = 64 * 1024;
/// Rounds of a collective MPI runs on a tree or by recursive doubling
/// (small AllReduces, Reduce, Bcast) over `ranks`: ceil(log2(ranks)).
int64_t treeRounds(int64_t ranks);
/// Rounds of one step's pushes and pulls of rows, for every sparse
/// variable on servers at once: the push is one exchange of counts and one
/// of ids and rows (after, with several workers per machine, a gather of
/// counts and one of rows on the machine's first rank), the pull one of
/// counts, one of ids and one of rows.
int64_t rowExchangeRounds(const Cluster &cluster);
/// Rounds of one step's pushes of every dense variable on servers at once,
/// `bytes` in all: a reduce-scatter to the owners and an allgather back,
/// around the ring of the N ranks (2(N-1)) from kRingMinBytes on, else
/// one MPI_Ireduce_scatter (a tree reduce and a scatter: treeRounds(N) +
/// 1) and one MPI_Iallgatherv (1). With several workers per machine and
/// kRingMinBytes or more, by machine: a ring within each machine both ways
/// (2(G-1)) and the same across the M machines for a worker's 1/G. Their
/// pulls move nothing.
int64_t densePsRounds(const Cluster &cluster, double bytes);

/// AllReduce of a dense gradient of `bytes` over the N = M G ranks, as the
/// runtime's buckets go. From kRingMinBytes on with several workers per
/// machine, by machine: a ring within each machine, an AllReduce of each
/// worker's 1/G across the M machines, a ring back; a machine's NIC
/// carries 4w(M-1)/M and each worker's link 4w(G-1)/G + 4(w/G)(M-1)/M, in
/// 2(G-1) rounds plus 2(M-1) (a share of kRingMinBytes or more) or
/// treeRounds(M). Otherwise one ring over every rank, each machine's ranks
/// next to each other: 4w(N-1)/N through a NIC and each worker's link, in
/// 2(N-1) rounds from kRingMinBytes on (reduce-scatter then allgather),
/// else in treeRounds(N). Nothing crosses a NIC on one machine.
Transfer allReduceTransfer(const Cluster &cluster, double bytes);

/// Bytes of a row id: rows travel with their ids, and pulls ask for rows
/// by id.
constexpr double kIdBytes = 8;

/// AllGatherv of the touched rows (fraction `alpha` of `bytes`, per
/// machine): every machine receives every other machine's rows:
/// 2·alpha·w(M-1) in M-1 ring rounds; within a machine a worker sends its
/// share to the G-1 others and receives theirs, 2·alpha·w(G-1)/G. With `rows`
/// (the variable's row count) each row's id counts too.
Transfer allGatherTransfer(const Cluster &cluster, double bytes, double alpha,
                           int64_t rows = 0);

/// Parameter servers holding the variable in `partitions` row ranges spread
/// over S = min(partitions, M) servers: workers push the touched rows (a
/// fraction `alpha` per machine) and pull them back. With `rows` (the
/// variable's row count) each row's id counts too: pushes carry them, pulls
/// ask by them. The busiest machine (a server) moves
/// 2·alpha·w((S-1) + (M-1))/S: 4·alpha·w(M-1)/M spread over every machine,
/// 2·alpha·w(M-1) on a single server. A sparse gradient's rows travel in
/// the step's row exchange (rowExchangeRounds, shared by every such
/// variable); a dense one in the step's dense exchange (densePsRounds,
/// shared likewise; alone here). Within a machine the first worker
/// receives the other G-1 workers' rows, alpha·w(G-1)/G; a dense one's
/// ring moves what the AllReduce's does.
Transfer psTransfer(const Cluster &cluster, double bytes, double alpha,
                    int64_t partitions, bool sparse = true, int64_t rows = 0);

} // namespace mlir::parallax

#endif // PARALLAX_ANALYSIS_COSTMODEL_H
