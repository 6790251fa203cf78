//===- FakeNccl.cpp - NCCL without a GPU, for tests -----------------------===//
//
// Part of the Parallax project.
//
// libnccl.so.2 for machines without a GPU, beside the fake driver
// (FakeCudaDriver.cpp, whose device memory is host memory): the NCCL
// functions lib/Runtime/NcclCollectives.cpp calls, carried out with MPI on
// a duplicate of MPI_COMM_WORLD made by ncclCommInitRank, at once (the
// fake driver's streams run nothing later). It checks what real NCCL
// would refuse (a bad rank or count, a unique id that was not the
// root's, an unknown type or operation) and counts the calls;
// PARALLAX_FAKE_CUDA_REPORT set: each rank prints its counts when its
// communicator is destroyed. PARALLAX_FAKE_NCCL_FAIL=init, allreduce or
// send makes that call fail on rank 1, as a broken NCCL set-up or link
// would. PARALLAX_FAKE_NCCL_FAIL=peer-stops or peer-lost loses rank 1 at
// the second AllReduce: rank 1 stops (SIGSTOP) and the other ranks' call
// never completes (the fake driver's events stay not ready); with
// peer-lost their communicator also reports ncclRemoteError, as NCCL's
// does once a peer's connection closes.
//
//===----------------------------------------------------------------------===//

#include <mpi.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using ncclResult = int;
constexpr ncclResult ncclSuccess = 0, ncclSystemError = 2,
                     ncclInvalidArgument = 4, ncclInvalidUsage = 5,
                     ncclRemoteError = 6;
constexpr int ncclUint8 = 1, ncclFloat32 = 7;
constexpr int ncclSum = 0, ncclMax = 2, ncclMin = 3, ncclAvg = 4;
constexpr char kIdText[] = "parallax fake NCCL unique id";

struct UniqueId {
  char internal[128];
};

struct Comm {
  MPI_Comm mpi;
  int rank, size;
  long allReduces = 0, floats = 0, allGathers = 0, broadcasts = 0, reduces = 0,
       sends = 0, receives = 0, bytesSent = 0;
  ncclResult asyncError = ncclSuccess;
};

/// Sends and receives between ncclGroupStart and ncclGroupEnd, posted at
/// once and waited for at the group's end (NCCL's groups may nest).
int groupDepth = 0;
std::vector<MPI_Request> grouped;
constexpr int kSendRecvTag = 4711;

/// Posts a send or receive; outside a group it completes at once.
ncclResult postTransfer(int code, MPI_Request request) {
  if (code != MPI_SUCCESS)
    return ncclSystemError;
  if (groupDepth > 0) {
    grouped.push_back(request);
    return ncclSuccess;
  }
  return MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS ? ncclSuccess
                                                              : ncclSystemError;
}

/// Whether PARALLAX_FAKE_NCCL_FAIL asks `call` to fail on this rank.
bool failing(const char *call, int rank) {
  const char *text = std::getenv("PARALLAX_FAKE_NCCL_FAIL");
  return text && !std::strcmp(text, call) && rank == 1;
}

/// Returns once process `pid` of this machine is stopped (state T in
/// /proc/PID/stat), or at once where it cannot be seen.
void waitUntilStopped(int pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  for (;;) {
    std::ifstream stat(path);
    std::string text;
    if (!std::getline(stat, text))
      return;
    size_t name = text.rfind(')');
    if (name == std::string::npos || name + 2 >= text.size() ||
        text[name + 2] == 'T')
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// A function of the fake CUDA driver, or null where it is not loaded
/// (the runtime loads it before NCCL).
void (*driverFunction(const char *name))() {
  void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  return driver ? reinterpret_cast<void (*)()>(dlsym(driver, name)) : nullptr;
}

/// The fake driver maps device memory without access from the host; the
/// transfers here read and write it, so they open it while they run.
void setDeviceAccess(bool open) {
  static void (*openDevice)() = driverFunction("parallaxFakeCudaOpenDevice");
  static void (*closeDevice)() = driverFunction("parallaxFakeCudaCloseDevice");
  if (void (*change)() = open ? openDevice : closeDevice)
    change();
}

struct DeviceAccess {
  DeviceAccess() { setDeviceAccess(true); }
  ~DeviceAccess() { setDeviceAccess(false); }
  DeviceAccess(const DeviceAccess &) = delete;
  DeviceAccess &operator=(const DeviceAccess &) = delete;
};

/// Whether PARALLAX_FAKE_NCCL_FAIL loses rank 1 at this AllReduce: if so,
/// rank 1 stops here, and the others' call never completes.
bool losingPeer(Comm &comm) {
  const char *text = std::getenv("PARALLAX_FAKE_NCCL_FAIL");
  bool lost = text && !std::strcmp(text, "peer-lost");
  bool stops = text && !std::strcmp(text, "peer-stops");
  if (!(lost || stops) || comm.allReduces != 2)
    return false;
  // Rank 0 goes on only once rank 1 has stopped, so that rank 1 can never
  // answer the probe that rank 0's runtime sends.
  constexpr int kStoppingTag = 4712;
  if (comm.rank == 1) {
    int pid = getpid();
    MPI_Send(&pid, 1, MPI_INT, 0, kStoppingTag, comm.mpi);
    std::raise(SIGSTOP);
  } else if (comm.rank == 0) {
    int pid = 0;
    MPI_Recv(&pid, 1, MPI_INT, 1, kStoppingTag, comm.mpi, MPI_STATUS_IGNORE);
    waitUntilStopped(pid);
  }
  auto stall = driverFunction("parallaxFakeCudaStall");
  if (!stall) {
    std::fprintf(stderr, "fake NCCL: the fake CUDA driver is not loaded\n");
    std::abort();
  }
  stall();
  if (lost)
    comm.asyncError = ncclRemoteError;
  return true;
}

ncclResult mpiResult(int code) {
  return code == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

} // namespace

extern "C" {

ncclResult ncclGetVersion(int *version) {
  *version = 22809;
  return ncclSuccess;
}

ncclResult ncclGetUniqueId(UniqueId *id) {
  std::memset(id, 0, sizeof *id);
  std::memcpy(id->internal, kIdText, sizeof kIdText);
  return ncclSuccess;
}

ncclResult ncclCommInitRank(Comm **comm, int size, UniqueId id, int rank) {
  int mpiRank = -1, mpiSize = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpiRank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpiSize);
  if (std::memcmp(id.internal, kIdText, sizeof kIdText) || rank != mpiRank ||
      size != mpiSize)
    return ncclInvalidArgument;
  if (failing("init", rank))
    return ncclInvalidUsage; // what a second rank on one GPU gets
  auto *made = new Comm{MPI_COMM_NULL, rank, size};
  if (MPI_Comm_dup(MPI_COMM_WORLD, &made->mpi) != MPI_SUCCESS)
    return ncclSystemError;
  *comm = made;
  return ncclSuccess;
}

ncclResult ncclCommDestroy(Comm *comm) {
  if (std::getenv("PARALLAX_FAKE_CUDA_REPORT"))
    std::fprintf(stderr,
                 "fake NCCL: rank %d of %d: %ld AllReduces (%ld floats), %ld "
                 "AllGathers, %ld broadcasts, %ld reduces, %ld sends (%ld "
                 "bytes), %ld receives\n",
                 comm->rank, comm->size, comm->allReduces, comm->floats,
                 comm->allGathers, comm->broadcasts, comm->reduces, comm->sends,
                 comm->bytesSent, comm->receives);
  MPI_Comm_free(&comm->mpi);
  delete comm;
  return ncclSuccess;
}

ncclResult ncclCommGetAsyncError(Comm *comm, ncclResult *error) {
  *error = comm->asyncError;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclInvalidArgument:
    return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage:
    return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  default:
    return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  }
}

const char *ncclGetLastError(Comm *) { return ""; }

ncclResult ncclAllReduce(const void *send, void *receive, size_t count,
                         int type, int op, Comm *comm, void *) {
  if (type != ncclFloat32 || op < ncclSum || op > ncclAvg || op == 1)
    return ncclInvalidArgument;
  if (failing("allreduce", comm->rank))
    return ncclSystemError;
  ++comm->allReduces;
  comm->floats += count;
  if (losingPeer(*comm))
    return ncclSuccess;
  MPI_Op mpiOp = op == ncclMax ? MPI_MAX : op == ncclMin ? MPI_MIN : MPI_SUM;
  DeviceAccess access;
  int code =
      MPI_Allreduce(send == receive ? MPI_IN_PLACE : send, receive,
                    static_cast<int>(count), MPI_FLOAT, mpiOp, comm->mpi);
  if (op == ncclAvg) {
    auto *values = static_cast<float *>(receive);
    for (size_t i = 0; i < count; ++i)
      values[i] *= 1.0f / comm->size;
  }
  return mpiResult(code);
}

ncclResult ncclAllGather(const void *send, void *receive, size_t count,
                         int type, Comm *comm, void *) {
  if (type != ncclUint8)
    return ncclInvalidArgument;
  ++comm->allGathers;
  DeviceAccess access;
  return mpiResult(MPI_Allgather(send, static_cast<int>(count), MPI_BYTE,
                                 receive, static_cast<int>(count), MPI_BYTE,
                                 comm->mpi));
}

ncclResult ncclBroadcast(const void *send, void *receive, size_t count,
                         int type, int root, Comm *comm, void *) {
  if (type != ncclUint8 || root < 0 || root >= comm->size)
    return ncclInvalidArgument;
  ++comm->broadcasts;
  DeviceAccess access;
  if (comm->rank == root && send != receive)
    std::memmove(receive, send, count);
  return mpiResult(
      MPI_Bcast(receive, static_cast<int>(count), MPI_BYTE, root, comm->mpi));
}

// Collectives inside a group run at once: every rank calls them in the
// same order, as NCCL requires.
ncclResult ncclReduce(const void *send, void *receive, size_t count, int type,
                      int op, int root, Comm *comm, void *) {
  if (type != ncclFloat32 || op != ncclSum || root < 0 || root >= comm->size)
    return ncclInvalidArgument;
  ++comm->reduces;
  bool inPlace = comm->rank == root && send == receive;
  DeviceAccess access;
  return mpiResult(MPI_Reduce(inPlace ? MPI_IN_PLACE : send, receive,
                              static_cast<int>(count), MPI_FLOAT, MPI_SUM, root,
                              comm->mpi));
}

// Device memory stays open from a group's start to its end: the
// transfers posted in it complete at the end.
ncclResult ncclGroupStart() {
  if (groupDepth++ == 0)
    setDeviceAccess(true);
  return ncclSuccess;
}

ncclResult ncclGroupEnd() {
  if (groupDepth == 0)
    return ncclInvalidUsage;
  if (--groupDepth > 0)
    return ncclSuccess;
  std::vector<MPI_Request> requests;
  requests.swap(grouped);
  int code = MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                         MPI_STATUSES_IGNORE);
  setDeviceAccess(false);
  return mpiResult(code);
}

// NCCL needs a send and its receive in one group where they could wait
// for each other (a rank's own, or a pair of ranks sending each other);
// real NCCL hangs without it, so this one refuses a send to itself
// outside a group.
ncclResult ncclSend(const void *data, size_t count, int type, int peer,
                    Comm *comm, void *) {
  if (type != ncclUint8 || peer < 0 || peer >= comm->size ||
      (peer == comm->rank && groupDepth == 0))
    return ncclInvalidArgument;
  if (failing("send", comm->rank))
    return ncclSystemError;
  ++comm->sends;
  comm->bytesSent += static_cast<long>(count);
  DeviceAccess access;
  MPI_Request request;
  int code = MPI_Isend(data, static_cast<int>(count), MPI_BYTE, peer,
                       kSendRecvTag, comm->mpi, &request);
  return postTransfer(code, request);
}

ncclResult ncclRecv(void *data, size_t count, int type, int peer, Comm *comm,
                    void *) {
  if (type != ncclUint8 || peer < 0 || peer >= comm->size ||
      (peer == comm->rank && groupDepth == 0))
    return ncclInvalidArgument;
  ++comm->receives;
  DeviceAccess access;
  MPI_Request request;
  int code = MPI_Irecv(data, static_cast<int>(count), MPI_BYTE, peer,
                       kSendRecvTag, comm->mpi, &request);
  return postTransfer(code, request);
}

} // extern "C"
