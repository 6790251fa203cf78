//===- CudaBatchLoader.cpp - Batches to the GPU ahead of their step -------===//
//
// Part of the Parallax project.
//
// The CUDA driver's side of BatchPrefetch.h: a side stream for the copies
// from the host, the training data page-locked in place (so the copies
// are asynchronous DMA, not staged by the driver through its own buffers
// with the host waiting), and device memory for the two staging slots.
//
//===----------------------------------------------------------------------===//

#include "BatchPrefetch.h"
#include "CudaDriver.h"

#include <string>
#include <unistd.h>

using namespace parallax::runtime;
using namespace parallax::runtime::cuda;

extern "C" void *mgpuMemAlloc(uint64_t bytes, CUstream stream, bool hostShared);

namespace {

class CudaStagingDevice final : public StagingDevice {
public:
  CudaStagingDevice() : cuda(driver()) {
    check(cuda.cuStreamCreate(&side, CU_STREAM_NON_BLOCKING),
          "creating the data loader's stream");
  }

  bool pin(const void *host, size_t bytes) override {
    if (!bytes)
      return true;
    // Page-locked memory cannot be swapped out: an array past half the
    // machine's memory goes through the page-locked buffers instead.
    long pages = sysconf(_SC_PHYS_PAGES), pageBytes = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && pageBytes > 0 &&
        bytes > static_cast<size_t>(pages) * pageBytes / 2)
      return false;
    // Not "already registered": two small arrays may share a page, and
    // the second would then be page-locked only in part.
    return cuda.cuMemHostRegister(const_cast<void *>(host), bytes,
                                  CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS;
  }

  void *allocatePinned(size_t bytes) override {
    void *pointer = nullptr;
    check(cuda.cuMemAllocHost(&pointer, bytes),
          "allocating " + std::to_string(bytes) +
              " bytes of page-locked host memory for the batches");
    return pointer;
  }

  void *allocateDevice(size_t bytes) override {
    // Device memory, not managed: what the copies from the host write.
    return mgpuMemAlloc(bytes, nullptr, /*hostShared=*/false);
  }

  Event createEvent() override {
    CUevent event = nullptr;
    check(cuda.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
          "creating the data loader's event");
    return event;
  }

  void copy(Stream stream, void *to, const void *from, size_t bytes) override {
    check(cuda.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                             reinterpret_cast<CUdeviceptr>(from), bytes,
                             streamOf(stream)),
          stream == Stream::Side ? "copying a batch to the GPU"
                                 : "copying a batch into the step's inputs");
  }

  void record(Stream stream, Event event) override {
    check(cuda.cuEventRecord(event, streamOf(stream)),
          "recording the data loader's event");
  }

  void wait(Stream stream, Event event) override {
    check(cuda.cuStreamWaitEvent(streamOf(stream), event, 0),
          "waiting for the data loader's event");
  }

  void hostWait(Event event) override {
    check(cuda.cuEventSynchronize(event), "copying a batch to the GPU");
  }

private:
  CUstream streamOf(Stream stream) const {
    return stream == Stream::Side ? side : cuda.stream;
  }

  Driver &cuda;
  CUstream side = nullptr;
};

} // namespace

StagingDevice *parallax::runtime::cuda::makeCudaStagingDevice() {
  return new CudaStagingDevice;
}
