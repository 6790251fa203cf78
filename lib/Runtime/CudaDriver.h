//===- CudaDriver.h - The CUDA driver API as GPU programs load it -*- C++
//-*-===//
//
// Part of the Parallax project. Internal to lib/Runtime: the driver's
// functions resolved at run time (dlopen of libcuda.so.1), shared by the
// mgpu* functions (CudaRuntime.cpp) and the NCCL collectives
// (NcclCollectives.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_CUDADRIVER_H
#define PARALLAX_LIB_RUNTIME_CUDADRIVER_H

#include "Profile.h"
#include "RowKernels.h"

#include <cstdint>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace parallax::runtime::cuda {

// The driver API's types and constants (cuda.h), declared here so the
// runtime builds without the CUDA toolkit.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
using CUgraph = void *;
using CUgraphExec = void *;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
constexpr unsigned CU_MEMHOSTREGISTER_PORTABLE = 0x1;
constexpr unsigned CU_MEMHOSTREGISTER_DEVICEMAP = 0x2;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 0x1;
constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr int CU_STREAM_CAPTURE_MODE_RELAXED = 2;

// Every driver function used, with its exported (versioned) name.
#define PARALLAX_CUDA_DRIVER(X)                                                \
  X(cuInit, "cuInit", CUresult, (unsigned))                                    \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *))                   \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                   \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))     \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult,            \
    (CUcontext *, CUdevice))                                                   \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                 \
  X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))     \
  X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult, const char **)) \
  X(cuModuleLoadData, "cuModuleLoadData", CUresult,                            \
    (CUmodule *, const void *))                                                \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                    \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult,                      \
    (CUfunction *, CUmodule, const char *))                                    \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X(cuStreamCreate, "cuStreamCreate", CUresult, (CUstream *, unsigned))        \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))          \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", CUresult,                          \
    (CUstream, CUevent, unsigned))                                             \
  X(cuEventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))           \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                  \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))             \
  X(cuEventQuery, "cuEventQuery", CUresult, (CUevent))                         \
  X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))             \
  X(cuEventElapsedTime, "cuEventElapsedTime", CUresult,                        \
    (float *, CUevent, CUevent))                                               \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))            \
  X(cuMemAllocManaged, "cuMemAllocManaged", CUresult,                          \
    (CUdeviceptr *, size_t, unsigned))                                         \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                        \
  X(cuMemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t *, size_t *))           \
  X(cuMemcpyAsync, "cuMemcpyAsync", CUresult,                                  \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
  X(cuMemsetD32Async, "cuMemsetD32Async", CUresult,                            \
    (CUdeviceptr, unsigned, size_t, CUstream))                                 \
  X(cuMemsetD16Async, "cuMemsetD16Async", CUresult,                            \
    (CUdeviceptr, unsigned short, size_t, CUstream))                           \
  X(cuMemAllocHost, "cuMemAllocHost_v2", CUresult, (void **, size_t))          \
  X(cuMemFreeHost, "cuMemFreeHost", CUresult, (void *))                        \
  X(cuMemHostRegister, "cuMemHostRegister_v2", CUresult,                       \
    (void *, size_t, unsigned))                                                \
  X(cuMemHostUnregister, "cuMemHostUnregister", CUresult, (void *))            \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", CUresult,                 \
    (CUstream, int))                                                           \
  X(cuStreamEndCapture, "cuStreamEndCapture", CUresult, (CUstream, CUgraph *)) \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags", CUresult,               \
    (CUgraphExec *, CUgraph, unsigned long long))                              \
  X(cuGraphLaunch, "cuGraphLaunch", CUresult, (CUgraphExec, CUstream))

struct Driver {
#define PARALLAX_DECLARE(field, symbol, result, parameters)                    \
  result(*field) parameters = nullptr;
  PARALLAX_CUDA_DRIVER(PARALLAX_DECLARE)
#undef PARALLAX_DECLARE
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::mutex mutex;
  std::map<CUfunction, std::string> kernelNames;
  /// Each kernel's function by its module and its name's address (a
  /// constant of the program).
  std::map<std::pair<CUmodule, const char *>, CUfunction> functions;
  /// Freed blocks by size and kind (managed or not), for the next
  /// allocation of that size and kind: a step frees and allocates the same
  /// buffers every step, and the driver's free would wait for the whole
  /// device. Reuse is safe on the one stream: the block's next kernels
  /// queue after its last ones, and the host touches managed buffers only
  /// after waiting for the stream.
  std::multimap<std::pair<uint64_t, bool>, void *> freeBlocks;
  std::map<void *, std::pair<uint64_t, bool>> blockKinds;
  /// Device and managed memory this program has taken from the driver
  /// (blocks in freeBlocks included), and the most it may take: a share of
  /// the device memory free at start-up. Managed memory past the GPU's
  /// free memory is not refused by the driver but can hang the GPU.
  uint64_t allocatedBytes = 0, memoryLimit = 0;
  /// What the program's buffers need in all (parallax_rt_cuda_memory_need).
  uint64_t memoryNeed = 0;
  std::string memoryLimitReason;
  char deviceName[256] = "an NVIDIA GPU";
  /// Under --profile: device work bracketed by two timing events, read at
  /// the step's end (flushTimings), and the events to reuse.
  struct Timed {
    const char *family;
    std::string name;
    CUevent start, end;
  };
  std::vector<Timed> timed;
  std::vector<CUevent> timingEvents;
};

/// Prints "PROGRAM: error: MESSAGE" and exits with `status`: usable before
/// main() (kernels load from a global constructor) and after MPI ends.
[[noreturn]] void fail(int status, const std::string &message);

/// The driver's state, loaded on first use (the GPU chosen, the context
/// current, the program's stream made).
Driver &driver();

/// The driver's name and text for `result`.
std::string describe(CUresult result);

/// Ends the program when a driver call failed, naming the operation.
void check(CUresult result, const std::string &operation);

/// Resolves `symbol` of `library` (cuBLAS, cuDNN), loaded at run time as
/// `handle`, into `field`, or ends the program (status 2) naming both.
template <typename Field>
void resolveSymbol(void *handle, const char *library, Field &field,
                   const char *symbol) {
  field = reinterpret_cast<Field>(dlsym(handle, symbol));
  if (!field)
    fail(2, std::string(library) + " has no " + symbol);
}

/// The training step as one CUDA graph (PARALLAX_CUDA_GRAPHS=1;
/// CudaStepGraph.cpp). Between parallax_rt_cuda_step_graph_begin and _end
/// the runtime captures the step's stream work once, then replays it:
/// each function that queues work asks stepGraphSkips first, with what it
/// queues (`key`: the kernel and its grid, the bytes of a copy, a
/// product's shape), and queues nothing when it returns true.
enum class StepWork : uint8_t {
  Kernel,
  Copy,
  Fill,
  Product,
  Convolution,
  Event,
  Allocation
};
bool stepGraphSkips(StepWork work, uint64_t key);
/// While replaying, the block the captured step's allocation of `bytes`
/// got (the graph's kernels use it), else null; while capturing, record
/// with stepGraphAllocated what allocation returned.
void *stepGraphAllocation(uint64_t bytes, bool hostShared);
void stepGraphAllocated(void *block, uint64_t bytes, bool hostShared);
/// Whether `block` belongs to the graph: freeing it keeps it for the
/// graph's next replay.
bool stepGraphOwns(void *block);
/// Whether the host's waits for the stream are the step graph's to do
/// (between begin and end): nothing has been queued to wait for.
bool stepGraphDefersWaits();

/// Queue the parameter store's kernels (RowKernels.cu) on the program's
/// stream, loading them on first use.
void launchSumRows(const rowkernels::RowSum &sum);
void launchUpdateRows(const rowkernels::RowUpdate &update);

/// Times the device work queued during its lifetime when profiling: an
/// event before and one after it on the program's stream. `name()` gives
/// the site's name, asked for only when profiling.
class DeviceTiming {
public:
  template <typename Name> DeviceTiming(const char *family, Name name) {
    if (!parallax::runtime::profiling())
      return;
    std::string site = name();
    Driver &cuda = driver();
    std::lock_guard<std::mutex> lock(cuda.mutex);
    timed = Driver::Timed{family, std::move(site), event(cuda), event(cuda)};
    check(cuda.cuEventRecord(timed.start, cuda.stream), "recording an event");
  }
  ~DeviceTiming() {
    if (!timed.start)
      return;
    Driver &cuda = driver();
    check(cuda.cuEventRecord(timed.end, cuda.stream), "recording an event");
    std::lock_guard<std::mutex> lock(cuda.mutex);
    cuda.timed.push_back(std::move(timed));
  }
  DeviceTiming(const DeviceTiming &) = delete;
  DeviceTiming &operator=(const DeviceTiming &) = delete;

private:
  static CUevent event(Driver &cuda) {
    if (!cuda.timingEvents.empty()) {
      CUevent reused = cuda.timingEvents.back();
      cuda.timingEvents.pop_back();
      return reused;
    }
    CUevent created = nullptr;
    check(cuda.cuEventCreate(&created, 0), "creating a timing event");
    return created;
  }
  Driver::Timed timed{nullptr, {}, nullptr, nullptr};
};

} // namespace parallax::runtime::cuda

namespace parallax::runtime {
class StagingDevice;
namespace cuda {
/// The data loader's device (CudaBatchLoader.cpp): a side stream, page-locked
/// training data, device staging slots.
StagingDevice *makeCudaStagingDevice();
} // namespace cuda
} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_CUDADRIVER_H
