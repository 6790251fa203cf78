//===- Comm.h - MPI world, machines and traffic accounting ------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_COMM_H
#define PARALLAX_LIB_RUNTIME_COMM_H

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace parallax::runtime {

/// The workers of a job. Without an MPI launcher a program is the only
/// worker and MPI is never initialised.
struct World {
  bool mpi = false;
  int rank = 0, size = 1;
  /// Machines: ranks sharing memory (MPI_COMM_TYPE_SHARED), or groups of
  /// PARALLAX_RANKS_PER_MACHINE consecutive ranks.
  int machine = 0, machines = 1, localRank = 0, localSize = 1;
  MPI_Comm comm = MPI_COMM_NULL;    // every rank
  MPI_Comm local = MPI_COMM_NULL;   // the ranks of this machine
  MPI_Comm control = MPI_COMM_NULL; // liveness probes (a dup of comm)
  /// The communication thread's AllReduce traffic (a dup of comm), apart
  /// from the main thread's messages.
  MPI_Comm collectives = MPI_COMM_NULL;
  /// The communication thread's exchanges of pushed rows (dups of comm and
  /// local), apart from the buckets and the main thread.
  MPI_Comm pushes = MPI_COMM_NULL, pushesLocal = MPI_COMM_NULL;
  /// Where machines are alike (several, each of the same number of ranks,
  /// more than one), collectives over every rank go by machine
  /// (CommThread.h). For them: the ranks of every machine with this local
  /// rank, ordered by machine (for the main thread, the pushes' thread and
  /// the buckets' thread), the buckets' own dup of `local`, and the rank at
  /// each machine * localSize + local rank. Null and empty otherwise.
  MPI_Comm across = MPI_COMM_NULL, pushesAcross = MPI_COMM_NULL,
           bucketsAcross = MPI_COMM_NULL, bucketsLocal = MPI_COMM_NULL;
  std::vector<int> rankAt;
  bool machinesAlike() const { return across != MPI_COMM_NULL; }
  /// MPI was initialised with MPI_THREAD_MULTIPLE.
  bool threadMultiple = false;
};

const World &world();

/// Initialises MPI when an MPI launcher (mpirun) started the program and
/// finds the machines; from then on die() aborts the whole job.
void initWorld(int *argc, char ***argv);

/// MPI_Finalize, when initialised.
void finalizeWorld();

/// Bytes this rank sent to / received from other ranks.
struct Traffic {
  int64_t sent = 0, received = 0;
};
using TrafficByVariable = std::vector<std::pair<std::string, Traffic>>;

/// Counts traffic for `variable` (a variable name, or what moved); any
/// thread may call it.
void account(const std::string &variable, int64_t sent, int64_t received);

/// Traffic since the last call, per variable in first-seen order; resets.
TrafficByVariable takeStepTraffic();

/// Traffic of the whole run so far.
Traffic totalTraffic();

/// Dies with `what` and the MPI error text unless `code` is MPI_SUCCESS.
void checkMPI(int code, const char *what);

/// Waits for `count` requests while answering the liveness probes of
/// other ranks. Past the deadline (the communication timeout plus the
/// longest step so far plus any extra allowance) it probes every rank,
/// and ends the job naming the ranks that do not answer (stopped, wedged
/// or cut off); `what` names the operation in that message. Every
/// blocking communication of the runtime goes through here, so a silent
/// peer never hangs the job.
void waitFor(int count, MPI_Request *requests, const char *what);
inline void waitFor(MPI_Request &request, const char *what) {
  waitFor(1, &request, what);
}

/// The same watch over a wait for job `ticket` of the communication
/// thread of `lane` (CommThread.h), which the caller blocks on without
/// polling.
enum class CommLane;
void waitForCommThread(CommLane lane, uint64_t ticket, const char *what);

/// The same watch over any wait: calls `poll` (which may block for a
/// moment) until it returns true.
void waitUntil(const std::function<bool()> &poll, const char *what);

/// Ends the job with `failure` (a library's report of a lost peer), naming
/// the ranks that do not answer a probe.
[[noreturn]] void dieNamingSilentRanks(const std::string &failure);

/// A barrier of `comm` through waitFor.
void barrier(MPI_Comm comm, const char *what);

/// Seconds a wait may last before the silent ranks are looked for; 0
/// waits forever. Default 60.
void setCommTimeout(double seconds);
double commTimeout();

/// The deadline grows with the longest step seen: a slow step of a peer
/// is not silence.
void noteStepTime(double seconds);

/// Extra seconds for the waits until the next step ends (the other ranks
/// wait while worker 0 writes a checkpoint).
void allowExtraWait(double seconds);

/// Answers pending liveness probes: called between long pieces of local
/// work (checkpoint files) so that waiting peers see this rank is alive.
void serveProbes();

/// MPI counts are int: dies naming `what` when `count` does not fit.
int mpiCount(int64_t count, const char *what);

/// Where each of `counts` starts when they lie one after another (the
/// displacements of MPI's `v` collectives).
template <typename Count>
std::vector<Count> displacements(const std::vector<Count> &counts) {
  std::vector<Count> offsets(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i)
    offsets[i] = offsets[i - 1] + counts[i - 1];
  return offsets;
}

/// Every rank's `mine`, in rank order, on worker 0 (other ranks get an
/// empty vector); `what` names the gathered data in errors. Every rank
/// must call it.
std::vector<std::string> gatherToRoot(const std::string &mine,
                                      const char *what);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_COMM_H
