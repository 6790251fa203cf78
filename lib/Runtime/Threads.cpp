//===- Threads.cpp - The threads of a worker ------------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Threads.h"

#include "Comm.h"
#include "Support.h"

#include <algorithm>
#include <cstdlib>
#include <sched.h>
#include <vector>

// LLVM's OpenMP runtime, which the generated loop nests call.
extern "C" void omp_set_num_threads(int);

using namespace parallax::runtime;

namespace {

struct Choice {
  int threads = 0;
  std::string reason;
};

Choice chosen;

cpu_set_t cpusOfThisRank() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0)
    CPU_SET(0, &cpus);
  return cpus;
}

/// The ranks of this machine (this one included) that may run on one of
/// this rank's cores: the count that shares them.
int ranksSharing(const cpu_set_t &mine) {
  const World &w = world();
  if (!w.mpi || w.size == 1)
    return 1;
  // The real machine, not the emulated ones (PARALLAX_RANKS_PER_MACHINE):
  // emulated machines share the host's cores.
  MPI_Comm host;
  checkMPI(MPI_Comm_split_type(w.comm, MPI_COMM_TYPE_SHARED, w.rank,
                               MPI_INFO_NULL, &host),
           "MPI_Comm_split_type");
  int size = 1;
  MPI_Comm_size(host, &size);
  std::vector<cpu_set_t> all(size);
  MPI_Request request;
  checkMPI(MPI_Iallgather(&mine, sizeof(cpu_set_t), MPI_BYTE, all.data(),
                          sizeof(cpu_set_t), MPI_BYTE, host, &request),
           "MPI_Iallgather");
  waitFor(request, "gathering the ranks' cores");
  MPI_Comm_free(&host);
  return static_cast<int>(std::count_if(all.begin(), all.end(), [&](auto &s) {
    cpu_set_t both;
    CPU_AND(&both, &s, &mine);
    return CPU_COUNT(&both) > 0;
  }));
}

Choice defaultChoice(bool askOtherRanks) {
  cpu_set_t mine = cpusOfThisRank();
  int cores = std::max(1, CPU_COUNT(&mine));
  int sharing = askOtherRanks ? ranksSharing(mine) : 1;
  Choice choice;
  choice.threads = std::max(1, cores / sharing);
  choice.reason = "the cores this rank may run on: " + std::to_string(cores) +
                  ", shared by " + std::to_string(sharing) +
                  (sharing == 1 ? " rank" : " ranks");
  return choice;
}

void apply(const Choice &choice) {
  chosen = choice;
  omp_set_num_threads(choice.threads);
}

} // namespace

int parallax::runtime::parseThreads(const std::string &option,
                                    const std::string &value) {
  std::optional<int64_t> threads = parseInteger(value.c_str());
  if (!threads || *threads < 1 || *threads > 4096)
    die(option + " '" + value + "': expected a thread count from 1 to 4096");
  return static_cast<int>(*threads);
}

void parallax::runtime::configureThreads(int requested) {
  Choice choice;
  if (requested > 0) {
    choice.threads = requested;
    choice.reason = "--threads";
  } else if (const char *env = std::getenv("PARALLAX_THREADS"); env && *env) {
    choice.threads = parseThreads("PARALLAX_THREADS", env);
    choice.reason = "PARALLAX_THREADS";
  } else if (const char *env = std::getenv("OMP_NUM_THREADS"); env && *env) {
    // OpenMP's own setting ("4" or, for nested regions, "4,2"), which
    // PyTorch follows too.
    std::string first = env;
    choice.threads =
        parseThreads("OMP_NUM_THREADS", first.substr(0, first.find(',')));
    choice.reason = "OMP_NUM_THREADS";
  } else {
    choice = defaultChoice(/*askOtherRanks=*/true);
  }
  apply(choice);
}

int parallax::runtime::workerThreads() {
  if (!chosen.threads)
    apply(defaultChoice(/*askOtherRanks=*/false));
  return chosen.threads;
}

std::string parallax::runtime::describeThreads() {
  int threads = workerThreads();
  return "threads: " + std::to_string(threads) + " (" + chosen.reason + ")";
}

void parallax::runtime::parallelChunks(
    int64_t count, int64_t minChunk,
    const std::function<void(int64_t, int64_t)> &body) {
  constexpr int64_t maxChunks = 256;
  int64_t chunk = std::max({minChunk, ceilDiv(count, maxChunks), int64_t(1)});
  int64_t chunks = ceilDiv(count, chunk);
  int threads = workerThreads();
  if (threads == 1 || chunks <= 1) {
    for (int64_t begin = 0; begin < count; begin += chunk)
      body(begin, std::min(begin + chunk, count));
    return;
  }
  // Static: thread t takes the t-th run of chunks, the same part of a
  // buffer as the generated loop nests' static schedule gives it, so data
  // one kernel wrote is read from the same core's caches by the next.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < chunks; ++i)
    body(i * chunk, std::min((i + 1) * chunk, count));
}

void parallax::runtime::parallelTasks(
    int64_t count, const std::function<void(int64_t)> &body) {
  int threads = workerThreads();
  if (threads == 1 || count <= 1) {
    for (int64_t i = 0; i < count; ++i)
      body(i);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t i = 0; i < count; ++i)
    body(i);
}
