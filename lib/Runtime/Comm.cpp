//===- Comm.cpp - MPI world, machines and traffic accounting --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "CommThread.h"
#include "DeviceCollectives.h"
#include "Support.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <sched.h>
#include <thread>

using namespace parallax::runtime;

namespace {

World theWorld;
TrafficByVariable stepTraffic;
std::map<std::string, size_t> stepIndex;
Traffic total;
/// The communication thread counts its exchanges of pushed rows.
std::mutex trafficMutex;

double timeoutSeconds = 60, longestStep = 0, extraWait = 0;

// Tags of the control communicator.
constexpr int kProbeTag = 1, kAliveTag = 2;

/// Replies in flight: MPI needs their buffers until they complete.
struct Reply {
  int payload = 0;
  MPI_Request request = MPI_REQUEST_NULL;
};
std::deque<Reply> replies;

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// Ranks that do not answer a probe within `grace` seconds.
std::vector<int> silentRanks(double grace) {
  const World &w = world();
  std::vector<int> payload(w.size, w.rank), answers(w.size, 0);
  std::vector<MPI_Request> probes(w.size, MPI_REQUEST_NULL),
      alive(w.size, MPI_REQUEST_NULL);
  for (int r = 0; r < w.size; ++r)
    if (r != w.rank) {
      MPI_Isend(&payload[r], 1, MPI_INT, r, kProbeTag, w.control, &probes[r]);
      MPI_Irecv(&answers[r], 1, MPI_INT, r, kAliveTag, w.control, &alive[r]);
    }
  std::vector<bool> answered(w.size, false);
  answered[w.rank] = true;
  double until = now() + grace;
  int missing = w.size - 1;
  while (missing > 0 && now() < until) {
    serveProbes();
    for (int r = 0; r < w.size; ++r) {
      int done = 0;
      if (!answered[r] &&
          MPI_Test(&alive[r], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
          done) {
        answered[r] = true;
        --missing;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<int> silent;
  for (int r = 0; r < w.size; ++r)
    if (!answered[r])
      silent.push_back(r);
  // The job ends now: outstanding probes are left to MPI_Abort.
  return silent;
}

/// The ranks that do not answer a probe: long enough for a peer in a wait
/// loop to answer, short enough that a stopped job ends soon.
std::vector<int> probeForSilentRanks() {
  return silentRanks(std::min(10.0, std::max(1.0, timeoutSeconds / 4)));
}

/// "rank 1 does not respond (...)", for `silent` not empty.
std::string silenceText(const std::vector<int> &silent) {
  std::string text = silent.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < silent.size(); ++i)
    text += (i ? ", " : "") + std::to_string(silent[i]);
  text += silent.size() == 1 ? " does" : " do";
  return text + " not respond (stopped, wedged or cut off from the network); "
                "ending the job";
}

[[noreturn]] void reportSilence(const char *what, double waited) {
  std::vector<int> silent = probeForSilentRanks();
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.0f", waited);
  std::string message = std::string(what) + " made no progress for " + seconds +
                        " s (--comm-timeout " +
                        std::to_string(static_cast<long long>(timeoutSeconds)) +
                        "): ";
  if (silent.empty())
    message += "every rank answers, but the operation cannot complete "
               "(the ranks wait for different operations)";
  else
    message += silenceText(silent);
  die(message);
}

[[noreturn]] void abortJob(int status) {
  // Ends every rank: the others may be blocked in a collective with us.
  MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);
}

bool launchedByMPI() {
  for (const char *variable :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(variable))
      return true;
  return false;
}

int ranksPerMachineOverride() {
  const char *text = std::getenv("PARALLAX_RANKS_PER_MACHINE");
  if (!text)
    return 0;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (!*text || *end || value < 1 || value > INT_MAX)
    die("PARALLAX_RANKS_PER_MACHINE must be a positive integer, got '" +
        std::string(text) + "'");
  return static_cast<int>(value);
}

} // namespace

const World &parallax::runtime::world() { return theWorld; }

void parallax::runtime::checkMPI(int code, const char *what) {
  if (code == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  die(std::string(what) + " failed: " + std::string(text, length));
}

int parallax::runtime::mpiCount(int64_t count, const char *what) {
  if (count > INT_MAX)
    die(std::string(what) + ": " + std::to_string(count) +
        " elements exceed one MPI message");
  return static_cast<int>(count);
}

std::vector<std::string>
parallax::runtime::gatherToRoot(const std::string &mine, const char *what) {
  const World &w = world();
  if (w.size == 1)
    return {mine};
  int length = mpiCount(mine.size(), what);
  std::vector<int> lengths(w.size), offsets(w.size);
  MPI_Request request;
  checkMPI(MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0,
                       w.comm, &request),
           "MPI_Igather of sizes");
  waitFor(request, what);
  int64_t total = 0;
  for (int r = 0; r < w.size; ++r) {
    offsets[r] = mpiCount(total, what);
    total += lengths[r];
  }
  std::string gathered(w.rank == 0 ? total : 0, '\0');
  checkMPI(MPI_Igatherv(mine.data(), length, MPI_CHAR, gathered.data(),
                        lengths.data(), offsets.data(), MPI_CHAR, 0, w.comm,
                        &request),
           "MPI_Igatherv");
  waitFor(request, what);
  std::vector<std::string> all;
  if (w.rank == 0)
    for (int r = 0; r < w.size; ++r)
      all.push_back(gathered.substr(offsets[r], lengths[r]));
  return all;
}

void parallax::runtime::initWorld(int *argc, char ***argv) {
  if (!launchedByMPI())
    return;
  // OpenMPI's own blocking waits spin; ranks that share cores (more ranks
  // than cores, or machines emulated on one host) then starve each
  // other's compute. Yielding costs nothing where a core is free, so it
  // is the default here; a user's setting (environment or mpirun --mca,
  // which arrives as this variable) wins.
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
  // The communication thread (CommThread.h) calls MPI beside the main
  // thread.
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) !=
      MPI_SUCCESS)
    die("MPI_Init failed");
  World &w = theWorld;
  w.mpi = true;
  w.threadMultiple = provided >= MPI_THREAD_MULTIPLE;
  w.comm = MPI_COMM_WORLD;
  // Errors come back as codes; checkMPI turns them into messages.
  MPI_Comm_set_errhandler(w.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  setExitHandler(abortJob, "rank " + std::to_string(w.rank) + "/" +
                               std::to_string(w.size) + ": ");

  if (int perMachine = ranksPerMachineOverride())
    checkMPI(MPI_Comm_split(w.comm, w.rank / perMachine, w.rank, &w.local),
             "MPI_Comm_split");
  else
    checkMPI(MPI_Comm_split_type(w.comm, MPI_COMM_TYPE_SHARED, w.rank,
                                 MPI_INFO_NULL, &w.local),
             "MPI_Comm_split_type");
  MPI_Comm_set_errhandler(w.local, MPI_ERRORS_RETURN);
  checkMPI(MPI_Comm_dup(w.comm, &w.control), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(w.control, MPI_ERRORS_RETURN);
  for (MPI_Comm *comm : {&w.collectives, &w.pushes}) {
    checkMPI(MPI_Comm_dup(w.comm, comm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
  }
  checkMPI(MPI_Comm_dup(w.local, &w.pushesLocal), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(w.pushesLocal, MPI_ERRORS_RETURN);
  MPI_Comm_rank(w.local, &w.localRank);
  MPI_Comm_size(w.local, &w.localSize);
  // A machine's number: its first rank's position among the first ranks.
  // Nonblocking and through waitFor, as every wait: a peer that stops
  // while the job starts ends it too.
  int isLeader = w.localRank == 0, leadersBefore = 0;
  MPI_Request request;
  checkMPI(MPI_Iexscan(&isLeader, &leadersBefore, 1, MPI_INT, MPI_SUM, w.comm,
                       &request),
           "numbering the machines");
  waitFor(request, "numbering the machines");
  if (w.rank == 0)
    leadersBefore = 0; // MPI_Exscan leaves rank 0's result undefined
  w.machine = leadersBefore;
  checkMPI(MPI_Ibcast(&w.machine, 1, MPI_INT, 0, w.local, &request),
           "numbering the machines");
  waitFor(request, "numbering the machines");
  checkMPI(MPI_Iallreduce(&isLeader, &w.machines, 1, MPI_INT, MPI_SUM, w.comm,
                          &request),
           "counting the machines");
  waitFor(request, "counting the machines");
  // With several machines of the same G > 1 ranks each, the collectives
  // over every rank go by machine (CommThread.h): within each machine
  // before across machines.
  int sizes[2] = {w.localSize, -w.localSize};
  checkMPI(MPI_Iallreduce(MPI_IN_PLACE, sizes, 2, MPI_INT, MPI_MAX, w.comm,
                          &request),
           "comparing the machines");
  waitFor(request, "comparing the machines");
  if (w.machines > 1 && w.localSize > 1 && sizes[0] == -sizes[1]) {
    for (MPI_Comm *across : {&w.across, &w.pushesAcross, &w.bucketsAcross}) {
      checkMPI(MPI_Comm_split(w.comm, w.localRank, w.machine, across),
               "MPI_Comm_split");
      MPI_Comm_set_errhandler(*across, MPI_ERRORS_RETURN);
    }
    checkMPI(MPI_Comm_dup(w.local, &w.bucketsLocal), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(w.bucketsLocal, MPI_ERRORS_RETURN);
    int place = w.machine * w.localSize + w.localRank;
    std::vector<int> places(w.size);
    checkMPI(MPI_Iallgather(&place, 1, MPI_INT, places.data(), 1, MPI_INT,
                            w.comm, &request),
             "placing the ranks");
    waitFor(request, "placing the ranks");
    w.rankAt.assign(w.size, 0);
    for (int r = 0; r < w.size; ++r)
      w.rankAt[places[r]] = r;
  }
  // A bad PARALLAX_COMM_THREAD is an error at start-up, whatever the
  // program's collectives.
  (void)commThreadEnabled();
  // A GPU program's ranks set up NCCL (or agree not to) together.
  if (w.size > 1)
    startDeviceCollectives(w);
}

void parallax::runtime::finalizeWorld() {
  if (!theWorld.mpi)
    return;
  // Nobody leaves while a peer may still probe it or send it results, and
  // a silent peer ends the job here too instead of hanging MPI_Finalize.
  barrier(theWorld.comm, "the final barrier");
  stopDeviceCollectives();
  stopCommThread();
  for (Reply &reply : replies) {
    // Cannot block: a reply is one int, sent eagerly, complete locally.
    MPI_Wait(&reply.request, MPI_STATUS_IGNORE);
  }
  replies.clear();
  for (MPI_Comm *comm :
       {&theWorld.local, &theWorld.control, &theWorld.collectives,
        &theWorld.pushes, &theWorld.pushesLocal, &theWorld.across,
        &theWorld.pushesAcross, &theWorld.bucketsAcross,
        &theWorld.bucketsLocal})
    if (*comm != MPI_COMM_NULL)
      MPI_Comm_free(comm);
  MPI_Finalize();
  theWorld.mpi = false;
}

void parallax::runtime::account(const std::string &variable, int64_t sent,
                                int64_t received) {
  std::lock_guard<std::mutex> lock(trafficMutex);
  auto [it, inserted] = stepIndex.try_emplace(variable, stepTraffic.size());
  if (inserted)
    stepTraffic.push_back({variable, {}});
  Traffic &t = stepTraffic[it->second].second;
  t.sent += sent;
  t.received += received;
  total.sent += sent;
  total.received += received;
}

TrafficByVariable parallax::runtime::takeStepTraffic() {
  std::lock_guard<std::mutex> lock(trafficMutex);
  TrafficByVariable step = std::move(stepTraffic);
  stepTraffic.clear();
  stepIndex.clear();
  return step;
}

Traffic parallax::runtime::totalTraffic() {
  std::lock_guard<std::mutex> lock(trafficMutex);
  return total;
}

void parallax::runtime::serveProbes() {
  const World &w = world();
  if (!w.mpi)
    return;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kProbeTag, w.control, &flag, &status) !=
            MPI_SUCCESS ||
        !flag)
      break;
    int from = 0;
    // Cannot block: MPI_Iprobe saw the message arrive.
    MPI_Recv(&from, 1, MPI_INT, status.MPI_SOURCE, kProbeTag, w.control,
             MPI_STATUS_IGNORE);
    Reply &reply = replies.emplace_back();
    reply.payload = w.rank;
    MPI_Isend(&reply.payload, 1, MPI_INT, status.MPI_SOURCE, kAliveTag,
              w.control, &reply.request);
  }
  while (!replies.empty()) {
    int done = 0;
    MPI_Test(&replies.front().request, &done, MPI_STATUS_IGNORE);
    if (!done)
      break;
    replies.pop_front();
  }
}

void parallax::runtime::waitFor(int count, MPI_Request *requests,
                                const char *what) {
  double start = now();
  // Spin briefly (a collective often completes within microseconds), then
  // yield the core to co-located ranks, and poll gently once the wait is
  // long: a waiting rank never starves the ones it waits for.
  for (uint64_t polls = 0;; ++polls) {
    int done = 0;
    checkMPI(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), what);
    if (done)
      return;
    if (polls < 256)
      continue;
    double waited = now() - start;
    if (polls % 16 == 0) {
      serveProbes();
      if (timeoutSeconds > 0 &&
          waited > timeoutSeconds + longestStep + extraWait)
        reportSilence(what, waited);
    }
    if (waited > 1.0)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    else
      sched_yield();
  }
}

void parallax::runtime::waitForCommThread(CommLane lane, uint64_t ticket,
                                          const char *what) {
  // Blocks in slices of 10 ms.
  waitUntil([&] { return waitForCommJob(lane, ticket, 0.01); }, what);
}

void parallax::runtime::waitUntil(const std::function<bool()> &poll,
                                  const char *what) {
  double start = now();
  // Between polls it answers probes and watches the deadline, as waitFor
  // does.
  while (!poll()) {
    serveProbes();
    double waited = now() - start;
    if (timeoutSeconds > 0 && waited > timeoutSeconds + longestStep + extraWait)
      reportSilence(what, waited);
  }
}

void parallax::runtime::dieNamingSilentRanks(const std::string &failure) {
  std::vector<int> silent = probeForSilentRanks();
  die(silent.empty() ? failure : failure + "; " + silenceText(silent));
}

void parallax::runtime::barrier(MPI_Comm comm, const char *what) {
  MPI_Request request;
  checkMPI(MPI_Ibarrier(comm, &request), what);
  waitFor(request, what);
}

void parallax::runtime::setCommTimeout(double seconds) {
  timeoutSeconds = seconds;
}

double parallax::runtime::commTimeout() { return timeoutSeconds; }

void parallax::runtime::noteStepTime(double seconds) {
  longestStep = std::max(longestStep, seconds);
  extraWait = 0;
}

void parallax::runtime::allowExtraWait(double seconds) { extraWait += seconds; }
