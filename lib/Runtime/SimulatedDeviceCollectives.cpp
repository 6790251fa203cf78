//===- SimulatedDeviceCollectives.cpp - The GPU exchanges on host memory --===//
//
// Part of the Parallax project.
//
// PARALLAX_SIMULATE_GPU_COMM=1 makes a program without a GPU (a cuda-sim
// program, whose "device" memory is host memory, or a CPU one) run the
// code a GPU program runs where its workers communicate through NCCL: the
// buckets staged, reduced and unstaged (Collectives.cpp's device path),
// the parameter store's rows exchanged, summed and updated
// (DeviceParameterStore.cpp). Only the bottom layer is simulated: NCCL's
// calls are MPI's on a communicator of their own, the runtime's kernels
// are loops over the same RowKernels.h functions, device copies are
// memcpy. A multi-worker cuda-sim run under it checks the GPU path's
// logic end to end against PyTorch where there is no GPU.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "DeviceCollectives.h"
#include "Support.h"

#include "parallax/Runtime/Runtime.h"

#include <cstdlib>
#include <cstring>
#include <map>

using namespace parallax::runtime;

namespace {

class SimulatedDeviceCollectives final : public DeviceCollectives {
public:
  explicit SimulatedDeviceCollectives(const World &w) : rank(w.rank) {
    checkMPI(MPI_Comm_dup(w.comm, &comm), "MPI_Comm_dup");
  }
  ~SimulatedDeviceCollectives() override { MPI_Comm_free(&comm); }

  void stage(int64_t id, int64_t offset, const float *from,
             int64_t count) override {
    std::vector<float> &bucket = buckets[id];
    if (static_cast<int64_t>(bucket.size()) < offset + count)
      bucket.resize(offset + count);
    std::memcpy(bucket.data() + offset, from, count * sizeof(float));
  }

  void startAllReduce(int64_t id, int64_t count, int32_t reduction) override {
    std::vector<float> &bucket = buckets[id];
    MPI_Op op = reduction == PARALLAX_RT_REDUCE_MAX   ? MPI_MAX
                : reduction == PARALLAX_RT_REDUCE_MIN ? MPI_MIN
                                                      : MPI_SUM;
    MPI_Request request;
    run(MPI_Iallreduce(MPI_IN_PLACE, bucket.data(), mpiCount(count, "a bucket"),
                       MPI_FLOAT, op, comm, &request),
        "the simulated ncclAllReduce");
    waitFor(request, "the simulated ncclAllReduce");
    if (reduction == PARALLAX_RT_REDUCE_MEAN) {
      int size = 0;
      MPI_Comm_size(comm, &size);
      for (int64_t i = 0; i < count; ++i)
        bucket[i] *= 1.0f / size;
    }
  }

  void unstage(int64_t id, int64_t offset, float *to, int64_t count) override {
    std::memcpy(to, buckets[id].data() + offset, count * sizeof(float));
  }

  void waitAllReduce(int64_t) override {}

  void allGather(const void *in, void *out, int64_t bytes) override {
    MPI_Request request;
    run(MPI_Iallgather(in, mpiCount(bytes, "an AllGather"), MPI_BYTE, out,
                       mpiCount(bytes, "an AllGather"), MPI_BYTE, comm,
                       &request),
        "the simulated ncclAllGather");
    waitFor(request, "the simulated ncclAllGather");
  }

  void broadcast(void *buffer, int64_t bytes, int root) override {
    MPI_Request request;
    run(MPI_Ibcast(buffer, mpiCount(bytes, "a broadcast"), MPI_BYTE, root, comm,
                   &request),
        "the simulated ncclBroadcast");
    waitFor(request, "the simulated ncclBroadcast");
  }

  void *allocate(int64_t bytes) override {
    return std::malloc(std::max<int64_t>(bytes, 1));
  }
  void release(void *buffer) override { std::free(buffer); }

  void copy(void *to, const void *from, int64_t bytes) override {
    if (bytes > 0)
      std::memmove(to, from, bytes);
  }

  void upload(void *to, const void *from, int64_t bytes) override {
    copy(to, from, bytes);
  }

  void sumRows(const rowkernels::RowSum &sum) override {
    rowkernels::sumRowsOnHost(sum);
  }

  void updateRows(const rowkernels::RowUpdate &update) override {
    rowkernels::updateRowsOnHost(update);
  }

  void exchange(const std::vector<Transfer> &sends,
                const std::vector<Transfer> &receives) override {
    // One tag: MPI keeps each pair's messages in order, as NCCL's groups
    // match each peer's sends and receives in order.
    constexpr int kTag = 9001;
    std::vector<MPI_Request> requests;
    std::vector<const Transfer *> ownSends, ownReceives;
    auto post = [&](const Transfer &t, bool send) {
      if (t.peer == rank) {
        (send ? ownSends : ownReceives).push_back(&t);
        return;
      }
      if (t.bytes == 0)
        return;
      requests.emplace_back();
      int count = mpiCount(t.bytes, "rows");
      run(send ? MPI_Isend(t.data, count, MPI_BYTE, t.peer, kTag, comm,
                           &requests.back())
               : MPI_Irecv(t.data, count, MPI_BYTE, t.peer, kTag, comm,
                           &requests.back()),
          send ? "the simulated ncclSend" : "the simulated ncclRecv");
    };
    for (const Transfer &t : receives)
      post(t, /*send=*/false);
    for (const Transfer &t : sends)
      post(t, /*send=*/true);
    if (ownSends.size() != ownReceives.size())
      die("internal error: a rank's rows to itself do not match");
    for (size_t i = 0; i < ownSends.size(); ++i)
      copy(ownReceives[i]->data, ownSends[i]->data, ownSends[i]->bytes);
    waitFor(static_cast<int>(requests.size()), requests.data(),
            "the simulated exchange of rows");
  }

  void reduceSegments(float *buffer,
                      const std::vector<int64_t> &counts) override {
    eachSegment(
        buffer, counts, "the simulated ncclReduce",
        [&](float *segment, int count, int owner, MPI_Request *request) {
          return MPI_Ireduce(owner == rank ? MPI_IN_PLACE : segment, segment,
                             count, MPI_FLOAT, MPI_SUM, owner, comm, request);
        });
  }

  void broadcastSegments(float *buffer,
                         const std::vector<int64_t> &counts) override {
    eachSegment(
        buffer, counts, "the simulated ncclBroadcast",
        [&](float *segment, int count, int owner, MPI_Request *request) {
          return MPI_Ibcast(segment, count, MPI_FLOAT, owner, comm, request);
        });
  }

  void synchronize(const char *) override {}

private:
  static void run(int code, const char *what) { checkMPI(code, what); }

  /// `post(segment, count, owner, request)` for each rank's non-empty
  /// segment of `buffer`, every rank in the same order; waits for all.
  template <typename Post>
  void eachSegment(float *buffer, const std::vector<int64_t> &counts,
                   const char *what, Post post) {
    std::vector<MPI_Request> requests;
    int64_t at = 0;
    for (size_t r = 0; r < counts.size(); at += counts[r++])
      if (counts[r] > 0) {
        requests.emplace_back();
        run(post(buffer + at, mpiCount(counts[r], "a partition"),
                 static_cast<int>(r), &requests.back()),
            what);
      }
    waitFor(static_cast<int>(requests.size()), requests.data(), what);
  }

  int rank;
  MPI_Comm comm = MPI_COMM_NULL;
  std::map<int64_t, std::vector<float>> buckets;
};

} // namespace

bool parallax::runtime::simulatingGpuComm() {
  const char *text = std::getenv("PARALLAX_SIMULATE_GPU_COMM");
  return text && *text && std::strcmp(text, "0") != 0;
}

std::unique_ptr<DeviceCollectives>
parallax::runtime::makeSimulatedDeviceCollectives(const World &w) {
  if (w.rank == 0)
    note(std::to_string(w.size) +
         " workers communicate as GPU workers through NCCL would, simulated "
         "on host memory (PARALLAX_SIMULATE_GPU_COMM)");
  return std::make_unique<SimulatedDeviceCollectives>(w);
}
