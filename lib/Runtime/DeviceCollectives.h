//===- DeviceCollectives.h - Dense collectives on the GPU -------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// A GPU program's dense collectives run on the GPU (NCCL) when every rank
// has a GPU of its own. Collectives.cpp keeps what a bucket holds (which
// gradient sits where, the traffic) and hands the data to this interface;
// the CUDA runtime installs it (NcclCollectives.cpp). Without it (a CPU
// program, or GPU ranks sharing a GPU) the same calls go through MPI on
// host memory.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_DEVICECOLLECTIVES_H
#define PARALLAX_LIB_RUNTIME_DEVICECOLLECTIVES_H

#include "RowKernels.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace parallax::runtime {

struct World;

class DeviceCollectives {
public:
  virtual ~DeviceCollectives() = default;

  /// Queues the copy of `count` floats at device address `from` to
  /// position `offset` of bucket `id`, after the work queued before.
  virtual void stage(int64_t id, int64_t offset, const float *from,
                     int64_t count) = 0;

  /// Queues the AllReduce of the first `count` floats of bucket `id`
  /// (PARALLAX_RT_REDUCE_*; a mean is the average) on the communication
  /// stream once the staged copies are done; returns at once.
  virtual void startAllReduce(int64_t id, int64_t count, int32_t reduction) = 0;

  /// Queues, after the AllReduce of bucket `id`, the copy of `count`
  /// reduced floats at `offset` to device address `to`.
  virtual void unstage(int64_t id, int64_t offset, float *to,
                       int64_t count) = 0;

  /// Waits until the AllReduce of bucket `id` and the copies queued out of
  /// it are done, watching for silent ranks as every wait does.
  virtual void waitAllReduce(int64_t id) = 0;

  /// Every rank's `bytes` at `in`, in rank order at `out`; returns done.
  virtual void allGather(const void *in, void *out, int64_t bytes) = 0;

  /// Worker `root`'s `bytes` at `buffer` on every rank; returns done.
  virtual void broadcast(void *buffer, int64_t bytes, int root) = 0;

  // The parameter store's rows on the GPUs (DeviceParameterStore.cpp):
  // kernels and copies queue on the program's stream, after the step's
  // kernels and before those that follow.

  /// At least `bytes` of device memory for rows, ids or positions; a
  /// released block is reused by a later allocation of its size.
  virtual void *allocate(int64_t bytes) = 0;
  virtual void release(void *buffer) = 0;

  /// Queues a copy within device memory.
  virtual void copy(void *to, const void *from, int64_t bytes) = 0;

  /// Queues a copy of host memory to the device without waiting for the
  /// work queued before (a GPU copies pageable memory only once its stream
  /// is idle): through page-locked memory kept until the copy is done.
  /// `from` may be reused once it returns.
  virtual void upload(void *to, const void *from, int64_t bytes) = 0;

  /// Queues rowkernels::RowSum's kernel, or RowUpdate's.
  virtual void sumRows(const rowkernels::RowSum &sum) = 0;
  virtual void updateRows(const rowkernels::RowUpdate &update) = 0;

  /// Bytes between device memory of two ranks.
  struct Transfer {
    int peer;
    void *data;
    int64_t bytes;
  };
  /// Every send and receive in one NCCL group (the transfers with one peer
  /// matched in order; a rank's own copied on the device), after the work
  /// queued before; returns once every one is done.
  virtual void exchange(const std::vector<Transfer> &sends,
                        const std::vector<Transfer> &receives) = 0;

  /// Segment r of `buffer` (counts[r] floats, segments back to back) summed
  /// over the ranks onto rank r, in place; returns once done.
  virtual void reduceSegments(float *buffer,
                              const std::vector<int64_t> &counts) = 0;
  /// Segment r of rank r's `buffer` on every rank; returns once done.
  virtual void broadcastSegments(float *buffer,
                                 const std::vector<int64_t> &counts) = 0;

  /// Waits for everything queued on the program's stream.
  virtual void synchronize(const char *what) = 0;
};

/// Makes a program's device collectives once MPI is up (initWorld), or
/// returns null when its ranks communicate through MPI on host memory. Every
/// rank calls it, and all of them get the same answer.
using DeviceCollectivesFactory =
    std::unique_ptr<DeviceCollectives> (*)(const World &world);

/// Installed by the CUDA runtime when its driver loads (before main()).
void setDeviceCollectivesFactory(DeviceCollectivesFactory factory);

/// Called by initWorld on every rank of a job of several workers.
void startDeviceCollectives(const World &world);

/// The program's device collectives, or null.
DeviceCollectives *deviceCollectives();

/// Ends them (before MPI_Finalize).
void stopDeviceCollectives();

/// NCCL's (NcclCollectives.cpp): the factory a GPU program installs.
std::unique_ptr<DeviceCollectives> makeNcclCollectives(const World &world);

/// PARALLAX_SIMULATE_GPU_COMM set (not 0): a program with no GPU factory
/// runs the GPU path's exchanges on host memory
/// (SimulatedDeviceCollectives.cpp), for testing.
bool simulatingGpuComm();
std::unique_ptr<DeviceCollectives>
makeSimulatedDeviceCollectives(const World &world);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_DEVICECOLLECTIVES_H
