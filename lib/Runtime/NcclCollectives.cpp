//===- NcclCollectives.cpp - GPU workers' dense collectives on NCCL -------===//
//
// Part of the Parallax project.
//
// The dense collectives of a GPU program's workers when each has a GPU of
// its own: one NCCL communicator per job, bootstrapped through MPI (rank
// 0's unique id, broadcast). A bucket is a device buffer. Its gradients
// are copied into it on the program's stream; its AllReduce runs on a
// communication stream once an event says they are there, so the backward
// kernels queued after the start run while it is on the wire; the results
// are copied out on the program's stream after an event says the
// reduction is done. The parameter store's rows (DeviceParameterStore.cpp)
// travel in groups of ncclSend/ncclRecv on the program's stream, between
// device blocks of a pool kept here, and are summed and updated by the
// runtime's kernels. NCCL is loaded at run time (libnccl.so.2), as the
// driver is.
//
// Where ranks share a GPU (NCCL refuses that), NCCL cannot be loaded, or
// PARALLAX_GPU_COMM=mpi, the workers use MPI on host memory instead; the
// first rank says which, once.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "CudaDriver.h"
#include "DeviceCollectives.h"
#include "Support.h"

#include "parallax/Runtime/Runtime.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <thread>
#include <type_traits>

using namespace parallax::runtime;
using namespace parallax::runtime::cuda;

namespace {

// nccl.h's types and constants, declared here so the runtime builds
// without NCCL.
using ncclComm = void *;
using ncclResult = int;
struct NcclUniqueId {
  char internal[128];
};
constexpr ncclResult ncclSuccess = 0, ncclInvalidUsage = 5, ncclInProgress = 7;
constexpr int ncclUint8 = 1, ncclFloat32 = 7;
constexpr int ncclSum = 0, ncclMax = 2, ncclMin = 3, ncclAvg = 4;

#define PARALLAX_NCCL(X)                                                       \
  X(getVersion, "ncclGetVersion", ncclResult, (int *))                         \
  X(getUniqueId, "ncclGetUniqueId", ncclResult, (NcclUniqueId *))              \
  X(commInitRank, "ncclCommInitRank", ncclResult,                              \
    (ncclComm *, int, NcclUniqueId, int))                                      \
  X(commDestroy, "ncclCommDestroy", ncclResult, (ncclComm))                    \
  X(commGetAsyncError, "ncclCommGetAsyncError", ncclResult,                    \
    (ncclComm, ncclResult *))                                                  \
  X(getErrorString, "ncclGetErrorString", const char *, (ncclResult))          \
  X(getLastError, "ncclGetLastError", const char *, (ncclComm))                \
  X(allReduce, "ncclAllReduce", ncclResult,                                    \
    (const void *, void *, size_t, int, int, ncclComm, CUstream))              \
  X(allGather, "ncclAllGather", ncclResult,                                    \
    (const void *, void *, size_t, int, ncclComm, CUstream))                   \
  X(broadcast, "ncclBroadcast", ncclResult,                                    \
    (const void *, void *, size_t, int, int, ncclComm, CUstream))              \
  X(send, "ncclSend", ncclResult,                                              \
    (const void *, size_t, int, int, ncclComm, CUstream))                      \
  X(recv, "ncclRecv", ncclResult,                                              \
    (void *, size_t, int, int, ncclComm, CUstream))                            \
  X(reduce, "ncclReduce", ncclResult,                                          \
    (const void *, void *, size_t, int, int, int, ncclComm, CUstream))         \
  X(groupStart, "ncclGroupStart", ncclResult, ())                              \
  X(groupEnd, "ncclGroupEnd", ncclResult, ())

struct Nccl {
#define PARALLAX_DECLARE(field, symbol, result, parameters)                    \
  result(*field) parameters = nullptr;
  PARALLAX_NCCL(PARALLAX_DECLARE)
#undef PARALLAX_DECLARE
  int version = 0;
};

/// libnccl.so.2's functions (or those of the library PARALLAX_NCCL_LIBRARY
/// names), or null with `why` saying what is missing.
Nccl *loadNccl(std::string &why) {
  const char *name = std::getenv("PARALLAX_NCCL_LIBRARY");
  void *library = dlopen(name ? name : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    why = std::string("NCCL cannot be loaded (") + dlerror() +
          (name ? std::string(", named by PARALLAX_NCCL_LIBRARY)")
                : "; put the directory of libnccl.so.2, such as "
                  "site-packages/nvidia/nccl/lib of PyTorch's pip packages, "
                  "on LD_LIBRARY_PATH)");
    return nullptr;
  }
  static Nccl nccl;
#define PARALLAX_RESOLVE(field, symbol, result, parameters)                    \
  nccl.field = reinterpret_cast<result(*) parameters>(dlsym(library, symbol)); \
  if (!nccl.field) {                                                           \
    why = std::string("the NCCL found has no ") + symbol +                     \
          " (NCCL 2.13 or later is needed)";                                   \
    return nullptr;                                                            \
  }
  PARALLAX_NCCL(PARALLAX_RESOLVE)
#undef PARALLAX_RESOLVE
  nccl.getVersion(&nccl.version);
  return &nccl;
}

std::string versionText(int version) {
  return std::to_string(version / 10000) + "." +
         std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

enum class Mode { Auto, Nccl, Mpi };

Mode gpuCommMode() {
  const char *text = std::getenv("PARALLAX_GPU_COMM");
  if (!text || !std::strcmp(text, "auto"))
    return Mode::Auto;
  if (!std::strcmp(text, "nccl"))
    return Mode::Nccl;
  if (!std::strcmp(text, "mpi"))
    return Mode::Mpi;
  die("PARALLAX_GPU_COMM must be auto, nccl or mpi, got '" + std::string(text) +
      "'");
}

class NcclCollectives final : public DeviceCollectives {
public:
  NcclCollectives(Nccl &nccl, ncclComm comm, int rank)
      : nccl(nccl), comm(comm), rank(rank) {
    check(driver().cuStreamCreate(&commStream, CU_STREAM_NON_BLOCKING),
          "creating the communication stream");
    check(driver().cuEventCreate(&done, CU_EVENT_DISABLE_TIMING),
          "creating an event");
  }

  ~NcclCollectives() override {
    Driver &cuda = driver();
    check(cuda.cuStreamSynchronize(commStream), "the communication stream");
    checkNccl(nccl.commDestroy(comm), "ncclCommDestroy");
    cuda.cuEventDestroy(done);
    cuda.cuStreamSynchronize(cuda.stream); // the uploads' staging memory
    for (Staging &staging : stagings) {
      cuda.cuMemFreeHost(staging.host);
      cuda.cuEventDestroy(staging.copied);
    }
    for (auto &[bytes, block] : freeBlocks)
      cuda.cuMemFree(block);
    for (Bucket &b : buckets) {
      if (b.data)
        cuda.cuMemFree(b.data);
      for (CUevent event : {b.staged, b.reduced})
        if (event)
          cuda.cuEventDestroy(event);
    }
  }

  void stage(int64_t id, int64_t offset, const float *from,
             int64_t count) override {
    Driver &cuda = driver();
    Bucket &b = bucket(id);
    size_t kept = offset * sizeof(float),
           needed = (offset + count) * sizeof(float);
    if (needed > b.capacity) {
      // Only in the first step: a bucket holds the same gradients each step.
      size_t capacity = std::max(needed, 2 * b.capacity);
      CUdeviceptr grown = 0;
      check(cuda.cuMemAlloc(&grown, capacity),
            "allocating " + std::to_string(capacity) +
                " bytes of GPU memory for an AllReduce bucket");
      if (kept)
        check(cuda.cuMemcpyAsync(grown, b.data, kept, cuda.stream),
              "copying GPU memory");
      if (b.data) {
        check(cuda.cuStreamSynchronize(cuda.stream), "copying GPU memory");
        check(cuda.cuMemFree(b.data), "freeing GPU memory");
      }
      b.data = grown;
      b.capacity = capacity;
    }
    check(cuda.cuMemcpyAsync(b.data + kept, reinterpret_cast<CUdeviceptr>(from),
                             count * sizeof(float), cuda.stream),
          "copying a gradient into its AllReduce bucket");
  }

  void startAllReduce(int64_t id, int64_t count, int32_t reduction) override {
    Driver &cuda = driver();
    Bucket &b = bucket(id);
    check(cuda.cuEventRecord(b.staged, cuda.stream), "recording an event");
    check(cuda.cuStreamWaitEvent(commStream, b.staged, 0),
          "waiting for an event");
    int op = reduction == PARALLAX_RT_REDUCE_MEAN  ? ncclAvg
             : reduction == PARALLAX_RT_REDUCE_MAX ? ncclMax
             : reduction == PARALLAX_RT_REDUCE_MIN ? ncclMin
                                                   : ncclSum;
    checkNccl(nccl.allReduce(reinterpret_cast<void *>(b.data),
                             reinterpret_cast<void *>(b.data), count,
                             ncclFloat32, op, comm, commStream),
              "ncclAllReduce");
    check(cuda.cuEventRecord(b.reduced, commStream), "recording an event");
  }

  void unstage(int64_t id, int64_t offset, float *to, int64_t count) override {
    Driver &cuda = driver();
    Bucket &b = bucket(id);
    check(cuda.cuStreamWaitEvent(cuda.stream, b.reduced, 0),
          "waiting for an event");
    check(cuda.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                             b.data + offset * sizeof(float),
                             count * sizeof(float), cuda.stream),
          "copying an AllReduce result out of its bucket");
  }

  void waitAllReduce(int64_t) override {
    // The copies out of the bucket queue after its reduction.
    waitForStream("an AllReduce on NCCL");
  }

  void allGather(const void *in, void *out, int64_t bytes) override {
    checkNccl(nccl.allGather(in, out, bytes, ncclUint8, comm, driver().stream),
              "ncclAllGather");
    waitForStream("an AllGather on NCCL");
  }

  void broadcast(void *buffer, int64_t bytes, int root) override {
    checkNccl(nccl.broadcast(buffer, buffer, bytes, ncclUint8, root, comm,
                             driver().stream),
              "ncclBroadcast");
    waitForStream("a broadcast on NCCL");
  }

  void *allocate(int64_t bytes) override {
    // Blocks of powers of two: a step's sizes vary with its distinct rows,
    // and a few sizes keep the pool from growing step after step.
    int64_t size = 256;
    while (size < bytes)
      size *= 2;
    auto cached = freeBlocks.find(size);
    if (cached != freeBlocks.end()) {
      CUdeviceptr block = cached->second;
      freeBlocks.erase(cached);
      blockSizes[block] = size;
      return reinterpret_cast<void *>(block);
    }
    CUdeviceptr block = 0;
    check(driver().cuMemAlloc(&block, size),
          "allocating " + std::to_string(size) +
              " bytes of GPU memory for the parameter store's rows");
    blockSizes[block] = size;
    return reinterpret_cast<void *>(block);
  }

  void release(void *buffer) override {
    if (!buffer)
      return;
    auto block = blockSizes.find(reinterpret_cast<CUdeviceptr>(buffer));
    if (block == blockSizes.end())
      die("internal error: releasing GPU memory the parameter store did not "
          "allocate");
    // Reused by later work on the same stream only: safe without waiting.
    freeBlocks.emplace(block->second, block->first);
    blockSizes.erase(block);
  }

  void copy(void *to, const void *from, int64_t bytes) override {
    if (bytes > 0)
      check(driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                                   reinterpret_cast<CUdeviceptr>(from), bytes,
                                   driver().stream),
            "copying the parameter store's rows or ids");
  }

  void upload(void *to, const void *from, int64_t bytes) override {
    if (bytes <= 0)
      return;
    Driver &cuda = driver();
    Staging &staging = stagingFor(bytes);
    std::memcpy(staging.host, from, bytes);
    check(cuda.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                             reinterpret_cast<CUdeviceptr>(staging.host), bytes,
                             cuda.stream),
          "copying the parameter store's ids to the GPU");
    check(cuda.cuEventRecord(staging.copied, cuda.stream),
          "recording an event");
  }

  void reduceSegments(float *buffer,
                      const std::vector<int64_t> &counts) override {
    forEachSegment(buffer, counts, "the parameter store's reduction on NCCL",
                   [&](float *segment, int64_t count, int owner) {
                     checkNccl(nccl.reduce(segment, segment, count, ncclFloat32,
                                           ncclSum, owner, comm,
                                           driver().stream),
                               "ncclReduce");
                   });
  }

  void broadcastSegments(float *buffer,
                         const std::vector<int64_t> &counts) override {
    forEachSegment(buffer, counts, "the parameter store's broadcast on NCCL",
                   [&](float *segment, int64_t count, int owner) {
                     checkNccl(nccl.broadcast(segment, segment,
                                              count * sizeof(float), ncclUint8,
                                              owner, comm, driver().stream),
                               "ncclBroadcast");
                   });
  }

  void sumRows(const rowkernels::RowSum &sum) override { launchSumRows(sum); }

  void updateRows(const rowkernels::RowUpdate &update) override {
    launchUpdateRows(update);
  }

  void exchange(const std::vector<Transfer> &sends,
                const std::vector<Transfer> &receives) override {
    Driver &cuda = driver();
    std::vector<const Transfer *> ownSends, ownReceives;
    checkNccl(nccl.groupStart(), "ncclGroupStart");
    for (const Transfer &t : sends)
      if (t.peer == rank)
        ownSends.push_back(&t);
      else if (t.bytes > 0)
        checkNccl(
            nccl.send(t.data, t.bytes, ncclUint8, t.peer, comm, cuda.stream),
            "ncclSend");
    for (const Transfer &t : receives)
      if (t.peer == rank)
        ownReceives.push_back(&t);
      else if (t.bytes > 0)
        checkNccl(
            nccl.recv(t.data, t.bytes, ncclUint8, t.peer, comm, cuda.stream),
            "ncclRecv");
    checkNccl(nccl.groupEnd(), "ncclGroupEnd");
    if (ownSends.size() != ownReceives.size())
      die("internal error: a rank's rows to itself do not match");
    for (size_t i = 0; i < ownSends.size(); ++i) {
      if (ownSends[i]->bytes != ownReceives[i]->bytes)
        die("internal error: a rank's rows to itself do not match");
      if (ownSends[i]->bytes > 0)
        check(cuda.cuMemcpyAsync(
                  reinterpret_cast<CUdeviceptr>(ownReceives[i]->data),
                  reinterpret_cast<CUdeviceptr>(ownSends[i]->data),
                  ownSends[i]->bytes, cuda.stream),
              "copying a rank's own rows");
    }
    waitForStream("the parameter store's exchange of rows on NCCL");
  }

  void synchronize(const char *what) override { waitForStream(what); }

private:
  struct Bucket {
    CUdeviceptr data = 0;
    size_t capacity = 0;
    /// Gradients copied in; reduced (on the communication stream).
    CUevent staged = nullptr, reduced = nullptr;
  };

  /// Page-locked host memory an upload goes through, free again once its
  /// copy is done.
  struct Staging {
    void *host = nullptr;
    size_t capacity = 0;
    CUevent copied = nullptr;
  };

  /// Staging memory for `bytes` whose last copy is done: one of the pool's,
  /// or a new one (the pool grows to the copies a step has in flight).
  Staging &stagingFor(int64_t bytes) {
    Driver &cuda = driver();
    for (Staging &staging : stagings) {
      if (staging.capacity < size_t(bytes))
        continue;
      CUresult result = cuda.cuEventQuery(staging.copied);
      if (result == CUDA_SUCCESS)
        return staging;
      if (result != CUDA_ERROR_NOT_READY)
        check(result, "copying the parameter store's ids to the GPU");
    }
    Staging &staging = stagings.emplace_back();
    staging.capacity = 4096;
    while (staging.capacity < size_t(bytes))
      staging.capacity *= 2;
    check(cuda.cuMemAllocHost(&staging.host, staging.capacity),
          "allocating " + std::to_string(staging.capacity) +
              " bytes of page-locked host memory for the parameter store's "
              "ids");
    check(cuda.cuEventCreate(&staging.copied, CU_EVENT_DISABLE_TIMING),
          "creating an event");
    return staging;
  }

  Bucket &bucket(int64_t id) {
    while (static_cast<size_t>(id) >= buckets.size()) {
      Bucket &b = buckets.emplace_back();
      for (CUevent *event : {&b.staged, &b.reduced})
        check(driver().cuEventCreate(event, CU_EVENT_DISABLE_TIMING),
              "creating an event");
    }
    return buckets[id];
  }

  /// `call(segment, count, owner)` for each rank's non-empty segment of
  /// `buffer`, in one NCCL group; returns once the group is done.
  template <typename Call>
  void forEachSegment(float *buffer, const std::vector<int64_t> &counts,
                      const char *what, Call call) {
    checkNccl(nccl.groupStart(), "ncclGroupStart");
    int64_t at = 0;
    for (size_t r = 0; r < counts.size(); at += counts[r++])
      if (counts[r] > 0)
        call(buffer + at, counts[r], static_cast<int>(r));
    checkNccl(nccl.groupEnd(), "ncclGroupEnd");
    waitForStream(what);
  }

  void checkNccl(ncclResult result, const char *what) {
    if (result != ncclSuccess && result != ncclInProgress)
      die(failure(result, what));
  }

  std::string failure(ncclResult result, const char *what) {
    const char *detail = nccl.getLastError(comm);
    return std::string(what) + " failed: " + nccl.getErrorString(result) +
           (detail && *detail ? std::string(" (") + detail + ")" : "");
  }

  /// Polls `event` until the work before it is done: a peer that stops
  /// (an NCCL error, or silence past the communication timeout) ends the
  /// job naming it instead of hanging in the driver.
  void waitForEvent(CUevent event, const char *what) {
    Driver &cuda = driver();
    uint64_t polls = 0;
    waitUntil(
        [&] {
          CUresult result = cuda.cuEventQuery(event);
          if (result == CUDA_SUCCESS)
            return true;
          if (result != CUDA_ERROR_NOT_READY)
            check(result, std::string(what) +
                              " (a kernel's error, if it printed one, is "
                              "above)");
          ncclResult async = ncclSuccess;
          nccl.commGetAsyncError(comm, &async);
          // NCCL says a connection failed, not whose: the probe names
          // the ranks that stopped answering.
          if (async != ncclSuccess && async != ncclInProgress)
            dieNamingSilentRanks(failure(async, what));
          // Spin briefly, then leave the core to the other ranks.
          if (++polls > 1000)
            std::this_thread::sleep_for(std::chrono::microseconds(50));
          return false;
        },
        what);
  }

  /// Waits for everything queued on the program's stream.
  void waitForStream(const char *what) {
    Driver &cuda = driver();
    check(cuda.cuEventRecord(done, cuda.stream), "recording an event");
    waitForEvent(done, what);
  }

  Nccl &nccl;
  ncclComm comm;
  int rank;
  CUstream commStream = nullptr;
  /// Recorded on the program's stream by waitForStream.
  CUevent done = nullptr;
  std::vector<Bucket> buckets;
  /// The parameter store's device blocks: in use (with their sizes), and
  /// released ones by size.
  std::map<CUdeviceptr, int64_t> blockSizes;
  std::multimap<int64_t, CUdeviceptr> freeBlocks;
  /// The uploads' page-locked memory.
  std::vector<Staging> stagings;
};

} // namespace

std::unique_ptr<DeviceCollectives>
parallax::runtime::makeNcclCollectives(const World &w) {
  Mode mode = gpuCommMode();
  std::string why; // empty: this rank can use NCCL
  Nccl *nccl = nullptr;
  if (mode == Mode::Mpi) {
    why = "PARALLAX_GPU_COMM=mpi";
  } else {
    int gpus = 0;
    check(driver().cuDeviceGetCount(&gpus), "counting the GPUs");
    if (mode == Mode::Auto && w.localSize > gpus)
      why = std::to_string(w.localSize) + " ranks share this machine's " +
            std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") +
            ", and NCCL needs a GPU per rank (PARALLAX_GPU_COMM=nccl tries "
            "it anyway)";
    else
      nccl = loadNccl(why);
  }
  if (mode == Mode::Nccl && !why.empty())
    die("PARALLAX_GPU_COMM=nccl, but " + why);
  // NCCL only if every rank can use it; rank 0 says which way it is.
  int mine = why.empty(), all = 0;
  MPI_Request request;
  checkMPI(MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MIN, w.comm, &request),
           "agreeing on NCCL");
  waitFor(request, "agreeing on NCCL");
  if (!all) {
    if (w.rank == 0)
      note(std::to_string(w.size) +
           " GPU workers communicate through MPI on host memory: " +
           (why.empty() ? "another rank cannot use NCCL" : why));
    return nullptr;
  }
  NcclUniqueId id{};
  if (w.rank == 0 && nccl->getUniqueId(&id) != ncclSuccess)
    die("ncclGetUniqueId failed");
  checkMPI(MPI_Ibcast(&id, sizeof id, MPI_BYTE, 0, w.comm, &request),
           "sending NCCL's unique id");
  waitFor(request, "sending NCCL's unique id");
  ncclComm comm = nullptr;
  if (ncclResult result = nccl->commInitRank(&comm, w.size, id, w.rank))
    die(std::string("ncclCommInitRank failed: ") +
        nccl->getErrorString(result) +
        (result == ncclInvalidUsage
             ? " (NCCL refuses two ranks on one GPU; run one rank "
               "per GPU, or PARALLAX_GPU_COMM=mpi)"
             : ""));
  if (w.rank == 0)
    note(std::to_string(w.size) + " GPU workers communicate through NCCL " +
         versionText(nccl->version) +
         " (dense AllReduce buckets on a communication stream, AllGathers, "
         "broadcasts, the parameter store's rows)");
  return std::make_unique<NcclCollectives>(*nccl, comm, w.rank);
}
