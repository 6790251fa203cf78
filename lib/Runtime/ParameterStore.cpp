//===- ParameterStore.cpp - Partitioned variables: push and pull ----------===//
//
// Part of the Parallax project.
//
// The parameter store of `ps`-placed variables, built on MPI collectives:
// a variable's partitions p = 0, 1, ... are served by consecutive ranks
// from its first server on (the compiler balances first servers by bytes).
//
// Row traffic goes in few rounds whatever the number of variables. A
// sparse push sums repeated rows locally and is queued; after the step's
// last push (or at its end, or before the next pull) the queue goes as one
// exchange for every variable, which the communication thread runs on
// communicators of its own while the step goes on (the dense buckets
// included: their thread is another); the next pull, the step's end and
// checkpoints wait for it. The ranks of a machine gather theirs on its first
// rank (one MPI_Igather of counts, one MPI_Igatherv of rows), which sums them,
// then one MPI_Ialltoall of counts and one MPI_Ialltoallv of ids and rows take
// each row to its owner. Owners average over the workers and apply the
// optimizer to their rows. Pulls of rows are requested one variable at a
// time and completed together: the distinct ids go to their owners (counts,
// then ids) and the rows come back, three rounds for all of them. Dense
// pushes are queued with the sparse ones and go in the same job: one
// reduce-scatter of every dense variable's partitions to their owners,
// which update them, and one allgather back (both by machine where
// machines have several ranks alike), so that the next pull of a whole
// variable moves nothing (only a run's first pull broadcasts).
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Comm.h"
#include "CommThread.h"
#include "Descriptor.h"
#include "DeviceCollectives.h"
#include "ParameterStore.h"
#include "Partitions.h"
#include "Support.h"
#include "Trace.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <set>

using namespace parallax::runtime;

namespace {

constexpr int64_t idBytes = sizeof(int64_t);

/// The communicators and the wait of an exchange: the main thread's
/// (pulls), or the communication thread's (pushes), so that the two never
/// mix their messages.
struct Channel {
  MPI_Comm all, machine, across;
  WaitForRequests wait;
};

Channel mainThreadChannel() {
  return {world().comm, world().local, world().across,
          static_cast<WaitForRequests>(waitFor)};
}

Channel pushThreadChannel() {
  return {world().pushes, world().pushesLocal, world().pushesAcross,
          pollCommRequests};
}

/// MPI_Alltoallv of bytes, grouped by destination rank.
std::vector<char> allToAll(const std::vector<char> &send,
                           const std::vector<int> &sendCounts,
                           const std::vector<int> &recvCounts,
                           const Channel &channel) {
  std::vector<char> received(
      std::accumulate(recvCounts.begin(), recvCounts.end(), int64_t{0}));
  std::vector<int> sendOffsets = displacements(sendCounts),
                   recvOffsets = displacements(recvCounts);
  MPI_Request request;
  checkMPI(MPI_Ialltoallv(send.data(), sendCounts.data(), sendOffsets.data(),
                          MPI_BYTE, received.data(), recvCounts.data(),
                          recvOffsets.data(), MPI_BYTE, channel.all, &request),
           "MPI_Ialltoallv");
  channel.wait(1, &request, "the exchange of rows");
  return received;
}

/// What one rank sends another for one variable: row ids, row values, or
/// both.
struct Parcel {
  std::vector<int64_t> ids;
  std::vector<float> values;
};

/// Which parts of a parcel travel.
enum class Carries { Ids, Values, Both };

int64_t parcelBytes(int64_t rows, int64_t width, Carries carries) {
  return rows *
         ((carries != Carries::Values ? idBytes : 0) +
          (carries != Carries::Ids ? width * int64_t(sizeof(float)) : 0));
}

void appendParcel(std::vector<char> &bytes, const Parcel &parcel,
                  Carries carries) {
  auto append = [&](const void *data, size_t size) {
    const char *from = static_cast<const char *>(data);
    bytes.insert(bytes.end(), from, from + size);
  };
  if (carries != Carries::Values)
    append(parcel.ids.data(), parcel.ids.size() * idBytes);
  if (carries != Carries::Ids)
    append(parcel.values.data(), parcel.values.size() * sizeof(float));
}

/// Reads a parcel of `rows` rows at `at`; returns the bytes after it.
const char *readParcel(const char *at, int64_t rows, int64_t width,
                       Carries carries, Parcel &parcel) {
  if (rows == 0) // `at` may be null: nothing was received
    return at;
  if (carries != Carries::Values) {
    parcel.ids.resize(rows);
    std::memcpy(parcel.ids.data(), at, rows * idBytes);
    at += rows * idBytes;
  }
  if (carries != Carries::Ids) {
    parcel.values.resize(rows * width);
    std::memcpy(parcel.values.data(), at, rows * width * sizeof(float));
    at += rows * width * sizeof(float);
  }
  return at;
}

/// Sends every rank d, for every variable v (rows of widths[v] floats),
/// out[d][v], in one MPI_Ialltoallv of bytes; the counts of rows each rank
/// receives, counts[s][v], are exchanged first (one MPI_Ialltoall) unless
/// given. Returns in[s][v], the parcels each rank s sent this one.
std::vector<std::vector<Parcel>>
exchangeParcels(const std::vector<std::vector<Parcel>> &out,
                const std::vector<int64_t> &widths, Carries carries,
                std::vector<int> recvRows, const char *what,
                const Channel &channel) {
  const World &w = world();
  size_t variables = widths.size();
  std::vector<int> sendRows(w.size * variables);
  for (int d = 0; d < w.size; ++d)
    for (size_t v = 0; v < variables; ++v)
      sendRows[d * variables + v] =
          mpiCount(carries == Carries::Values
                       ? static_cast<int64_t>(out[d][v].values.size()) /
                             std::max<int64_t>(widths[v], 1)
                       : static_cast<int64_t>(out[d][v].ids.size()),
                   what);
  if (recvRows.empty()) {
    recvRows.resize(sendRows.size());
    MPI_Request request;
    checkMPI(MPI_Ialltoall(sendRows.data(), static_cast<int>(variables),
                           MPI_INT, recvRows.data(),
                           static_cast<int>(variables), MPI_INT, channel.all,
                           &request),
             "MPI_Ialltoall");
    channel.wait(1, &request, "the exchange of row counts");
  }
  std::vector<char> send;
  std::vector<int> sendBytes(w.size), recvBytes(w.size);
  for (int d = 0; d < w.size; ++d) {
    size_t before = send.size();
    for (size_t v = 0; v < variables; ++v)
      appendParcel(send, out[d][v], carries);
    sendBytes[d] = mpiCount(send.size() - before, what);
    int64_t incoming = 0;
    for (size_t v = 0; v < variables; ++v)
      incoming += parcelBytes(recvRows[d * variables + v], widths[v], carries);
    recvBytes[d] = mpiCount(incoming, what);
  }
  std::vector<char> received = allToAll(send, sendBytes, recvBytes, channel);
  std::vector<std::vector<Parcel>> in(w.size, std::vector<Parcel>(variables));
  const char *at = received.data();
  for (int s = 0; s < w.size; ++s)
    for (size_t v = 0; v < variables; ++v)
      at = readParcel(at, recvRows[s * variables + v], widths[v], carries,
                      in[s][v]);
  return in;
}

} // namespace

IdsByRank parallax::runtime::exchangeIds(const IdsByRank &out,
                                         const char *what) {
  size_t variables = out.empty() ? 0 : out[0].size();
  std::vector<std::vector<Parcel>> parcels(out.size(),
                                           std::vector<Parcel>(variables));
  for (size_t d = 0; d < out.size(); ++d)
    for (size_t v = 0; v < variables; ++v)
      parcels[d][v].ids = out[d][v];
  std::vector<std::vector<Parcel>> received =
      exchangeParcels(parcels, std::vector<int64_t>(variables, 0), Carries::Ids,
                      {}, what, mainThreadChannel());
  IdsByRank in(received.size(), std::vector<std::vector<int64_t>>(variables));
  for (size_t s = 0; s < received.size(); ++s)
    for (size_t v = 0; v < variables; ++v)
      in[s][v] = std::move(received[s][v].ids);
  return in;
}

namespace {

/// A sparse push waiting for the step's exchange: this rank's distinct
/// rows, summed.
struct PendingPush : PushTarget {
  Parcel rowsOut;
};
std::vector<PendingPush> pendingPushes;

/// A dense push waiting for the step's exchange: a copy of this rank's
/// gradient (the step may reuse its buffer before the exchange runs).
struct PendingDensePush : PushTarget {
  std::vector<float> gradient;
};
std::vector<PendingDensePush> pendingDensePushes;

/// Dense variables whose every row is current on every rank: the exchange
/// that last updated them gathered their partitions everywhere (or a pull
/// broadcast them, and no push came since), so their next pull has
/// nothing to fetch. The exchange's thread and pulls never touch it at
/// the same time: a pull first waits for every exchange in flight.
std::set<std::string> currentEverywhere;

/// Sums the (distinct) rows of every pending push over the ranks of this
/// machine on its first rank, one gather for all variables; the other
/// ranks are left with no rows.
void aggregateOnMachine(std::vector<PendingPush> &pushes,
                        const Channel &channel) {
  const World &w = world();
  size_t variables = pushes.size();
  std::vector<int> mine(variables), counts(w.localSize * variables);
  std::vector<char> send;
  for (size_t v = 0; v < variables; ++v) {
    mine[v] = mpiCount(pushes[v].rowsOut.ids.size(), "a push");
    appendParcel(send, pushes[v].rowsOut, Carries::Both);
  }
  MPI_Request request;
  checkMPI(MPI_Igather(mine.data(), static_cast<int>(variables), MPI_INT,
                       counts.data(), static_cast<int>(variables), MPI_INT, 0,
                       channel.machine, &request),
           "MPI_Igather");
  channel.wait(1, &request, "the machine's row counts");
  bool leader = w.localRank == 0;
  std::vector<int> byteCounts(w.localSize);
  for (int r = 0; r < w.localSize; ++r) {
    int64_t bytes = 0;
    for (size_t v = 0; v < variables; ++v)
      bytes += parcelBytes(counts[r * variables + v], pushes[v].width,
                           Carries::Both);
    byteCounts[r] = mpiCount(bytes, "the machine's rows");
  }
  std::vector<int> offsets = displacements(byteCounts);
  std::vector<char> gathered(leader ? offsets.back() + byteCounts.back() : 0);
  checkMPI(MPI_Igatherv(send.data(), mpiCount(send.size(), "a push"), MPI_BYTE,
                        gathered.data(), byteCounts.data(), offsets.data(),
                        MPI_BYTE, 0, channel.machine, &request),
           "MPI_Igatherv");
  channel.wait(1, &request, "the machine's rows");
  if (!leader) {
    for (size_t v = 0; v < variables; ++v) {
      account(pushes[v].name,
              mine[v] * parcelBytes(1, pushes[v].width, Carries::Both), 0);
      pushes[v].rowsOut = {};
    }
    return;
  }
  std::vector<Parcel> all(variables);
  const char *at = gathered.data();
  for (int r = 0; r < w.localSize; ++r)
    for (size_t v = 0; v < variables; ++v) {
      Parcel parcel;
      at = readParcel(at, counts[r * variables + v], pushes[v].width,
                      Carries::Both, parcel);
      if (r != w.localRank)
        account(pushes[v].name, 0,
                parcel.ids.size() *
                    parcelBytes(1, pushes[v].width, Carries::Both));
      all[v].ids.insert(all[v].ids.end(), parcel.ids.begin(), parcel.ids.end());
      all[v].values.insert(all[v].values.end(), parcel.values.begin(),
                           parcel.values.end());
    }
  for (size_t v = 0; v < variables; ++v) {
    sumRepeatedRows(all[v].ids, all[v].values, pushes[v].width);
    pushes[v].rowsOut = std::move(all[v]);
  }
}

std::vector<PullRequest> pendingPulls;

} // namespace

void parallax::runtime::accountDense(const std::string &name,
                                     const Partitioning &parts, int64_t width,
                                     bool toOwner) {
  const World &w = world();
  int64_t sent = 0, received = 0;
  for (int64_t p = 0; p < parts.partitions; ++p) {
    int64_t bytes =
        (parts.end(p) - parts.begin(p)) * width * int64_t(sizeof(float));
    bool mine = parts.ownerOf(p, w.size) == w.rank;
    (mine == toOwner ? received : sent) += bytes * (mine ? w.size - 1 : 1);
  }
  account(name, sent, received);
}

namespace {

/// Pulls a whole dense variable from its owners: one MPI_Ibcast per
/// partition, on the main thread (or one NCCL group of broadcasts where
/// the workers communicate through it).
void broadcastPartitions(const char *name, const Partitioning &parts,
                         float *table, int64_t width) {
  const World &w = world();
  if (DeviceCollectives *device = deviceCollectives()) {
    broadcastDevicePartitions(*device, parts, table, width);
    accountDense(name, parts, width, /*toOwner=*/false);
    return;
  }
  std::vector<MPI_Request> requests(parts.partitions);
  for (int64_t p = 0; p < parts.partitions; ++p)
    checkMPI(MPI_Ibcast(table + parts.begin(p) * width,
                        mpiCount((parts.end(p) - parts.begin(p)) * width, name),
                        MPI_FLOAT, parts.ownerOf(p, w.size), w.comm,
                        &requests[p]),
             "MPI_Ibcast");
  waitFor(static_cast<int>(requests.size()), requests.data(),
          "a pull of a whole variable");
  accountDense(name, parts, width, /*toOwner=*/false);
}

} // namespace

void parallax::runtime::pushSparseGradient(
    rowkernels::Rule rule, const char *name, int64_t partitions,
    int64_t firstServer, const Slots &variable, int64_t rows, int64_t width,
    const int64_t *ids, int64_t k, const float *values, const Hyper &h) {
  if (world().size > 1 && deviceCollectives()) {
    queueDeviceSparsePush(rule, name,
                          Partitioning(rows, partitions, firstServer), variable,
                          width, rowIdsOf(name, ids, k, rows), values, h);
    return;
  }
  Parcel mine{rowIdsOf(name, ids, k, rows),
              std::vector<float>(values, values + k * width)};
  sumRepeatedRows(mine.ids, mine.values, width);
  if (world().size == 1) {
    TraceScope trace(
        "comm", [&] { return std::string("push ") + name; }, "sparse");
    applyRows(rule, name, variable, rows, width, mine.ids.data(),
              mine.ids.size(), mine.values.data(), 1.0f, h);
    return;
  }
  pendingPushes.push_back(
      {{rule, name, Partitioning(rows, partitions, firstServer), variable,
        width, h},
       std::move(mine)});
}

namespace {

/// The dense pushes of a step in one exchange over `channel`, whatever
/// their number: every partition of every variable goes to the segment of
/// its owner in one buffer; a reduce-scatter leaves each rank the sums of
/// its own segment, where it averages them and applies the optimizer (its
/// state stays with it); an allgather then gives every rank every updated
/// partition, so that the next pull of these variables moves nothing.
void exchangeDensePushes(std::vector<PendingDensePush> &pushes,
                         const Channel &channel) {
  const World &w = world();
  DenseLayout layout = layOutByOwner(pushes, w.size);
  // Kept from step to step: allocated afresh in the communication thread's
  // malloc arena, a buffer this size would be mapped and page-faulted in
  // again every step (some 250 ms for the LM's 52 MB on this machine). One
  // exchange runs at a time (the thread runs its jobs in order; without
  // it, the main thread runs them).
  static std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < layout.total)
    buffer.resize(layout.total);
  for (const DensePiece &piece : layout.pieces) {
    const PendingDensePush &push = pushes[piece.variable];
    std::copy_n(push.gradient.begin() + piece.firstRow * push.width,
                piece.rows * push.width, buffer.begin() + piece.at);
  }
  reduceScatterByMachine(buffer.data(), layout.counts, channel.all,
                         channel.machine, channel.across, channel.wait);
  float scale = 1.0f / w.size;
  for (const DensePiece &piece : layout.pieces) {
    if (piece.owner != w.rank)
      continue;
    const PendingDensePush &push = pushes[piece.variable];
    int64_t first = piece.firstRow * push.width,
            count = piece.rows * push.width;
    float *sums = buffer.data() + piece.at;
    for (int64_t i = 0; i < count; ++i)
      sums[i] *= scale;
    hostKernel(push.rule)(push.variable.offset(first), sums, count, push.h);
    std::copy_n(push.variable.w + first, count, sums);
  }
  allgatherByMachine(buffer.data(), layout.counts, channel.all, channel.machine,
                     channel.across, channel.wait);
  for (const DensePiece &piece : layout.pieces) {
    const PendingDensePush &push = pushes[piece.variable];
    if (piece.owner != w.rank)
      std::copy_n(buffer.data() + piece.at, piece.rows * push.width,
                  push.variable.w + piece.firstRow * push.width);
  }
  for (const PendingDensePush &push : pushes) {
    accountDense(push.name, push.parts, push.width, /*toOwner=*/true);
    accountDense(push.name, push.parts, push.width, /*toOwner=*/false);
    currentEverywhere.insert(push.name);
  }
}

} // namespace

/// Sends `pushes` to their owners in one exchange over `channel`, and
/// applies the rows this rank serves.
static void exchangePushes(std::vector<PendingPush> &pushes,
                           std::vector<PendingDensePush> &densePushes,
                           const Channel &channel) {
  if (!densePushes.empty())
    exchangeDensePushes(densePushes, channel);
  if (pushes.empty())
    return;
  const World &w = world();
  if (w.localSize > 1)
    aggregateOnMachine(pushes, channel);

  // Route each row to its owner, every variable in one exchange.
  std::vector<int64_t> widths;
  std::vector<std::vector<Parcel>> out(w.size,
                                       std::vector<Parcel>(pushes.size()));
  for (size_t v = 0; v < pushes.size(); ++v) {
    const PendingPush &push = pushes[v];
    widths.push_back(push.width);
    for (size_t i = 0; i < push.rowsOut.ids.size(); ++i) {
      Parcel &to = out[push.parts.ownerOfRow(push.rowsOut.ids[i], w.size)][v];
      to.ids.push_back(push.rowsOut.ids[i]);
      to.values.insert(to.values.end(),
                       push.rowsOut.values.begin() + i * push.width,
                       push.rowsOut.values.begin() + (i + 1) * push.width);
    }
  }
  std::vector<std::vector<Parcel>> in =
      exchangeParcels(out, widths, Carries::Both, {}, "a push", channel);
  for (size_t v = 0; v < pushes.size(); ++v) {
    PendingPush &push = pushes[v];
    int64_t rowBytes = parcelBytes(1, push.width, Carries::Both);
    Parcel own;
    int64_t sent = 0, received = 0;
    for (int r = 0; r < w.size; ++r) {
      if (r != w.rank) {
        sent += out[r][v].ids.size() * rowBytes;
        received += in[r][v].ids.size() * rowBytes;
      }
      own.ids.insert(own.ids.end(), in[r][v].ids.begin(), in[r][v].ids.end());
      own.values.insert(own.values.end(), in[r][v].values.begin(),
                        in[r][v].values.end());
    }
    account(push.name, sent, received);
    int64_t distinct = sumRepeatedRows(own.ids, own.values, push.width);
    applyRows(push.rule, push.name, push.variable, push.parts.rows, push.width,
              own.ids.data(), distinct, own.values.data(), 1.0f / w.size,
              push.h);
  }
}

namespace {

/// An exchange of pushes handed to the communication thread, with the
/// times it ran (for the trace).
struct PushExchange {
  std::vector<PendingPush> pushes;
  std::vector<PendingDensePush> densePushes;
  std::string names;
  double begin = 0, end = 0;
};
/// Submitted and not yet waited for, oldest first; the thread runs them in
/// that order.
std::vector<std::shared_ptr<PushExchange>> pushesInFlight;
uint64_t lastPushTicket = 0;

/// Takes the queued pushes, sparse and dense.
std::shared_ptr<PushExchange> takePendingPushes() {
  auto exchange = std::make_shared<PushExchange>();
  exchange->pushes = std::move(pendingPushes);
  exchange->densePushes = std::move(pendingDensePushes);
  pendingPushes.clear();
  pendingDensePushes.clear();
  if (tracing()) {
    std::string sparse = namesOf(exchange->pushes),
                dense = namesOf(exchange->densePushes);
    exchange->names =
        sparse + (sparse.empty() || dense.empty() ? "" : ", ") + dense;
  }
  return exchange;
}

/// The trace's category of an exchange: "sparse" where it carries rows.
const char *categoryOf(const PushExchange &exchange) {
  return exchange.pushes.empty() ? "dense" : "sparse";
}

} // namespace

void parallax::runtime::sendPushes() {
  // Nothing goes to the communication thread where the GPUs exchange the
  // pushes: this thread is the only one to touch currentEverywhere.
  for (std::string &name : sendDevicePushes())
    currentEverywhere.insert(std::move(name));
  if (pendingPushes.empty() && pendingDensePushes.empty())
    return;
  std::shared_ptr<PushExchange> exchange = takePendingPushes();
  if (!commThreadEnabled()) {
    TraceScope trace(
        "comm", [&] { return "push " + exchange->names; },
        categoryOf(*exchange));
    exchangePushes(exchange->pushes, exchange->densePushes,
                   mainThreadChannel());
    return;
  }
  TraceScope trace(
      "comm", [&] { return "push send (" + exchange->names + ")"; },
      categoryOf(*exchange));
  pushesInFlight.push_back(exchange);
  lastPushTicket = submitToCommThread(CommLane::Pushes, [exchange] {
    bool timed = tracing();
    if (timed)
      exchange->begin = parallax_rt_now();
    exchangePushes(exchange->pushes, exchange->densePushes,
                   pushThreadChannel());
    if (timed)
      exchange->end = parallax_rt_now();
  });
}

void parallax::runtime::flushPushes() {
  sendPushes();
  if (pushesInFlight.empty())
    return;
  {
    TraceScope trace(
        "comm", [] { return std::string("push wait"); }, "sparse");
    waitForCommThread(CommLane::Pushes, lastPushTicket,
                      "the exchange of pushed rows");
  }
  if (tracing())
    for (const auto &exchange : pushesInFlight)
      traceInFlight("push " + exchange->names, "comm", exchange->begin,
                    exchange->end, categoryOf(*exchange));
  pushesInFlight.clear();
}

extern "C" void parallax_rt_push_send() { sendPushes(); }

void parallax::runtime::pushDenseGradient(rowkernels::Rule rule,
                                          const char *name, int64_t partitions,
                                          int64_t firstServer,
                                          const Slots &variable, int64_t rows,
                                          int64_t width, const float *gradient,
                                          const Hyper &h) {
  if (world().size == 1) {
    TraceScope trace(
        "comm", [&] { return std::string("push ") + name; }, "dense");
    hostKernel(rule)(variable, gradient, rows * width, h);
    return;
  }
  if (deviceCollectives()) {
    queueDeviceDensePush(rule, name,
                         Partitioning(rows, partitions, firstServer), variable,
                         width, gradient, h);
    return;
  }
  pendingDensePushes.push_back(
      {{rule, name, Partitioning(rows, partitions, firstServer), variable,
        width, h},
       std::vector<float>(gradient, gradient + rows * width)});
}

bool parallax::runtime::streamPartitionsToRoot(
    const char *name, int64_t partitions, int64_t firstServer,
    const float *data, int64_t rows, int64_t width,
    const std::function<bool(const float *, int64_t)> &consume) {
  flushPushes(); // the servers' rows must be current
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

extern "C" void parallax_rt_pull_rows_request_f32(
    const char *name, int64_t partitions, int64_t firstServer, int64_t rankW,
    void *w, int64_t rankI, void *ids, int64_t rankO, void *out) {
  const float *table = contiguousF32(name, "variable", rankW, w);
  int64_t rows = leadingRows(rankW, w);
  pendingPulls.push_back(
      {name, Partitioning(rows, partitions, firstServer), table,
       rowWidth(rankW, w),
       rowIdsOf(name, rowIds(rankI, ids), elementCount(rankI, ids), rows),
       contiguousF32(name, "pulled rows", rankO, out)});
}

extern "C" void parallax_rt_pull_rows_complete() {
  if (pendingPulls.empty())
    return;
  TraceScope trace(
      "comm", [] { return "pull " + namesOf(pendingPulls); }, "rows");
  std::vector<PullRequest> pulls = std::move(pendingPulls);
  pendingPulls.clear();
  const World &wld = world();
  if (wld.size == 1) {
    for (const PullRequest &pull : pulls)
      for (size_t i = 0; i < pull.requested.size(); ++i)
        std::memcpy(pull.out + i * pull.width,
                    pull.table + pull.requested[i] * pull.width,
                    pull.width * sizeof(float));
    return;
  }
  flushPushes(); // the rows must include this step's pushes
  if (deviceCollectives()) {
    completeDevicePulls(pulls);
    return;
  }

  // Ask each owner for the distinct rows it serves, every variable at once.
  size_t variables = pulls.size();
  std::vector<std::vector<int64_t>> distinct(variables);
  std::vector<int64_t> widths, noWidths(variables, 0);
  std::vector<std::vector<Parcel>> asks(wld.size,
                                        std::vector<Parcel>(variables));
  for (size_t v = 0; v < variables; ++v) {
    const PullRequest &pull = pulls[v];
    widths.push_back(pull.width);
    distinct[v] = pull.requested;
    std::sort(distinct[v].begin(), distinct[v].end());
    distinct[v].erase(std::unique(distinct[v].begin(), distinct[v].end()),
                      distinct[v].end());
    for (int64_t id : distinct[v])
      asks[pull.parts.ownerOfRow(id, wld.size)][v].ids.push_back(id);
  }
  std::vector<std::vector<Parcel>> asked = exchangeParcels(
      asks, noWidths, Carries::Ids, {}, "a pull", mainThreadChannel());

  // Reply with the rows, in the order asked; the requester knows how many.
  std::vector<std::vector<Parcel>> replies(wld.size,
                                           std::vector<Parcel>(variables));
  std::vector<int> expected(wld.size * variables);
  for (int r = 0; r < wld.size; ++r)
    for (size_t v = 0; v < variables; ++v) {
      const PullRequest &pull = pulls[v];
      for (int64_t id : asked[r][v].ids)
        replies[r][v].values.insert(replies[r][v].values.end(),
                                    pull.table + id * pull.width,
                                    pull.table + (id + 1) * pull.width);
      expected[r * variables + v] = mpiCount(asks[r][v].ids.size(), "a pull");
    }
  std::vector<std::vector<Parcel>> fetched =
      exchangeParcels(replies, widths, Carries::Values, std::move(expected),
                      "a pull", mainThreadChannel());

  for (size_t v = 0; v < variables; ++v) {
    const PullRequest &pull = pulls[v];
    int64_t rowBytes = pull.width * int64_t(sizeof(float));
    int64_t sent = 0, received = 0;
    // Each distinct row's values, in the order of distinct[v].
    std::vector<const float *> rowOf(distinct[v].size());
    for (int r = 0; r < wld.size; ++r) {
      if (r != wld.rank) {
        sent +=
            asks[r][v].ids.size() * idBytes + asked[r][v].ids.size() * rowBytes;
        received +=
            asked[r][v].ids.size() * idBytes + asks[r][v].ids.size() * rowBytes;
      }
      for (size_t i = 0; i < asks[r][v].ids.size(); ++i) {
        size_t at = std::lower_bound(distinct[v].begin(), distinct[v].end(),
                                     asks[r][v].ids[i]) -
                    distinct[v].begin();
        rowOf[at] = fetched[r][v].values.data() + i * pull.width;
      }
    }
    account(pull.name, sent, received);
    for (size_t i = 0; i < pull.requested.size(); ++i) {
      size_t at = std::lower_bound(distinct[v].begin(), distinct[v].end(),
                                   pull.requested[i]) -
                  distinct[v].begin();
      std::memcpy(pull.out + i * pull.width, rowOf[at],
                  pull.width * sizeof(float));
    }
  }
}

extern "C" void parallax_rt_pull_rows_f32(const char *name, int64_t partitions,
                                          int64_t firstServer, int64_t rankW,
                                          void *w, int64_t rankI, void *ids,
                                          int64_t rankO, void *out) {
  parallax_rt_pull_rows_request_f32(name, partitions, firstServer, rankW, w,
                                    rankI, ids, rankO, out);
  parallax_rt_pull_rows_complete();
}

extern "C" void parallax_rt_pull_f32(const char *name, int64_t partitions,
                                     int64_t firstServer, int64_t rankW,
                                     void *w) {
  if (world().size == 1)
    return;
  flushPushes();
  float *table = contiguousF32(name, "variable", rankW, w);
  // Current everywhere since the exchange of its last push, or since its
  // last pull: nothing to fetch. Otherwise (the first pull of a run: each
  // rank has loaded only the partitions it serves) its owners broadcast
  // their partitions.
  if (!currentEverywhere.insert(name).second)
    return;
  TraceScope trace(
      "comm", [&] { return std::string("pull ") + name; }, "whole");
  broadcastPartitions(
      name, Partitioning(leadingRows(rankW, w), partitions, firstServer), table,
      rowWidth(rankW, w));
}
