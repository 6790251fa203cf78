//===- Collectives.cpp - AllReduce buckets, AllGather and Broadcast -------===//
//
// Part of the Parallax project.
//
// Dense collectives of generated code, on MPI. A bucket's gradients are
// packed into one buffer as they are added; its start hands the buffer to
// the communication thread (CommThread.h), which reduces it (a ring for
// large buckets, within each machine first where machines have several
// ranks) while the main thread goes on with the backward pass; its wait
// blocks until that is done and unpacks the results. Without the thread a
// bucket is one MPI_Iallreduce between start and wait. Traffic is counted
// as a ring moves it (by machine too): 2 (N-1)/N of the bytes sent and
// received per AllReduce, (N-1)/N of the gathered bytes per AllGather. In
// a GPU program whose ranks each have a GPU the same buckets live in
// device memory and are reduced by NCCL on a communication stream
// (DeviceCollectives.h).
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"
#include "parallax/Support/Npy.h"

#include "Comm.h"
#include "CommThread.h"
#include "Descriptor.h"
#include "DeviceCollectives.h"
#include "Optimizers.h"
#include "Support.h"
#include "Trace.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

using namespace parallax::runtime;

namespace {

struct BucketEntry {
  std::string name;
  float *out;
  int64_t offset, count;
};

struct Bucket {
  std::vector<float> buffer;
  std::vector<BucketEntry> entries;
  int64_t used = 0;
  MPI_Request request = MPI_REQUEST_NULL; // without the thread
  uint64_t ticket = 0;                    // with the thread
  int32_t reduction = PARALLAX_RT_REDUCE_SUM;
  bool started = false;
  // parallax_rt_now() at the start, and (with the thread) when the
  // transfer began and ended, for the trace.
  double startedAt = 0, transferBegin = 0, transferEnd = 0;
};

/// By pointer: the communication thread holds a bucket while the vector
/// grows.
std::vector<std::unique_ptr<Bucket>> buckets;

Bucket &bucketAt(int64_t id) {
  if (id < 0)
    die("internal error: allreduce bucket " + std::to_string(id));
  while (static_cast<size_t>(id) >= buckets.size())
    buckets.push_back(std::make_unique<Bucket>());
  return *buckets[id];
}

int64_t ringBytes(int64_t bytes) {
  int n = world().size;
  return n > 1 ? 2 * (n - 1) * bytes / n : 0;
}

DeviceCollectivesFactory deviceFactory = nullptr;
/// Not destroyed at exit: a job that dies leaves the communicator to the
/// driver (NCCL must not be called after MPI_Abort).
DeviceCollectives *deviceComm = nullptr;

} // namespace

void parallax::runtime::setDeviceCollectivesFactory(
    DeviceCollectivesFactory factory) {
  deviceFactory = factory;
}

void parallax::runtime::startDeviceCollectives(const World &w) {
  if (deviceComm)
    return;
  if (deviceFactory)
    deviceComm = deviceFactory(w).release();
  else if (simulatingGpuComm())
    deviceComm = makeSimulatedDeviceCollectives(w).release();
}

DeviceCollectives *parallax::runtime::deviceCollectives() { return deviceComm; }

void parallax::runtime::stopDeviceCollectives() {
  delete deviceComm;
  deviceComm = nullptr;
}

extern "C" void parallax_rt_allreduce_add_f32(int64_t id, const char *name,
                                              int64_t rankIn, void *in,
                                              int64_t rankOut, void *out) {
  Bucket &bucket = bucketAt(id);
  if (bucket.started)
    die("internal error: gradient '" + std::string(name) +
        "' added to allreduce bucket " + std::to_string(id) +
        " after its start");
  int64_t count = elementCount(rankIn, in);
  if (elementCount(rankOut, out) != count)
    die("internal error: allreduce result of '" + std::string(name) +
        "' has another size than its input");
  if (world().size == 1) {
    // One worker: the reduction is the gradient itself (sum, mean, max or
    // min of one), copied once instead of through the bucket.
    copyBuffer(contiguousF32(name, "allreduce result", rankOut, out),
               contiguousF32(name, "gradient", rankIn, in),
               count * sizeof(float));
    return;
  }
  const float *gradient = contiguousF32(name, "gradient", rankIn, in);
  if (deviceComm) {
    deviceComm->stage(id, bucket.used, gradient, count);
  } else {
    if (bucket.buffer.size() < static_cast<size_t>(bucket.used + count))
      bucket.buffer.resize(bucket.used + count);
    // A copy from device memory in a GPU program whose ranks share a GPU.
    copyBuffer(bucket.buffer.data() + bucket.used, gradient,
               count * sizeof(float));
  }
  bucket.entries.push_back(
      {name, contiguousF32(name, "allreduce result", rankOut, out), bucket.used,
       count});
  bucket.used += count;
}

extern "C" void parallax_rt_allreduce_start(int64_t id, int32_t reduction) {
  Bucket &bucket = bucketAt(id);
  if (reduction < PARALLAX_RT_REDUCE_SUM || reduction > PARALLAX_RT_REDUCE_MIN)
    die("internal error: reduction kind " + std::to_string(reduction));
  bucket.reduction = reduction;
  bucket.started = true;
  bucket.startedAt = tracing() ? parallax_rt_now() : 0;
  const World &w = world();
  if (w.size == 1)
    return;
  TraceScope trace("comm", [&] {
    return "allreduce start (bucket " + std::to_string(id) + ")";
  });
  for (const BucketEntry &entry : bucket.entries) {
    int64_t bytes = ringBytes(entry.count * sizeof(float));
    account(entry.name, bytes, bytes);
  }
  if (deviceComm) {
    deviceComm->startAllReduce(id, bucket.used, reduction);
    return;
  }
  if (commThreadEnabled()) {
    Bucket *reduced = &bucket;
    bucket.ticket = submitToCommThread(CommLane::Buckets, [reduced, reduction] {
      bool timed = tracing();
      if (timed)
        reduced->transferBegin = parallax_rt_now();
      allreduceBucket(reduced->buffer.data(), reduced->used, reduction);
      if (timed)
        reduced->transferEnd = parallax_rt_now();
    });
    return;
  }
  checkMPI(MPI_Iallreduce(MPI_IN_PLACE, bucket.buffer.data(),
                          mpiCount(bucket.used, "allreduce bucket"), MPI_FLOAT,
                          reduction == PARALLAX_RT_REDUCE_MAX   ? MPI_MAX
                          : reduction == PARALLAX_RT_REDUCE_MIN ? MPI_MIN
                                                                : MPI_SUM,
                          w.comm, &bucket.request),
           "MPI_Iallreduce");
}

extern "C" void parallax_rt_allreduce_wait(int64_t id) {
  Bucket &bucket = bucketAt(id);
  if (!bucket.started)
    die("internal error: allreduce bucket " + std::to_string(id) +
        " waited on before its start");
  const World &w = world();
  if (w.size > 1) {
    TraceScope trace("comm", [&] {
      return "allreduce wait (bucket " + std::to_string(id) + ")";
    });
    if (deviceComm) {
      for (const BucketEntry &entry : bucket.entries)
        deviceComm->unstage(id, entry.offset, entry.out, entry.count);
      deviceComm->waitAllReduce(id);
    } else if (commThreadEnabled()) {
      waitForCommThread(CommLane::Buckets, bucket.ticket, "an AllReduce");
    } else {
      waitFor(bucket.request, "an AllReduce");
    }
  }
  if (tracing() && w.size > 1) {
    std::string variables;
    for (const BucketEntry &entry : bucket.entries)
      variables += (variables.empty() ? "" : ", ") + entry.name;
    // With the thread, the in-flight event is the transfer itself (it may
    // wait behind earlier buckets); without it, start to wait.
    bool threaded = !deviceComm && commThreadEnabled();
    traceInFlight("allreduce (bucket " + std::to_string(id) + ")", "comm",
                  threaded ? bucket.transferBegin : bucket.startedAt,
                  threaded ? bucket.transferEnd : parallax_rt_now(), variables);
  }
  // On the device the results were copied out above (a mean averaged).
  float scale =
      bucket.reduction == PARALLAX_RT_REDUCE_MEAN ? 1.0f / w.size : 1.0f;
  if (!deviceComm)
    for (const BucketEntry &entry : bucket.entries) {
      float *from = bucket.buffer.data() + entry.offset;
      if (scale != 1.0f)
        for (int64_t i = 0; i < entry.count; ++i)
          from[i] *= scale;
      // To device memory in a GPU program whose ranks share a GPU.
      copyBuffer(entry.out, from, entry.count * sizeof(float));
    }
  bucket.entries.clear();
  bucket.used = 0;
  bucket.started = false;
}

static void allGather(const char *name, int64_t elementSize, int64_t rankIn,
                      void *in, int64_t rankOut, void *out) {
  TraceScope trace("comm", [&] { return std::string("allgather ") + name; });
  const World &w = world();
  int64_t count = elementCount(rankIn, in);
  if (elementCount(rankOut, out) != count * w.size)
    die("'" + std::string(name) + "' was compiled for " +
        std::to_string(elementCount(rankOut, out) /
                       std::max<int64_t>(count, 1)) +
        " workers but runs on " + std::to_string(w.size));
  StridedView from = viewDescriptor(rankIn, in, elementSize);
  StridedView to = viewDescriptor(rankOut, out, elementSize);
  int64_t bytes = count * elementSize;
  if (w.size == 1) {
    copyBuffer(to.data, from.data, bytes);
    return;
  }
  account(name, bytes * (w.size - 1), bytes * (w.size - 1));
  if (deviceComm) {
    deviceComm->allGather(from.data, to.data, bytes);
    return;
  }
  MPI_Request request;
  checkMPI(MPI_Iallgather(from.data, mpiCount(bytes, name), MPI_BYTE, to.data,
                          mpiCount(bytes, name), MPI_BYTE, w.comm, &request),
           "MPI_Iallgather");
  waitFor(request, "an AllGather");
}

static void broadcast(int64_t elementSize, int64_t rankIn, void *in,
                      int64_t rankOut, void *out, int64_t root) {
  TraceScope trace("comm", [] { return std::string("broadcast"); });
  const World &w = world();
  if (root >= w.size)
    die("broadcast from worker " + std::to_string(root) + " in a world of " +
        std::to_string(w.size));
  int64_t bytes = elementCount(rankIn, in) * elementSize;
  StridedView to = viewDescriptor(rankOut, out, elementSize);
  if (w.rank == root)
    copyBuffer(to.data, viewDescriptor(rankIn, in, elementSize).data, bytes);
  if (w.size == 1)
    return;
  account("broadcast", w.rank == root ? bytes * (w.size - 1) : 0,
          w.rank == root ? 0 : bytes);
  if (deviceComm) {
    deviceComm->broadcast(to.data, bytes, static_cast<int>(root));
    return;
  }
  MPI_Request request;
  checkMPI(MPI_Ibcast(to.data, mpiCount(bytes, "broadcast"), MPI_BYTE,
                      static_cast<int>(root), w.comm, &request),
           "MPI_Ibcast");
  waitFor(request, "a broadcast");
}

#define PARALLAX_RT_COLLECTIVES(suffix, descr, ...)                            \
  extern "C" void parallax_rt_allgather_##suffix(const char *name,             \
                                                 int64_t rankIn, void *in,     \
                                                 int64_t rankOut, void *out) { \
    allGather(name, dtypeSize(descr), rankIn, in, rankOut, out);               \
  }                                                                            \
  extern "C" void parallax_rt_broadcast_##suffix(                              \
      int64_t rankIn, void *in, int64_t rankOut, void *out, int64_t root) {    \
    broadcast(dtypeSize(descr), rankIn, in, rankOut, out, root);               \
  }
PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_RT_COLLECTIVES)
#undef PARALLAX_RT_COLLECTIVES
