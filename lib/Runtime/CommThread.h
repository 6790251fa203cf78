//===- CommThread.h - Communication that progresses beside compute -*- C++
//-*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_COMMTHREAD_H
#define PARALLAX_LIB_RUNTIME_COMMTHREAD_H

#include "parallax/Analysis/CostModel.h"

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace parallax::runtime {

/// Whether the communication threads run (dense AllReduce buckets, the
/// exchanges of pushed rows): several workers, MPI initialised with
/// MPI_THREAD_MULTIPLE, and not turned off with PARALLAX_COMM_THREAD=0.
/// Otherwise a bucket is one MPI_Iallreduce that progresses only inside
/// the main thread's MPI calls, and the main thread exchanges the pushes.
bool commThreadEnabled();

/// One line for --verbose: what drives the AllReduce buckets, and why.
std::string describeCommunication();

/// The communication threads: one reduces the dense AllReduce buckets,
/// one exchanges the step's pushed rows, so that neither waits behind the
/// other.
enum class CommLane { Buckets, Pushes };

/// Queues `job` on the thread of `lane`, which runs its jobs one at a time
/// in the order they were submitted (every rank submits the same jobs in
/// the same order, so their messages match). Returns the job's ticket.
uint64_t submitToCommThread(CommLane lane, std::function<void()> job);

/// Blocks the caller until job `ticket` of `lane` has run or `seconds`
/// have passed; true when it has run. Blocking, not polling: a waiting
/// main thread leaves the cores to the communication threads and to
/// co-located ranks.
bool waitForCommJob(CommLane lane, uint64_t ticket, double seconds);

/// Lets the communication threads finish their queues and joins them
/// (before MPI_Finalize). Safe to call when none started.
void stopCommThread();

/// How a caller waits for its MPI requests: a communication thread polls
/// (pollCommRequests: tight polls, then yields, then short sleeps, no
/// deadline), the main thread goes through waitFor (Comm.h: liveness
/// probes and the communication deadline).
using WaitForRequests = void (*)(int count, MPI_Request *requests,
                                 const char *what);
void pollCommRequests(int count, MPI_Request *requests, const char *what);

/// Sums (or takes the max or min of, by `reduction`, one of the
/// PARALLAX_RT_REDUCE_* kinds; a mean is a sum here) `count` floats at
/// `data` over every rank of `comm`, in place. Large buffers take a ring
/// (reduce-scatter, then allgather: each rank sends and receives
/// 2 (N-1)/N of the bytes, the bandwidth optimum) over MPI point-to-point;
/// small ones one MPI_Iallreduce (fewer rounds). Every rank ends with the
/// same bits. Meant for a communication thread: it waits with
/// pollCommRequests.
void allreduceInPlace(float *data, int64_t count, int32_t reduction,
                      MPI_Comm comm);

/// Reduces an AllReduce bucket of `count` floats over every rank of the
/// job, as allreduceInPlace does. Where the job has several machines of
/// G > 1 ranks each and the bucket takes the ring, by machine: a ring
/// within each machine leaves each rank 1/G of its machine's sum, one
/// AllReduce across machines per local rank reduces that share, and a ring
/// within each machine gathers the shares. A machine's NIC then carries
/// 2 (M-1)/M of the bytes each way instead of the 2 (N-1)/N of one ring
/// over all N ranks, in 2 (G-1) + 2 (M-1) rounds instead of 2 (N-1).
/// A rank sends and receives 2 (N-1)/N of the bytes either way. Every
/// rank ends with the same bits. For a communication thread.
void allreduceBucket(float *data, int64_t count, int32_t reduction);

/// Sums `data` over every rank of `comm` where each rank r keeps only its
/// own segment: the buffer is `counts` floats per rank, laid out in rank
/// order, and on return rank r's segment holds the sum of every rank's
/// (the rest is scratch). allgatherInPlace then gives every rank every
/// segment as its rank left it. Together they are an AllReduce with work
/// on the reduced segments in between (the parameter store's dense
/// variables). At kRingMinBytes and more the ring's two halves, below one
/// MPI_Ireduce_scatter and one MPI_Iallgatherv; `wait` waits for their
/// requests.
void reduceScatterInPlace(float *data, const std::vector<int64_t> &counts,
                          MPI_Comm comm, WaitForRequests wait);
void allgatherInPlace(float *data, const std::vector<int64_t> &counts,
                      MPI_Comm comm, WaitForRequests wait);

/// reduceScatterInPlace and allgatherInPlace over every rank, by machine
/// where machines are alike (World::machinesAlike) and the segments add up
/// to kRingMinBytes or more: the segments are rearranged by local rank;
/// a reduce-scatter within each machine (`machine`) leaves local rank l
/// the machine's sums of the segments of every machine's local rank l,
/// which a reduce-scatter across machines (`across`, ordered by machine)
/// shares out to their owners; the allgather undoes both. A NIC then
/// carries 2 (M-1)/M of the segments each way rather than 2 (N-1)/N.
/// Elsewhere over `all`.
void reduceScatterByMachine(float *data, const std::vector<int64_t> &counts,
                            MPI_Comm all, MPI_Comm machine, MPI_Comm across,
                            WaitForRequests wait);
void allgatherByMachine(float *data, const std::vector<int64_t> &counts,
                        MPI_Comm all, MPI_Comm machine, MPI_Comm across,
                        WaitForRequests wait);

/// Buckets of at least this many bytes (and one element per rank) take
/// the ring; the cost model counts rounds by the same rule.
constexpr int64_t kRingMinBytes =
    static_cast<int64_t>(mlir::parallax::kRingMinBytes);

/// The ring sends a chunk in segments of at most this many floats (256
/// KiB), two in flight at a time (1 MiB segments lost the gain measured
/// with these).
constexpr int64_t kRingSegmentFloats = (256 << 10) / sizeof(float);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_COMMTHREAD_H
