//===- ParameterStore.cpp - Partitioned variables: push and pull ----------===//
//
// Part of the Parallax project.
//
// The parameter store of `ps`-placed variables, built on MPI collectives:
// a variable's partitions p = 0, 1, ... are served by consecutive ranks
// from its first server on (the compiler balances first servers by bytes). A
// push sums repeated rows locally, then across the ranks of a machine (gathered
// on the machine's first rank), and routes each row to its owner with one
// MPI_Alltoallv; owners average over the workers and apply the optimizer
// to their rows. A pull sends the distinct requested ids to their owners
// and gets the rows back (two MPI_Alltoallv). A dense variable is pushed
// with one MPI_Reduce per partition to its owner and pulled with one
// MPI_Bcast per partition from it.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Comm.h"
#include "Descriptor.h"
#include "ParameterStore.h"
#include "Partitions.h"
#include "Support.h"
#include "Trace.h"

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace parallax::runtime;

namespace {

constexpr int64_t idBytes = sizeof(int64_t);

std::vector<int> displacements(const std::vector<int> &counts) {
  std::vector<int> offsets(counts.size(), 0);
  if (counts.empty())
    return offsets;
  std::partial_sum(counts.begin(), counts.end() - 1, offsets.begin() + 1);
  return offsets;
}

std::vector<int> scaled(const std::vector<int> &counts, int64_t factor,
                        const char *what) {
  std::vector<int> result(counts.size());
  for (size_t i = 0; i < counts.size(); ++i)
    result[i] = mpiCount(counts[i] * factor, what);
  return result;
}

/// Every rank learns how many elements each rank sends it.
std::vector<int> exchangeCounts(const std::vector<int> &sendCounts) {
  std::vector<int> recvCounts(sendCounts.size());
  MPI_Request request;
  checkMPI(MPI_Ialltoall(sendCounts.data(), 1, MPI_INT, recvCounts.data(), 1,
                         MPI_INT, world().comm, &request),
           "MPI_Ialltoall");
  waitFor(request, "the exchange of row counts");
  return recvCounts;
}

/// MPI_Alltoallv of `send`, grouped by destination rank.
template <typename T>
std::vector<T> allToAll(const std::vector<T> &send,
                        const std::vector<int> &sendCounts,
                        const std::vector<int> &recvCounts, MPI_Datatype type) {
  std::vector<T> received(
      std::accumulate(recvCounts.begin(), recvCounts.end(), int64_t{0}));
  std::vector<int> sendOffsets = displacements(sendCounts),
                   recvOffsets = displacements(recvCounts);
  MPI_Request request;
  checkMPI(MPI_Ialltoallv(send.data(), sendCounts.data(), sendOffsets.data(),
                          type, received.data(), recvCounts.data(),
                          recvOffsets.data(), type, world().comm, &request),
           "MPI_Ialltoallv");
  waitFor(request, "the exchange of rows");
  return received;
}

/// Bytes of `counts` excluding this rank's own entry.
int64_t remoteBytes(const std::vector<int> &counts, int64_t bytesPerItem) {
  int64_t sum = 0;
  for (size_t r = 0; r < counts.size(); ++r)
    if (static_cast<int>(r) != world().rank)
      sum += counts[r] * bytesPerItem;
  return sum;
}

/// The row ids `ids` of a variable of `rows` rows (rowIndex of each).
std::vector<int64_t> rowIdsOf(const char *name, const int64_t *ids, int64_t k,
                              int64_t rows) {
  std::vector<int64_t> result(ids, ids + k);
  for (int64_t &id : result)
    id = rowIndex(name, id, rows);
  return result;
}

/// Sums the (distinct) rows of the ranks of this machine on its first rank;
/// the other ranks are left with no rows.
void aggregateOnMachine(const char *name, std::vector<int64_t> &ids,
                        std::vector<float> &values, int64_t width) {
  const World &w = world();
  int count = mpiCount(ids.size(), name);
  std::vector<int> counts(w.localSize);
  MPI_Request request;
  checkMPI(MPI_Igather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0,
                       w.local, &request),
           "MPI_Igather");
  waitFor(request, "the machine's row counts");
  bool leader = w.localRank == 0;
  std::vector<int64_t> allIds;
  std::vector<float> allValues;
  std::vector<int> valueCounts;
  if (leader) {
    allIds.resize(std::accumulate(counts.begin(), counts.end(), int64_t{0}));
    allValues.resize(allIds.size() * width);
    valueCounts = scaled(counts, width, name);
  }
  std::vector<int> idOffsets = displacements(counts),
                   valueOffsets = displacements(valueCounts);
  MPI_Request gathers[2];
  checkMPI(MPI_Igatherv(ids.data(), count, MPI_INT64_T, allIds.data(),
                        counts.data(), idOffsets.data(), MPI_INT64_T, 0,
                        w.local, &gathers[0]),
           "MPI_Igatherv");
  checkMPI(MPI_Igatherv(values.data(), mpiCount(count * width, name), MPI_FLOAT,
                        allValues.data(), valueCounts.data(),
                        leader ? valueOffsets.data() : nullptr, MPI_FLOAT, 0,
                        w.local, &gathers[1]),
           "MPI_Igatherv");
  waitFor(2, gathers, "the machine's rows");
  int64_t rowBytes = idBytes + width * int64_t(sizeof(float));
  if (leader) {
    account(name, 0, (static_cast<int64_t>(allIds.size()) - count) * rowBytes);
    ids = std::move(allIds);
    values = std::move(allValues);
    sumRepeatedRows(ids, values, width);
  } else {
    account(name, count * rowBytes, 0);
    ids.clear();
    values.clear();
  }
}

/// Posts `post(first element, elements, owner, request)` for every
/// partition of a dense variable, waits for all, and accounts the traffic:
/// each partition's elements travel between its owner and the N-1 others,
/// towards the owner when `toOwner` (a reduce), from it otherwise (a
/// broadcast).
template <typename Post>
void forEachPartition(const char *name, const Partitioning &parts,
                      int64_t width, bool toOwner, Post post) {
  const World &w = world();
  std::vector<MPI_Request> requests(parts.partitions);
  int64_t sent = 0, received = 0;
  for (int64_t p = 0; p < parts.partitions; ++p) {
    int64_t count = (parts.end(p) - parts.begin(p)) * width;
    int owner = parts.ownerOf(p, w.size);
    post(parts.begin(p) * width, mpiCount(count, name), owner, &requests[p]);
    int64_t bytes = count * int64_t(sizeof(float));
    bool mine = owner == w.rank;
    (mine == toOwner ? received : sent) += bytes * (mine ? w.size - 1 : 1);
  }
  waitFor(static_cast<int>(requests.size()), requests.data(),
          toOwner ? "a dense push" : "a pull of a whole variable");
  account(name, sent, received);
}

} // namespace

void parallax::runtime::pushSparseGradient(
    Kernel kernel, const char *name, int64_t partitions, int64_t firstServer,
    const Slots &variable, int64_t rows, int64_t width, const int64_t *ids,
    int64_t k, const float *values, const Hyper &h) {
  TraceScope trace(
      "comm", [&] { return std::string("push ") + name; }, "sparse");
  std::vector<int64_t> mine = rowIdsOf(name, ids, k, rows);
  std::vector<float> rowValues(values, values + k * width);
  sumRepeatedRows(mine, rowValues, width);
  const World &w = world();
  if (w.size == 1) {
    applyRows(kernel, name, variable, rows, width, mine.data(), mine.size(),
              rowValues.data(), 1.0f, h);
    return;
  }
  if (w.localSize > 1)
    aggregateOnMachine(name, mine, rowValues, width);

  // Route each row to its owner (ids are sorted; owners are not).
  Partitioning parts(rows, partitions, firstServer);
  std::vector<int> sendCounts(w.size, 0);
  for (int64_t id : mine)
    ++sendCounts[parts.ownerOfRow(id, w.size)];
  std::vector<int> offsets = displacements(sendCounts), next = offsets;
  std::vector<int64_t> sendIds(mine.size());
  std::vector<float> sendValues(rowValues.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    int slot = next[parts.ownerOfRow(mine[i], w.size)]++;
    sendIds[slot] = mine[i];
    std::memcpy(sendValues.data() + slot * width, rowValues.data() + i * width,
                width * sizeof(float));
  }
  std::vector<int> recvCounts = exchangeCounts(sendCounts);
  std::vector<int64_t> ownIds =
      allToAll(sendIds, sendCounts, recvCounts, MPI_INT64_T);
  std::vector<float> ownValues =
      allToAll(sendValues, scaled(sendCounts, width, name),
               scaled(recvCounts, width, name), MPI_FLOAT);
  int64_t rowBytes = idBytes + width * int64_t(sizeof(float));
  account(name, remoteBytes(sendCounts, rowBytes),
          remoteBytes(recvCounts, rowBytes));

  int64_t distinct = sumRepeatedRows(ownIds, ownValues, width);
  applyRows(kernel, name, variable, rows, width, ownIds.data(), distinct,
            ownValues.data(), 1.0f / w.size, h);
}

void parallax::runtime::pushDenseGradient(Kernel kernel, const char *name,
                                          int64_t partitions,
                                          int64_t firstServer,
                                          const Slots &variable, int64_t rows,
                                          int64_t width, const float *gradient,
                                          const Hyper &h) {
  TraceScope trace(
      "comm", [&] { return std::string("push ") + name; }, "dense");
  const World &w = world();
  if (w.size == 1) {
    kernel(variable, gradient, rows * width, h);
    return;
  }
  Partitioning parts(rows, partitions, firstServer);
  std::vector<float> sums(rows * width);
  forEachPartition(
      name, parts, width, /*toOwner=*/true,
      [&](int64_t first, int count, int owner, MPI_Request *request) {
        checkMPI(MPI_Ireduce(gradient + first, sums.data() + first, count,
                             MPI_FLOAT, MPI_SUM, owner, w.comm, request),
                 "MPI_Ireduce");
      });
  float scale = 1.0f / w.size;
  for (int64_t p = 0; p < parts.partitions; ++p) {
    if (parts.ownerOf(p, w.size) != w.rank)
      continue;
    int64_t offset = parts.begin(p) * width;
    int64_t count = (parts.end(p) - parts.begin(p)) * width;
    for (int64_t i = 0; i < count; ++i)
      sums[offset + i] *= scale;
    kernel(variable.offset(offset), sums.data() + offset, count, h);
  }
}

bool parallax::runtime::streamPartitionsToRoot(
    const char *name, int64_t partitions, int64_t firstServer,
    const float *data, int64_t rows, int64_t width,
    const std::function<bool(const float *, int64_t)> &consume) {
  const World &w = world();
  if (w.size == 1)
    return w.rank != 0 || consume(data, rows * width);
  // One tag for the stream: messages from one sender arrive in order.
  constexpr int kTag = 7001;
  Partitioning parts(rows, partitions, firstServer);
  std::vector<float> chunk;
  for (int64_t p = 0; p < parts.partitions; ++p) {
    int owner = parts.ownerOf(p, w.size);
    const float *first = data + parts.begin(p) * width;
    int64_t count = (parts.end(p) - parts.begin(p)) * width;
    if (w.rank == 0 && owner == 0) {
      if (!consume(first, count))
        return false;
      continue;
    }
    if (w.rank != 0 && w.rank != owner)
      continue;
    for (int64_t done = 0; done < count; done += kStreamChunkFloats) {
      int n = mpiCount(std::min(kStreamChunkFloats, count - done), name);
      MPI_Request request;
      if (w.rank == owner) {
        checkMPI(
            MPI_Isend(first + done, n, MPI_FLOAT, 0, kTag, w.comm, &request),
            "MPI_Isend");
        waitFor(request, "streaming a partitioned variable for a checkpoint");
        continue;
      }
      chunk.resize(n);
      checkMPI(
          MPI_Irecv(chunk.data(), n, MPI_FLOAT, owner, kTag, w.comm, &request),
          "MPI_Irecv");
      waitFor(request, "streaming a partitioned variable for a checkpoint");
      if (!consume(chunk.data(), n))
        return false;
    }
  }
  return true;
}

extern "C" void parallax_rt_pull_rows_f32(const char *name, int64_t partitions,
                                          int64_t firstServer, int64_t rankW,
                                          void *w, int64_t rankI, void *ids,
                                          int64_t rankO, void *out) {
  TraceScope trace(
      "comm", [&] { return std::string("pull ") + name; }, "rows");
  const float *table = contiguousF32(name, "variable", rankW, w);
  int64_t rows = leadingRows(rankW, w);
  int64_t width = rowWidth(rankW, w);
  int64_t k = elementCount(rankI, ids);
  std::vector<int64_t> requestedRows =
      rowIdsOf(name, rowIds(rankI, ids), k, rows);
  const int64_t *requested = requestedRows.data();
  float *result = contiguousF32(name, "pulled rows", rankO, out);
  const World &wld = world();
  if (wld.size == 1) {
    for (int64_t i = 0; i < k; ++i)
      std::memcpy(result + i * width, table + requested[i] * width,
                  width * sizeof(float));
    return;
  }
  std::vector<int64_t> distinct(requested, requested + k);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  // Ask each owner for its rows, grouped by owner; slot s of the request is
  // distinct[slotRow[s]].
  Partitioning parts(rows, partitions, firstServer);
  std::vector<int> sendCounts(wld.size, 0);
  for (int64_t id : distinct)
    ++sendCounts[parts.ownerOfRow(id, wld.size)];
  std::vector<int> next = displacements(sendCounts);
  std::vector<int64_t> request(distinct.size()), slotRow(distinct.size());
  for (size_t i = 0; i < distinct.size(); ++i) {
    int slot = next[parts.ownerOfRow(distinct[i], wld.size)]++;
    request[slot] = distinct[i];
    slotRow[slot] = i;
  }
  std::vector<int> recvCounts = exchangeCounts(sendCounts);
  std::vector<int64_t> asked =
      allToAll(request, sendCounts, recvCounts, MPI_INT64_T);
  std::vector<float> reply(asked.size() * width);
  for (size_t i = 0; i < asked.size(); ++i)
    std::memcpy(reply.data() + i * width, table + asked[i] * width,
                width * sizeof(float));
  std::vector<float> fetched =
      allToAll(reply, scaled(recvCounts, width, name),
               scaled(sendCounts, width, name), MPI_FLOAT);
  int64_t rowBytes = width * int64_t(sizeof(float));
  account(name,
          remoteBytes(sendCounts, idBytes) + remoteBytes(recvCounts, rowBytes),
          remoteBytes(recvCounts, idBytes) + remoteBytes(sendCounts, rowBytes));

  std::vector<float> byDistinct(fetched.size());
  for (size_t s = 0; s < slotRow.size(); ++s)
    std::memcpy(byDistinct.data() + slotRow[s] * width,
                fetched.data() + s * width, width * sizeof(float));
  for (int64_t i = 0; i < k; ++i) {
    int64_t at =
        std::lower_bound(distinct.begin(), distinct.end(), requested[i]) -
        distinct.begin();
    std::memcpy(result + i * width, byDistinct.data() + at * width,
                width * sizeof(float));
  }
}

extern "C" void parallax_rt_pull_f32(const char *name, int64_t partitions,
                                     int64_t firstServer, int64_t rankW,
                                     void *w) {
  const World &wld = world();
  if (wld.size == 1)
    return;
  TraceScope trace(
      "comm", [&] { return std::string("pull ") + name; }, "whole");
  float *table = contiguousF32(name, "variable", rankW, w);
  int64_t rows = leadingRows(rankW, w);
  int64_t width = rowWidth(rankW, w);
  Partitioning parts(rows, partitions, firstServer);
  forEachPartition(
      name, parts, width, /*toOwner=*/false,
      [&](int64_t first, int count, int owner, MPI_Request *request) {
        checkMPI(MPI_Ibcast(table + first, count, MPI_FLOAT, owner, wld.comm,
                            request),
                 "MPI_Ibcast");
      });
}
