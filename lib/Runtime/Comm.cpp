//===- Comm.cpp - MPI world, machines and traffic accounting --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Support.h"

#include <climits>
#include <cstdlib>
#include <map>

using namespace parallax::runtime;

namespace {

World theWorld;
TrafficByVariable stepTraffic;
std::map<std::string, size_t> stepIndex;
Traffic total;

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

void parallax::runtime::initWorld(int *argc, char ***argv) {
  if (!launchedByMPI())
    return;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS)
    die("MPI_Init failed");
  World &w = theWorld;
  w.mpi = true;
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
  MPI_Comm_rank(w.local, &w.localRank);
  MPI_Comm_size(w.local, &w.localSize);
  // A machine's number: its first rank's position among the first ranks.
  int isLeader = w.localRank == 0, leadersBefore = 0;
  checkMPI(MPI_Exscan(&isLeader, &leadersBefore, 1, MPI_INT, MPI_SUM, w.comm),
           "MPI_Exscan");
  if (w.rank == 0)
    leadersBefore = 0; // MPI_Exscan leaves rank 0's result undefined
  w.machine = leadersBefore;
  checkMPI(MPI_Bcast(&w.machine, 1, MPI_INT, 0, w.local), "MPI_Bcast");
  checkMPI(MPI_Allreduce(&isLeader, &w.machines, 1, MPI_INT, MPI_SUM, w.comm),
           "MPI_Allreduce");
}

void parallax::runtime::finalizeWorld() {
  if (!theWorld.mpi)
    return;
  if (theWorld.local != MPI_COMM_NULL)
    MPI_Comm_free(&theWorld.local);
  MPI_Finalize();
  theWorld.mpi = false;
}

void parallax::runtime::account(const std::string &variable, int64_t sent,
                                int64_t received) {
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
  TrafficByVariable step = std::move(stepTraffic);
  stepTraffic.clear();
  stepIndex.clear();
  return step;
}

Traffic parallax::runtime::totalTraffic() { return total; }
