//===- BatchPrefetch.h - Batches copied to a device ahead of their step ---===//
//
// Part of the Parallax project. Internal to lib/Runtime: the data loader
// of GPU programs. Each step's batch goes to the device on a side stream
// while the step before it runs, from page-locked host memory, into one
// of two device staging buffers; the step's stream then copies it into
// the inputs' buffers (device to device) right before the step's kernels.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_BATCHPREFETCH_H
#define PARALLAX_LIB_RUNTIME_BATCHPREFETCH_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace parallax::runtime {

/// What staging batches needs from a device: two streams (the step's, on
/// which the program's kernels run, and a side stream for the copies from
/// the host), events, page-locked and device memory. The CUDA driver
/// implements it in GPU programs (CudaBatchLoader.cpp); the tests, a
/// simulated device that runs queued work as late or as early as the
/// streams and events allow.
class StagingDevice {
public:
  using Event = void *;
  enum class Stream { Step, Side };

  virtual ~StagingDevice() = default;
  /// Page-locks `bytes` at `host` in place, so that copies from it are
  /// asynchronous; false where it cannot (the batches then go through
  /// page-locked buffers of their own).
  virtual bool pin(const void *host, size_t bytes) = 0;
  virtual void *allocatePinned(size_t bytes) = 0;
  virtual void *allocateDevice(size_t bytes) = 0;
  virtual Event createEvent() = 0;
  /// Queues a copy on `stream`; returns at once.
  virtual void copy(Stream stream, void *to, const void *from,
                    size_t bytes) = 0;
  virtual void record(Stream stream, Event event) = 0;
  /// Later work on `stream` waits for the work before `event`'s last
  /// record.
  virtual void wait(Stream stream, Event event) = 0;
  /// The host waits for the work before `event`'s last record.
  virtual void hostWait(Event event) = 0;
};

/// A graph input whose batches are consecutive example rows of a host
/// array: the step's buffer of it, the bytes of one batch, and the array.
struct StagedInput {
  void *buffer;
  size_t batchBytes;
  /// Batch b is the batchBytes at data + b * batchBytes...
  const char *data;
  size_t dataBytes;
  /// ...unless `fill` is set: it writes batch b's batchBytes to `to`, a
  /// page-locked buffer of the loader's (bags of varying size, their
  /// offsets rebased: not rows of the file).
  std::function<void(int64_t b, char *to)> fill = nullptr;
};

/// Double-buffered batches: while step s runs, step s + 1's batch is
/// copied into the other staging slot.
class BatchPrefetcher {
public:
  /// `slice(step)`: which batch of the arrays `step` reads (its first row
  /// is slice * the batch's rows). Pins the arrays where it can.
  BatchPrefetcher(StagingDevice &device, std::vector<StagedInput> inputs,
                  std::function<int64_t(int64_t)> slice);

  /// Puts `step`'s batch into the inputs' buffers in the step stream's
  /// order (kernels queued after this call read it), then starts copying
  /// `next`'s batch on the side stream (none when `next` < 0).
  void load(int64_t step, int64_t next);

  /// Whether every array is read in place (page-locked), with no host copy.
  bool pinnedInPlace() const;

private:
  struct Slot {
    std::vector<void *> staged, bounce; // per input; bounce where unpinned
    StagingDevice::Event copied = nullptr, consumed = nullptr;
    int64_t step = -1; // the batch staged here and not yet loaded
    bool copiedRecorded = false, consumedRecorded = false;
  };

  void stage(int64_t step);

  StagingDevice &device;
  std::vector<StagedInput> inputs;
  std::vector<bool> pinned;
  std::function<int64_t(int64_t)> slice;
  std::array<Slot, 2> slots;
};

/// A GPU program's staging device, or null (a CPU program, whose inputs
/// are host memory). Set when the CUDA driver loads.
using StagingDeviceFactory = StagingDevice *(*)();
void setStagingDeviceFactory(StagingDeviceFactory factory);
StagingDevice *makeStagingDevice();

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_BATCHPREFETCH_H
