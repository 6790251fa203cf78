//===- ParameterStore.h - Partitioned variables: push and pull --*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_PARAMETERSTORE_H
#define PARALLAX_LIB_RUNTIME_PARAMETERSTORE_H

#include "Optimizers.h"

#include <cstdint>
#include <functional>

namespace parallax::runtime {

/// Every rank keeps the variable's full buffer, but only the rows of the
/// partitions it serves are current: pushes update them on their owner,
/// pulls read them from their owner.

/// Averages a dense gradient over the workers and applies `kernel` on the
/// owners of each partition (each owner to its rows). With several
/// workers the push is queued (a copy of `gradient`) and goes with the
/// sparse ones in sendPushes(), which also gives every rank the updated
/// partitions. One worker applies it at once.
void pushDenseGradient(Kernel kernel, const char *name, int64_t partitions,
                       int64_t firstServer, const Slots &variable, int64_t rows,
                       int64_t width, const float *gradient, const Hyper &h);

/// The same for a row-sparse gradient: repeated rows are summed on this
/// rank and the push is queued; sendPushes() sends every queued push in
/// one exchange: the rows are summed across the ranks of each machine,
/// then sent to their owners, which sum all contributions, divide by the
/// workers and apply `kernel` to the rows that have one. One worker
/// applies the rows at once.
void pushSparseGradient(Kernel kernel, const char *name, int64_t partitions,
                        int64_t firstServer, const Slots &variable,
                        int64_t rows, int64_t width, const int64_t *ids,
                        int64_t k, const float *values, const Hyper &h);

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

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_PARAMETERSTORE_H
