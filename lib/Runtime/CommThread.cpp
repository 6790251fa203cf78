//===- CommThread.cpp - Communication that progresses beside compute ------===//
//
// Part of the Parallax project.
//
// OpenMPI progresses a non-blocking collective only inside MPI calls, and
// the main thread makes none while it computes the backward pass: a
// bucket started early moved only when the next MPI call came. Here a
// thread of its own runs each started bucket to completion, on its own
// communicator, while the main thread computes; a second one does the
// same for the step's exchange of pushed rows, so that neither waits
// behind the other. Their waits poll gently (yield, then sleep), and they
// sleep on a condition variable when they have nothing to do, so they
// never spin against the compute of co-located ranks.
//
//===----------------------------------------------------------------------===//

#include "CommThread.h"

#include "parallax/Runtime/Runtime.h"

#include "Comm.h"
#include "Support.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <sched.h>
#include <string>
#include <thread>
#include <vector>

using namespace parallax::runtime;

namespace {

/// Per lane, main threads blocked in waitForCommJob for one of its jobs:
/// while one is, the rank computes nothing, so that lane's thread polls by
/// yielding rather than sleeping (a sleep costs a timer's slack and a
/// wake-up per round, which on a network of small collectives is most of
/// the step's wait). Per lane, so that the other lane's thread keeps
/// sleeping between its polls: yielding threads still take turns on cores
/// that co-located ranks need.
std::atomic<int> mainThreadsWaiting[2] = {0, 0};

/// The lane of the communication thread running this code; -1 elsewhere.
thread_local int currentLane = -1;

struct CommThread {
  int lane;
  std::mutex mutex;
  std::condition_variable wake, finished;
  std::deque<std::function<void()>> queue;
  uint64_t submitted = 0, completed = 0;
  bool stopping = false;
  std::thread thread;

  void run() {
    currentLane = lane;
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty())
          return;
        job = std::move(queue.front());
        queue.pop_front();
      }
      job();
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++completed;
      }
      finished.notify_all();
    }
  }
};

/// One per CommLane, started by its first job. Never destroyed: a job
/// that ends with die() leaves the thread running while the process exits,
/// and a joinable std::thread destroyed at exit would call std::terminate.
CommThread *commThreads[2] = {nullptr, nullptr};

CommThread *&threadOf(CommLane lane) {
  return commThreads[static_cast<int>(lane)];
}

bool turnedOffByEnvironment() {
  const char *text = std::getenv("PARALLAX_COMM_THREAD");
  if (!text)
    return false;
  std::string value = text;
  if (value == "0")
    return true;
  if (value == "1")
    return false;
  die("PARALLAX_COMM_THREAD must be 0 (off) or 1 (on, the default), got '" +
      value + "'");
}

} // namespace

/// Tight polls first (a transfer between ready peers completes within
/// microseconds), then yields, then, while the main thread computes, 50 us
/// sleeps between polls. No deadline here: the main thread's wait for the
/// job finds silent peers.
void parallax::runtime::pollCommRequests(int count, MPI_Request *requests,
                                         const char *what) {
  double start = 0;
  for (uint64_t polls = 0;; ++polls) {
    int done = 0;
    checkMPI(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), what);
    if (done)
      return;
    if (polls < 64)
      continue;
    if (polls == 64)
      start = parallax_rt_now();
    if (parallax_rt_now() - start < 200e-6 ||
        (currentLane >= 0 && mainThreadsWaiting[currentLane].load() > 0))
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

namespace {

void reduceInto(float *into, const float *from, int64_t count,
                int32_t reduction) {
  switch (reduction) {
  case PARALLAX_RT_REDUCE_MAX:
    for (int64_t i = 0; i < count; ++i)
      into[i] = from[i] > into[i] ? from[i] : into[i];
    break;
  case PARALLAX_RT_REDUCE_MIN:
    for (int64_t i = 0; i < count; ++i)
      into[i] = from[i] < into[i] ? from[i] : into[i];
    break;
  default: // sum, and a mean (scaled by the caller)
    for (int64_t i = 0; i < count; ++i)
      into[i] += from[i];
  }
}

/// One ring step: receives `receiveCount` floats from the left neighbour
/// into `into` while sending `sendCount` from `from` to the right one, in
/// segments of kRingSegmentFloats with at most two in flight each way, and
/// calls `received(offset, count)` for each segment that arrived: a
/// segment is reduced while the next one travels, and little of a bucket
/// is queued on the connection at a time (docs/distributed.md has the
/// measurements).
template <typename Received>
void ringStep(float *into, int64_t receiveCount, const float *from,
              int64_t sendCount, int left, int right, MPI_Comm comm,
              WaitForRequests wait, const char *what, Received received) {
  auto segments = [](int64_t count) {
    return std::max<int64_t>(1, (count + kRingSegmentFloats - 1) /
                                    kRingSegmentFloats);
  };
  auto extent = [](int64_t count, int64_t k) {
    int64_t begin = k * kRingSegmentFloats;
    return std::pair<int64_t, int64_t>{
        begin, std::min(count, begin + kRingSegmentFloats) - begin};
  };
  int64_t receives = segments(receiveCount), sends = segments(sendCount);
  // Slot k % 2 holds segment k's receive and send.
  MPI_Request requests[2][2] = {{MPI_REQUEST_NULL, MPI_REQUEST_NULL},
                                {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
  auto finish = [&](int64_t k) {
    wait(2, requests[k % 2], what);
    if (k < receives) {
      auto [offset, count] = extent(receiveCount, k);
      received(offset, count);
    }
  };
  int64_t total = std::max(receives, sends);
  for (int64_t k = 0; k < total; ++k) {
    if (k >= 2)
      finish(k - 2);
    MPI_Request *slot = requests[k % 2];
    if (k < receives) {
      auto [offset, count] = extent(receiveCount, k);
      checkMPI(MPI_Irecv(into + offset, mpiCount(count, "a ring chunk"),
                         MPI_FLOAT, left, 0, comm, &slot[0]),
               "MPI_Irecv (ring)");
    }
    if (k < sends) {
      auto [offset, count] = extent(sendCount, k);
      checkMPI(MPI_Isend(from + offset, mpiCount(count, "a ring chunk"),
                         MPI_FLOAT, right, 0, comm, &slot[1]),
               "MPI_Isend (ring)");
    }
  }
  for (int64_t k = std::max<int64_t>(0, total - 2); k < total; ++k)
    finish(k);
}

/// Where the ring's chunks lie: chunk c is [begin(c), begin(c) + length(c)).
/// After the reduce-scatter, rank r holds chunk (r + 1) % size reduced.
struct RingChunks {
  std::vector<int64_t> begins, lengths;
  /// `size` chunks of `count` floats, their lengths differing by one at most.
  static RingChunks equal(int64_t count, int size) {
    RingChunks chunks;
    for (int c = 0; c < size; ++c) {
      chunks.begins.push_back(c * count / size);
      chunks.lengths.push_back((c + 1) * count / size - c * count / size);
    }
    return chunks;
  }
  /// Rank r's segment of `counts` (laid out in rank order) as the chunk
  /// the reduce-scatter leaves on rank r.
  static RingChunks owned(const std::vector<int64_t> &counts) {
    int size = static_cast<int>(counts.size());
    std::vector<int64_t> offsets = displacements(counts);
    RingChunks chunks;
    for (int c = 0; c < size; ++c) {
      int owner = (c + size - 1) % size;
      chunks.begins.push_back(offsets[owner]);
      chunks.lengths.push_back(counts[owner]);
    }
    return chunks;
  }
};

/// Reduce-scatter: at step s rank r sends chunk r - s and adds chunk
/// r - s - 1 from its left; after size - 1 steps it holds chunk r + 1
/// reduced over every rank.
void ringReduceScatter(float *data, const RingChunks &chunks, int32_t reduction,
                       MPI_Comm comm, int rank, int size,
                       WaitForRequests wait) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  thread_local std::vector<float> scratch;
  scratch.resize(static_cast<size_t>(
      *std::max_element(chunks.lengths.begin(), chunks.lengths.end())));
  for (int s = 0; s + 1 < size; ++s) {
    int send = (rank - s + 2 * size) % size;
    int receive = (rank - s - 1 + 2 * size) % size;
    float *target = data + chunks.begins[receive];
    ringStep(scratch.data(), chunks.lengths[receive],
             data + chunks.begins[send], chunks.lengths[send], left, right,
             comm, wait, "the ring's reduce-scatter",
             [&](int64_t offset, int64_t count) {
               reduceInto(target + offset, scratch.data() + offset, count,
                          reduction);
             });
  }
}

/// Allgather: the chunk each rank holds after the reduce-scatter travels
/// once around the ring, so every rank ends with the bits its holder
/// computed.
void ringAllgather(float *data, const RingChunks &chunks, MPI_Comm comm,
                   int rank, int size, WaitForRequests wait) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int s = 0; s + 1 < size; ++s) {
    int send = (rank + 1 - s + 2 * size) % size;
    int receive = (rank - s + 2 * size) % size;
    ringStep(data + chunks.begins[receive], chunks.lengths[receive],
             data + chunks.begins[send], chunks.lengths[send], left, right,
             comm, wait, "the ring's allgather", [](int64_t, int64_t) {});
  }
}

/// `counts` as MPI's int counts (dies naming `what` where one does not
/// fit).
std::vector<int> mpiCounts(const std::vector<int64_t> &counts,
                           const char *what) {
  std::vector<int> result;
  for (int64_t count : counts)
    result.push_back(mpiCount(count, what));
  return result;
}

/// The ranks of `comm`, and how a collective over `counts` (floats per
/// rank) goes: not at all (one rank, or nothing to move), around the ring
/// (kRingMinBytes and more), or as one MPI collective (fewer rounds).
struct SegmentedCollective {
  int rank = 0, size = 1;
  bool nothing = false, ring = false;
  SegmentedCollective(MPI_Comm comm, const std::vector<int64_t> &counts) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int64_t total = 0;
    for (int64_t count : counts)
      total += count;
    nothing = size == 1 || total == 0;
    ring = total * static_cast<int64_t>(sizeof(float)) >= kRingMinBytes;
  }
};

} // namespace

bool parallax::runtime::commThreadEnabled() {
  static const bool enabled = [] {
    const World &w = world();
    return w.mpi && w.size > 1 && w.threadMultiple && !turnedOffByEnvironment();
  }();
  return enabled;
}

std::string parallax::runtime::describeCommunication() {
  std::string text =
      commThreadEnabled()
          ? "communication: a thread reduces the AllReduce buckets while the "
            "step computes (a ring over MPI point-to-point for buckets of " +
                std::to_string(kRingMinBytes / 1024) + " KiB and more)"
          : std::string("communication: AllReduce buckets progress in the "
                        "main thread's MPI calls (") +
                (world().threadMultiple
                     ? "PARALLAX_COMM_THREAD=0"
                     : "this MPI lacks MPI_THREAD_MULTIPLE") +
                ")";
  const World &w = world();
  if (commThreadEnabled() && w.machinesAlike())
    text += "; buckets of " + std::to_string(kRingMinBytes / 1024) +
            " KiB and more reduced within each of the " +
            std::to_string(w.machines) + " machines first (" +
            std::to_string(w.localSize) + " ranks each)";
  const char *yield = std::getenv("OMPI_MCA_mpi_yield_when_idle");
  return text + (yield && std::string(yield) != "0"
                     ? "; MPI yields when idle"
                     : "; MPI spins when idle (mpi_yield_when_idle 0)");
}

uint64_t parallax::runtime::submitToCommThread(CommLane lane,
                                               std::function<void()> job) {
  CommThread *&commThread = threadOf(lane);
  if (!commThread) {
    commThread = new CommThread;
    commThread->lane = static_cast<int>(lane);
    CommThread *started = commThread;
    started->thread = std::thread([started] { started->run(); });
  }
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(commThread->mutex);
    commThread->queue.push_back(std::move(job));
    ticket = commThread->submitted++;
  }
  commThread->wake.notify_one();
  return ticket;
}

bool parallax::runtime::waitForCommJob(CommLane lane, uint64_t ticket,
                                       double seconds) {
  CommThread *commThread = threadOf(lane);
  ++mainThreadsWaiting[static_cast<int>(lane)];
  std::unique_lock<std::mutex> lock(commThread->mutex);
  bool done = commThread->finished.wait_for(
      lock, std::chrono::duration<double>(seconds),
      [&] { return commThread->completed > ticket; });
  --mainThreadsWaiting[static_cast<int>(lane)];
  return done;
}

void parallax::runtime::stopCommThread() {
  for (CommThread *&commThread : commThreads) {
    if (!commThread)
      continue;
    {
      std::lock_guard<std::mutex> lock(commThread->mutex);
      commThread->stopping = true;
    }
    commThread->wake.notify_one();
    commThread->thread.join();
    delete commThread;
    commThread = nullptr;
  }
}

void parallax::runtime::allreduceInPlace(float *data, int64_t count,
                                         int32_t reduction, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1 || count == 0)
    return;
  if (count >= size &&
      count * static_cast<int64_t>(sizeof(float)) >= kRingMinBytes) {
    RingChunks chunks = RingChunks::equal(count, size);
    ringReduceScatter(data, chunks, reduction, comm, rank, size,
                      pollCommRequests);
    ringAllgather(data, chunks, comm, rank, size, pollCommRequests);
    return;
  }
  MPI_Request request;
  checkMPI(MPI_Iallreduce(MPI_IN_PLACE, data, mpiCount(count, "an AllReduce"),
                          MPI_FLOAT,
                          reduction == PARALLAX_RT_REDUCE_MAX   ? MPI_MAX
                          : reduction == PARALLAX_RT_REDUCE_MIN ? MPI_MIN
                                                                : MPI_SUM,
                          comm, &request),
           "MPI_Iallreduce");
  pollCommRequests(1, &request, "an AllReduce");
}

namespace {

/// Whether allreduceBucket reduces `count` floats by machine.
bool byMachine(int64_t count) {
  const World &w = world();
  return w.machinesAlike() && count >= w.size &&
         count * static_cast<int64_t>(sizeof(float)) >= kRingMinBytes;
}

} // namespace

void parallax::runtime::allreduceBucket(float *data, int64_t count,
                                        int32_t reduction) {
  const World &w = world();
  if (!byMachine(count)) {
    allreduceInPlace(data, count, reduction, w.collectives);
    return;
  }
  // After the reduce-scatter, local rank r holds chunk (r + 1) % G.
  RingChunks chunks = RingChunks::equal(count, w.localSize);
  ringReduceScatter(data, chunks, reduction, w.bucketsLocal, w.localRank,
                    w.localSize, pollCommRequests);
  int mine = (w.localRank + 1) % w.localSize;
  allreduceInPlace(data + chunks.begins[mine], chunks.lengths[mine], reduction,
                   w.bucketsAcross);
  ringAllgather(data, chunks, w.bucketsLocal, w.localRank, w.localSize,
                pollCommRequests);
}

namespace {

/// `counts` (floats per rank, in rank order) rearranged for the
/// collectives by machine: by local rank, then machine. Local rank l's
/// block holds the segments of the ranks with local rank l on every
/// machine; the reduce-scatter within a machine leaves it on local rank l,
/// whose partners on the other machines then share it out.
struct MachineLayout {
  std::vector<int64_t> offsets;  // each rank's segment, as the caller has it
  std::vector<int64_t> at;       // each rank's segment, rearranged
  std::vector<int64_t> blocks;   // floats per local rank's block
  std::vector<int64_t> segments; // this rank's block's segments by machine
  int64_t block = 0, total = 0;  // this rank's block; all floats
  explicit MachineLayout(const std::vector<int64_t> &counts) {
    const World &w = world();
    int g = w.localSize, m = w.machines;
    offsets = displacements(counts);
    at.assign(w.size, 0);
    blocks.assign(g, 0);
    segments.assign(m, 0);
    for (int l = 0; l < g; ++l) {
      if (l == w.localRank)
        block = total;
      for (int k = 0; k < m; ++k) {
        int r = w.rankAt[k * g + l];
        at[r] = total;
        total += counts[r];
        blocks[l] += counts[r];
        if (l == w.localRank)
          segments[k] = counts[r];
      }
    }
  }
};

bool goesByMachine(const std::vector<int64_t> &counts, MPI_Comm across) {
  int64_t total = 0;
  for (int64_t count : counts)
    total += count;
  return across != MPI_COMM_NULL &&
         total * static_cast<int64_t>(sizeof(float)) >= kRingMinBytes;
}

/// The rearranged copy for `layout`, kept from call to call (see
/// exchangeDensePushes), one per thread.
float *rearrangedFor(const MachineLayout &layout) {
  thread_local std::vector<float> rearranged;
  if (static_cast<int64_t>(rearranged.size()) < layout.total)
    rearranged.resize(layout.total);
  return rearranged.data();
}

} // namespace

void parallax::runtime::reduceScatterByMachine(
    float *data, const std::vector<int64_t> &counts, MPI_Comm all,
    MPI_Comm machine, MPI_Comm across, WaitForRequests wait) {
  if (!goesByMachine(counts, across)) {
    reduceScatterInPlace(data, counts, all, wait);
    return;
  }
  const World &w = world();
  MachineLayout layout(counts);
  float *rearranged = rearrangedFor(layout);
  for (int r = 0; r < w.size; ++r)
    std::copy_n(data + layout.offsets[r], counts[r], rearranged + layout.at[r]);
  reduceScatterInPlace(rearranged, layout.blocks, machine, wait);
  reduceScatterInPlace(rearranged + layout.block, layout.segments, across,
                       wait);
  std::copy_n(rearranged + layout.at[w.rank], counts[w.rank],
              data + layout.offsets[w.rank]);
}

void parallax::runtime::allgatherByMachine(float *data,
                                           const std::vector<int64_t> &counts,
                                           MPI_Comm all, MPI_Comm machine,
                                           MPI_Comm across,
                                           WaitForRequests wait) {
  if (!goesByMachine(counts, across)) {
    allgatherInPlace(data, counts, all, wait);
    return;
  }
  const World &w = world();
  MachineLayout layout(counts);
  float *rearranged = rearrangedFor(layout);
  std::copy_n(data + layout.offsets[w.rank], counts[w.rank],
              rearranged + layout.at[w.rank]);
  allgatherInPlace(rearranged + layout.block, layout.segments, across, wait);
  allgatherInPlace(rearranged, layout.blocks, machine, wait);
  for (int r = 0; r < w.size; ++r)
    if (r != w.rank)
      std::copy_n(rearranged + layout.at[r], counts[r],
                  data + layout.offsets[r]);
}

void parallax::runtime::reduceScatterInPlace(float *data,
                                             const std::vector<int64_t> &counts,
                                             MPI_Comm comm,
                                             WaitForRequests wait) {
  SegmentedCollective how(comm, counts);
  if (how.nothing)
    return;
  if (how.ring) {
    ringReduceScatter(data, RingChunks::owned(counts), PARALLAX_RT_REDUCE_SUM,
                      comm, how.rank, how.size, wait);
    return;
  }
  const char *what = "a reduce-scatter";
  std::vector<int64_t> offsets = displacements(counts);
  std::vector<float> mine(counts[how.rank]);
  MPI_Request request;
  checkMPI(MPI_Ireduce_scatter(data, mine.data(),
                               mpiCounts(counts, what).data(), MPI_FLOAT,
                               MPI_SUM, comm, &request),
           "MPI_Ireduce_scatter");
  wait(1, &request, what);
  std::copy(mine.begin(), mine.end(), data + offsets[how.rank]);
}

void parallax::runtime::allgatherInPlace(float *data,
                                         const std::vector<int64_t> &counts,
                                         MPI_Comm comm, WaitForRequests wait) {
  SegmentedCollective how(comm, counts);
  if (how.nothing)
    return;
  if (how.ring) {
    ringAllgather(data, RingChunks::owned(counts), comm, how.rank, how.size,
                  wait);
    return;
  }
  const char *what = "an allgather";
  MPI_Request request;
  checkMPI(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data,
                           mpiCounts(counts, what).data(),
                           mpiCounts(displacements(counts), what).data(),
                           MPI_FLOAT, comm, &request),
           "MPI_Iallgatherv");
  wait(1, &request, what);
}
