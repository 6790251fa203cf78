//===- ParameterStore.h - Partitioned variables: push and pull --*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_PARAMETERSTORE_H
#define PARALLAX_LIB_RUNTIME_PARAMETERSTORE_H

#include "Comm.h"
#include "Optimizers.h"
#include "Partitions.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace parallax::runtime {

class DeviceCollectives;

/// Every rank keeps the variable's full buffer, but only the rows of the
/// partitions it serves are current: pushes update them on their owner,
/// pulls read them from their owner.

/// Averages a dense gradient over the workers and applies `rule` on the
/// owners of each partition (each owner to its rows). With several
/// workers the push is queued (a copy of `gradient`) and goes with the
/// sparse ones in sendPushes(), which also gives every rank the updated
/// partitions. One worker applies it at once.
void pushDenseGradient(rowkernels::Rule rule, const char *name,
                       int64_t partitions, int64_t firstServer,
                       const Slots &variable, int64_t rows, int64_t width,
                       const float *gradient, const Hyper &h);

/// The same for a row-sparse gradient: repeated rows are summed on this
/// rank and the push is queued; sendPushes() sends every queued push in
/// one exchange: the rows are summed across the ranks of each machine,
/// then sent to their owners, which sum all contributions, divide by the
/// workers and apply `rule` to the rows that have one. One worker
/// applies the rows at once.
void pushSparseGradient(rowkernels::Rule rule, const char *name,
                        int64_t partitions, int64_t firstServer,
                        const Slots &variable, int64_t rows, int64_t width,
                        const int64_t *ids, int64_t k, const float *values,
                        const Hyper &h);

/// Sends the queued pushes, sparse and dense (collective: every rank calls
/// it at the same point): the communication thread exchanges them while the
/// step goes on, where there is one (CommThread.h), or this thread at once.
/// Generated code calls it after a step's last push.
void sendPushes();

/// Sends the queued pushes and waits until every exchange sent is done
/// (collective). Called before every pull, at the end of each step
/// and before checkpoints, so that a server's rows are current whenever
/// they are read.
void flushPushes();

/// Streams a partitioned variable to rank 0 in row order, for a
/// checkpoint, holding at most one chunk (kStreamChunkFloats) of it at a
/// time: on rank 0 `consume` gets every piece (its own rows straight from
/// `data`, the other servers' as they arrive; false stops with false), on
/// the others the rows they serve are sent. Collective over all ranks, in
/// the same order of variables; the rows rank 0 does not serve never
/// enter its `data`.
constexpr int64_t kStreamChunkFloats = int64_t(1) << 22; // 16 MB
bool streamPartitionsToRoot(
    const char *name, int64_t partitions, int64_t firstServer,
    const float *data, int64_t rows, int64_t width,
    const std::function<bool(const float *, int64_t)> &consume);

/// What a queued push updates on the servers, and how.
struct PushTarget {
  rowkernels::Rule rule;
  std::string name;
  Partitioning parts;
  Slots variable;
  int64_t width;
  Hyper h;
};

/// "a, b, c": the variables of queued pushes or pulls, for the trace.
template <typename Queued>
std::string namesOf(const std::vector<Queued> &queue) {
  std::string names;
  for (const Queued &item : queue)
    names += (names.empty() ? "" : ", ") + item.name;
  return names;
}

/// One partition of a dense variable in an exchange's buffer: its
/// variable's index, its rows, its owner, and where it lies.
struct DensePiece {
  size_t variable;
  int64_t firstRow, rows;
  int owner;
  int64_t at;
};

/// The partitions of dense variables laid out in one buffer owner after
/// owner, each owner's in the variables' order (every rank packs the same):
/// the pieces, the floats of each owner's segment, and all of them.
struct DenseLayout {
  std::vector<DensePiece> pieces;
  std::vector<int64_t> counts;
  int64_t total = 0;
};

/// The layout of `variables` (each with `parts` and `width`) among `ranks`.
template <typename Variable>
DenseLayout layOutByOwner(const std::vector<Variable> &variables, int ranks) {
  DenseLayout layout{{}, std::vector<int64_t>(ranks, 0), 0};
  for (size_t v = 0; v < variables.size(); ++v) {
    const Partitioning &parts = variables[v].parts;
    for (int64_t p = 0; p < parts.partitions; ++p) {
      DensePiece piece{v, parts.begin(p), parts.end(p) - parts.begin(p),
                       parts.ownerOf(p, ranks), 0};
      layout.counts[piece.owner] += piece.rows * variables[v].width;
      layout.pieces.push_back(piece);
    }
  }
  std::vector<int64_t> next = displacements(layout.counts);
  for (DensePiece &piece : layout.pieces) {
    piece.at = next[piece.owner];
    next[piece.owner] += piece.rows * variables[piece.variable].width;
  }
  layout.total = next.empty() ? 0 : next.back();
  return layout;
}

/// Sends every rank d, for every variable v, the ids out[d][v] (row counts
/// first, then one MPI_Ialltoallv, on the main thread's communicators);
/// returns in[s][v], the ids each rank s sent this one. Collective.
using IdsByRank = std::vector<std::vector<std::vector<int64_t>>>;
IdsByRank exchangeIds(const IdsByRank &out, const char *what);

/// Counts the traffic of one dense variable under the parameter store as
/// its logical messages, whatever algorithm carries them: pushed
/// (`toOwner`), each partition goes once from every other rank to its
/// owner; pulled, once from its owner to every other rank.
void accountDense(const std::string &name, const Partitioning &parts,
                  int64_t width, bool toOwner);

/// A pull of rows waiting for parallax_rt_pull_rows_complete.
struct PullRequest {
  std::string name;
  Partitioning parts;
  const float *table;
  int64_t width;
  std::vector<int64_t> requested; // row of each output row
  float *out;
};

// The parameter store on the GPUs (DeviceParameterStore.cpp): where a GPU
// program's workers communicate through NCCL (deviceCollectives()), every
// row pushed or pulled stays in device memory: ids are routed on the host
// (MPI), rows and partitions go through NCCL, and the sums and updates
// are kernels.

/// Queues a sparse push of `rows` (checked row indices, read on the host)
/// and their gradient rows `values` (device memory): its repeated rows are
/// summed on the device into one buffer ordered by owner at once.
void queueDeviceSparsePush(rowkernels::Rule rule, const char *name,
                           const Partitioning &parts, const Slots &variable,
                           int64_t width, const std::vector<int64_t> &rows,
                           const float *values, const Hyper &h);

/// Queues a dense push: a copy of `gradient` (device memory) on the device.
void queueDeviceDensePush(rowkernels::Rule rule, const char *name,
                          const Partitioning &parts, const Slots &variable,
                          int64_t width, const float *gradient, const Hyper &h);

/// Sends the queued device pushes to their owners, where each owner sums
/// every contribution to a row, divides by the workers and updates the row
/// and its state; returns once applied. Dense pushes go first, in one
/// exchange: each owner's partitions reduced onto it (one NCCL group of
/// reduces), updated there, and broadcast back (one group of broadcasts);
/// their names are returned (every rank now holds every row). Sparse
/// pushes go in one exchange after them. Collective (every rank calls it
/// at the same point).
std::vector<std::string> sendDevicePushes();

/// A whole variable's partitions from their owners to every rank: one NCCL
/// group of broadcasts.
void broadcastDevicePartitions(DeviceCollectives &device,
                               const Partitioning &parts, float *table,
                               int64_t width);

/// Completes `pulls` (after the pushes before them) in one exchange:
/// owners gather the rows asked of them on the device, NCCL brings them
/// back, and a kernel puts each where it was asked for. Collective.
void completeDevicePulls(const std::vector<PullRequest> &pulls);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_PARAMETERSTORE_H
