//===- CudaRuntime.cpp - The CUDA driver side of GPU programs -------------===//
//
// Part of the Parallax project.
//
// The `mgpu*` functions that MLIR's gpu-to-llvm lowering calls (module
// loading, launches, streams, events, memory), implemented on the CUDA
// driver API. The driver is loaded when the program first needs it
// (dlopen of libcuda.so.1), so a GPU program needs no CUDA library at link
// time and says clearly why it cannot run on a machine without a GPU.
//
// One stream serves the whole program: every stream the lowering creates
// is that stream, so launches queue in program order and the host waits
// for them only where the generated code says (gpu.wait). Buffers are
// managed memory (host_shared), cached by size when freed; the program's
// globals are such buffers too (parallax-gpu-globals-to-buffers), so
// kernels never read host memory.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "BatchPrefetch.h"
#include "CudaDriver.h"
#include "DeviceCollectives.h"
#include "Matrices.h"
#include "Profile.h"
#include "Support.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

using namespace parallax::runtime::cuda;

namespace {
void flushTimings();
} // namespace

[[noreturn]] void parallax::runtime::cuda::fail(int status,
                                                const std::string &message) {
  std::fflush(stdout);
  // Kernels are loaded before main() runs: argv[0] as glibc keeps it.
  std::fprintf(stderr, "%s: error: %s\n", program_invocation_short_name,
               message.c_str());
  std::fflush(stderr);
  std::exit(status);
}

namespace {

/// The driver's state, made on first use and never destroyed. The kernels
/// are loaded by a global constructor of priority 123 (MLIR's gpu.binary
/// translation), which runs before this library's own dynamic
/// initialisers: a global Driver would be constructed over the pointers
/// that loading resolved, and exit handlers may still use it.
Driver &driverState() {
  static Driver *cuda = new Driver;
  return *cuda;
}
/// Whether loadDriver finished (exit handlers run while it fails).
/// Constant-initialised, so set before any constructor runs.
bool driverReady = false;

} // namespace

std::string parallax::runtime::cuda::describe(CUresult result) {
  const char *name = nullptr, *text = nullptr;
  Driver &cuda = driverState();
  if (cuda.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) {
    // What a driver that cannot describe its errors returns at start-up.
    switch (result) {
    case 34:
      return "CUDA_ERROR_STUB_LIBRARY (libcuda.so.1 is the toolkit's stub, "
             "not a driver)";
    case 35:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER (the driver is older than "
             "CUDA 13)";
    case 100:
      return "CUDA_ERROR_NO_DEVICE";
    default:
      return "CUDA error " + std::to_string(result);
    }
  }
  cuda.cuGetErrorString(result, &text);
  return std::string(name) + (text ? std::string(" (") + text + ")" : "");
}

void parallax::runtime::cuda::check(CUresult result,
                                    const std::string &operation) {
  if (result != CUDA_SUCCESS)
    fail(1, operation + " failed: " + describe(result));
}

namespace {

std::string mebibytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MiB", bytes / 1048576.0);
  return text;
}

/// What the program said its buffers need, for a failed allocation's
/// message.
std::string needNote(const Driver &cuda) {
  return cuda.memoryNeed
             ? " (the program's buffers need " + mebibytes(cuda.memoryNeed) +
                   " in all, the convolutions' workspace and "
                   "the data loader's on top)"
             : std::string();
}

/// The integer in the first of `variables` the environment sets (what the
/// launcher says about this rank), or nullopt: the driver loads before
/// MPI starts, so it asks the launcher's variables.
std::optional<int>
launcherValue(std::initializer_list<const char *> variables) {
  for (const char *variable : variables)
    if (const char *value = std::getenv(variable))
      return std::atoi(value);
  return std::nullopt;
}

/// Sets the most device and managed memory the program may take: 90% of the
/// device memory free now (the rest for cuBLAS's workspace, NCCL and the
/// kernels), divided among the ranks of this machine that share the GPU.
void limitMemory(Driver &cuda, int gpus) {
  size_t free = 0, total = 0;
  check(cuda.cuMemGetInfo(&free, &total), "reading the GPU's free memory");
  int ranks = std::max(
      1, launcherValue({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
             .value_or(1));
  int sharing = (ranks + gpus - 1) / gpus;
  cuda.memoryLimit = static_cast<uint64_t>(free * 0.9) / sharing;
  cuda.memoryLimitReason =
      "90% of the " + mebibytes(free) + " free on " + cuda.deviceName +
      " when the program started" +
      (sharing > 1 ? ", divided among the " + std::to_string(sharing) +
                         " ranks sharing it"
                   : "");
}

bool loadDriver(Driver &cuda) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    fail(2, std::string("this program runs on an NVIDIA GPU (it was built "
                        "with --target cuda) and the CUDA driver "
                        "(libcuda.so.1) cannot be loaded: ") +
                dlerror());
#define PARALLAX_RESOLVE(field, symbol, result, parameters)                    \
  cuda.field = reinterpret_cast<result(*) parameters>(dlsym(library, symbol)); \
  if (!cuda.field)                                                             \
    fail(2, std::string("the CUDA driver has no ") + symbol +                  \
                ": it is older than CUDA 12");
  PARALLAX_CUDA_DRIVER(PARALLAX_RESOLVE)
#undef PARALLAX_RESOLVE
  CUresult result = cuda.cuInit(0);
  int count = 0;
  if (result == CUDA_SUCCESS)
    result = cuda.cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS || count == 0)
    fail(2, "this program runs on an NVIDIA GPU (it was built with --target "
            "cuda) and none is available" +
                (result == CUDA_SUCCESS ? std::string()
                                        : ": " + describe(result)));
  // One GPU per rank: mpirun's local rank picks it.
  int ordinal =
      launcherValue({"PARALLAX_CUDA_DEVICE", "OMPI_COMM_WORLD_LOCAL_RANK",
                     "MPI_LOCALRANKID", "SLURM_LOCALID"})
          .value_or(0) %
      count;
  CUdevice device = 0;
  check(cuda.cuDeviceGet(&device, ordinal),
        "selecting GPU " + std::to_string(ordinal));
  check(cuda.cuDevicePrimaryCtxRetain(&cuda.context, device),
        "creating the GPU context");
  check(cuda.cuCtxSetCurrent(cuda.context), "making the GPU context current");
  check(cuda.cuStreamCreate(&cuda.stream, CU_STREAM_NON_BLOCKING),
        "creating the program's stream");
  cuda.cuDeviceGetName(cuda.deviceName, sizeof cuda.deviceName, device);
  limitMemory(cuda, count);
  parallax::runtime::setDevice(cuda.deviceName);
  parallax::runtime::setDeviceProfiler(flushTimings);
  driverReady = true;
  // Several workers: NCCL where each has a GPU (decided once MPI is up).
  parallax::runtime::setDeviceCollectivesFactory(
      parallax::runtime::makeNcclCollectives);
  // Batches go to the GPU on a side stream during the step before theirs.
  parallax::runtime::setStagingDeviceFactory(
      parallax::runtime::cuda::makeCudaStagingDevice);
  // The runtime's copies of buffers (one worker's "AllReduce" between two
  // device buffers; to and from the host for checkpoints, inputs and host
  // buckets) on the program's stream, after the kernels that wrote them.
  // The host waits only where it may touch one end: device memory is
  // reached by later work on the same stream alone.
  parallax::runtime::setBufferCopy(
      [](void *to, const void *from, size_t bytes) {
        Driver &cuda = driverState();
        bool onDevice = parallax::runtime::isDeviceMemory(to) &&
                        parallax::runtime::isDeviceMemory(from);
        if (!onDevice && stepGraphDefersWaits())
          fail(1, "internal error: a copy to or from the host inside a "
                  "training step run as a CUDA graph");
        if (stepGraphSkips(StepWork::Copy, bytes))
          return;
        check(cuda.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                                 reinterpret_cast<CUdeviceptr>(from), bytes,
                                 cuda.stream),
              "copying GPU memory");
        if (!onDevice)
          check(cuda.cuStreamSynchronize(cuda.stream), "copying GPU memory");
      });
  // The blocks of the program's buffers that are device memory: the host
  // reaches them only by copies.
  parallax::runtime::setDeviceMemoryQuery([](const void *data) {
    Driver &cuda = driverState();
    std::lock_guard<std::mutex> lock(cuda.mutex);
    auto block = cuda.blockKinds.upper_bound(const_cast<void *>(data));
    if (block == cuda.blockKinds.begin())
      return false;
    --block;
    auto [bytes, hostShared] = block->second;
    return !hostShared && data < static_cast<char *>(block->first) + bytes;
  });
  return true;
}

} // namespace

Driver &parallax::runtime::cuda::driver() {
  static bool loaded = loadDriver(driverState());
  (void)loaded;
  return driverState();
}

namespace {

/// The program's stream for the null stream and for every stream the
/// lowering creates.
CUstream streamOf(CUstream stream) { return stream ? stream : driver().stream; }

/// Waits for the device and adds the timed work to the profile's sites.
void flushTimings() {
  Driver &cuda = driver();
  check(cuda.cuStreamSynchronize(cuda.stream),
        "a kernel (an error it printed, if any, is above)");
  std::lock_guard<std::mutex> lock(cuda.mutex);
  for (Driver::Timed &t : cuda.timed) {
    float milliseconds = 0;
    check(cuda.cuEventElapsedTime(&milliseconds, t.start, t.end),
          "reading a timing event");
    // A kernel's name ends in its node's, after "__"
    // (parallax-gpu-merge-kernel-modules).
    size_t node = t.name.find("__");
    parallax::runtime::addSiteTime(
        t.family, t.name, milliseconds * 1e-3,
        node == std::string::npos ? std::string() : t.name.substr(node + 2));
    cuda.timingEvents.push_back(t.start);
    cuda.timingEvents.push_back(t.end);
  }
  cuda.timed.clear();
}

} // namespace

extern "C" {

CUmodule mgpuModuleLoad(void *data, size_t /*size*/) {
  CUmodule module = nullptr;
  check(driver().cuModuleLoadData(&module, data),
        "loading the program's kernels onto the GPU (built for another "
        "architecture? see --gpu-arch)");
  return module;
}

CUmodule mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return mgpuModuleLoad(data, 0);
}

void mgpuModuleUnload(CUmodule module) {
  // At exit the driver may be shutting down, or have failed to load:
  // nothing to report.
  if (!driverReady)
    return;
  Driver &cuda = driverState();
  {
    std::lock_guard<std::mutex> lock(cuda.mutex);
    for (auto known = cuda.functions.begin(); known != cuda.functions.end();)
      known = known->first.first == module ? cuda.functions.erase(known)
                                           : std::next(known);
  }
  cuda.cuModuleUnload(module);
}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  Driver &cuda = driver();
  // The lowering asks before every launch, with the name's constant: the
  // driver is asked once per kernel.
  std::pair<CUmodule, const char *> kernel{module, name};
  {
    std::lock_guard<std::mutex> lock(cuda.mutex);
    auto known = cuda.functions.find(kernel);
    if (known != cuda.functions.end())
      return known->second;
  }
  CUfunction function = nullptr;
  check(cuda.cuModuleGetFunction(&function, module, name),
        std::string("finding kernel '") + name + "'");
  std::lock_guard<std::mutex> lock(cuda.mutex);
  cuda.functions[kernel] = function;
  cuda.kernelNames[function] = name;
  return function;
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemoryBytes,
                      CUstream stream, void **parameters, void **extra,
                      size_t /*parameterCount*/) {
  if (stepGraphSkips(StepWork::Kernel,
                     reinterpret_cast<uintptr_t>(function) ^
                         (uint64_t(gridX) << 20) ^ (uint64_t(gridY) << 36) ^
                         (uint64_t(gridZ) << 44) ^ (uint64_t(blockX) << 52)))
    return;
  Driver &cuda = driver();
  DeviceTiming timing("kernel", [&] {
    std::lock_guard<std::mutex> lock(cuda.mutex);
    return cuda.kernelNames[function];
  });
  CUresult result = cuda.cuLaunchKernel(function, gridX, gridY, gridZ, blockX,
                                        blockY, blockZ, sharedMemoryBytes,
                                        streamOf(stream), parameters, extra);
  if (result != CUDA_SUCCESS)
    check(result, "launching kernel '" + cuda.kernelNames[function] + "' (" +
                      std::to_string(gridX) + " blocks of " +
                      std::to_string(blockX) + " threads)");
}

CUstream mgpuStreamCreate() { return driver().stream; }

void mgpuStreamDestroy(CUstream) {}

void mgpuStreamSynchronize(CUstream stream) {
  // Inside a step captured or replayed as a graph: its end waits.
  if (stepGraphDefersWaits())
    return;
  check(driver().cuStreamSynchronize(streamOf(stream)),
        "a kernel (an error it printed, if any, is above)");
}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (stepGraphSkips(StepWork::Event, 0))
    return;
  check(driver().cuStreamWaitEvent(streamOf(stream), event, 0),
        "waiting for an event");
}

CUevent mgpuEventCreate() {
  CUevent event = nullptr;
  check(driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
        "creating an event");
  return event;
}

void mgpuEventDestroy(CUevent event) { driver().cuEventDestroy(event); }

void mgpuEventSynchronize(CUevent event) {
  if (stepGraphDefersWaits())
    return;
  check(driver().cuEventSynchronize(event),
        "a kernel (an error it printed, if any, is above)");
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  if (stepGraphSkips(StepWork::Event, 1))
    return;
  check(driver().cuEventRecord(event, streamOf(stream)), "recording an event");
}

void parallax_rt_cuda_memory_need(int64_t bytes) {
  Driver &cuda = driver();
  cuda.memoryNeed = static_cast<uint64_t>(bytes);
  if (cuda.memoryNeed > cuda.memoryLimit)
    fail(1, "this program's buffers need " + mebibytes(cuda.memoryNeed) +
                " of GPU memory (its variables, their optimizer state, "
                "constants and inputs, and a step's buffers at their most), "
                "more than the " +
                mebibytes(cuda.memoryLimit) + " it may use (" +
                cuda.memoryLimitReason +
                "); compile it with a smaller batch, or run fewer ranks per "
                "GPU");
}

} // extern "C"

namespace {

/// A block of `bytes` from the cache of freed ones, or from the driver.
void *allocateBlock(uint64_t bytes, bool hostShared) {
  Driver &cuda = driver();
  uint64_t allocated = 0;
  {
    std::lock_guard<std::mutex> lock(cuda.mutex);
    auto cached = cuda.freeBlocks.find({bytes, hostShared});
    if (cached != cuda.freeBlocks.end()) {
      void *block = cached->second;
      cuda.freeBlocks.erase(cached);
      return block;
    }
    allocated = cuda.allocatedBytes + bytes;
  }
  if (allocated > cuda.memoryLimit)
    fail(1, "allocating " + std::to_string(bytes) +
                " bytes of GPU memory would take the program's memory on the "
                "GPU to " +
                mebibytes(allocated) + ", past the " +
                mebibytes(cuda.memoryLimit) + " it may use (" +
                cuda.memoryLimitReason +
                "): its buffers are device and managed memory, and the GPU "
                "can take managed memory past its free memory only by "
                "hanging; train with a smaller batch, or fewer ranks per GPU" +
                needNote(cuda));
  CUdeviceptr pointer = 0;
  CUresult result =
      hostShared ? cuda.cuMemAllocManaged(&pointer, bytes, CU_MEM_ATTACH_GLOBAL)
                 : cuda.cuMemAlloc(&pointer, bytes);
  if (result != CUDA_SUCCESS) {
    size_t free = 0, total = 0;
    cuda.cuMemGetInfo(&free, &total);
    fail(1, "allocating " + std::to_string(bytes) +
                " bytes of GPU memory failed: " + describe(result) + " (" +
                mebibytes(free) + " free of " + mebibytes(total) + ")" +
                needNote(cuda));
  }
  std::lock_guard<std::mutex> lock(cuda.mutex);
  cuda.blockKinds[reinterpret_cast<void *>(pointer)] = {bytes, hostShared};
  cuda.allocatedBytes += bytes;
  return reinterpret_cast<void *>(pointer);
}

} // namespace

extern "C" {

void *mgpuMemAlloc(uint64_t bytes, CUstream /*stream*/, bool hostShared) {
  if (bytes == 0)
    return nullptr;
  // A replayed step's graph uses the blocks its capture got.
  if (void *block = stepGraphAllocation(bytes, hostShared))
    return block;
  void *block = allocateBlock(bytes, hostShared);
  stepGraphAllocated(block, bytes, hostShared);
  return block;
}

void mgpuMemFree(void *pointer, CUstream /*stream*/) {
  if (!pointer || stepGraphOwns(pointer))
    return;
  Driver &cuda = driver();
  {
    std::lock_guard<std::mutex> lock(cuda.mutex);
    auto block = cuda.blockKinds.find(pointer);
    if (block != cuda.blockKinds.end()) {
      cuda.freeBlocks.emplace(block->second, pointer);
      return;
    }
  }
  check(cuda.cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)),
        "freeing GPU memory");
}

void mgpuMemcpy(void *destination, void *source, size_t bytes,
                CUstream stream) {
  if (stepGraphSkips(StepWork::Copy, bytes))
    return;
  DeviceTiming timing("copy", [] { return std::string("device copy"); });
  check(driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(destination),
                               reinterpret_cast<CUdeviceptr>(source), bytes,
                               streamOf(stream)),
        "copying GPU memory");
}

void mgpuMemset32(void *destination, unsigned value, size_t count,
                  CUstream stream) {
  if (stepGraphSkips(StepWork::Fill, count * 4))
    return;
  check(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(destination),
                                  value, count, streamOf(stream)),
        "setting GPU memory");
}

void mgpuMemset16(void *destination, unsigned short value, size_t count,
                  CUstream stream) {
  if (stepGraphSkips(StepWork::Fill, count * 2))
    return;
  check(driver().cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(destination),
                                  value, count, streamOf(stream)),
        "setting GPU memory");
}

void mgpuMemHostRegister(void *pointer, uint64_t bytes) {
  CUresult result = driver().cuMemHostRegister(
      pointer, bytes,
      CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (result != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    check(result, "registering host memory for the GPU");
}

/// A memref<...> descriptor as the lowering passes it: the base pointers,
/// the offset, then sizes and strides.
struct Descriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
};

void mgpuMemHostRegisterMemRef(int64_t rank, Descriptor *descriptor,
                               int64_t elementBytes) {
  int64_t elements = 1;
  for (int64_t i = 0; i < rank; ++i)
    elements *= descriptor->sizesAndStrides[i];
  mgpuMemHostRegister(descriptor->aligned + descriptor->offset * elementBytes,
                      elements * elementBytes);
}

void mgpuMemHostUnregister(void *pointer) {
  driver().cuMemHostUnregister(pointer);
}

void mgpuMemHostUnregisterMemRef(int64_t rank, Descriptor *descriptor,
                                 int64_t elementBytes) {
  mgpuMemHostUnregister(descriptor->aligned +
                        descriptor->offset * elementBytes);
}

void mgpuSetDefaultDevice(int32_t device) {
  // Before the driver is loaded it picks the GPU; afterwards it is fixed.
  setenv("PARALLAX_CUDA_DEVICE", std::to_string(device).c_str(), 0);
}

} // extern "C"

//===----------------------------------------------------------------------===//
// Matrix products through cuBLAS
//===----------------------------------------------------------------------===//

namespace {

using cublasHandle = void *;
using cublasStatus = int;
constexpr int CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;

struct Cublas {
  cublasStatus (*create)(cublasHandle *);
  cublasStatus (*setStream)(cublasHandle, CUstream);
  const char *(*statusName)(cublasStatus);
  cublasStatus (*sgemm)(cublasHandle, int, int, int, int, int, const float *,
                        const float *, int, const float *, int, const float *,
                        float *, int);
  cublasStatus (*sgemmStridedBatched)(cublasHandle, int, int, int, int, int,
                                      const float *, const float *, int,
                                      long long, const float *, int, long long,
                                      const float *, float *, int, long long,
                                      int);
  cublasHandle handle = nullptr;
};

Cublas &cublas() {
  static Cublas library = [] {
    Driver &cuda = driver();
    void *handle = nullptr;
    std::string problems;
    for (const char *name : {"libcublas.so.13", "libcublas.so.12"}) {
      if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
      problems += std::string(problems.empty() ? "" : "; ") + dlerror();
    }
    if (!handle)
      fail(2, "this program's matrix products run on cuBLAS, which cannot be "
              "loaded (" +
                  problems +
                  "): put the directory of libcublas.so.13 (the CUDA "
                  "toolkit's lib64, or site-packages/nvidia/cublas/lib of "
                  "PyTorch's pip packages) on LD_LIBRARY_PATH");
    Cublas blas;
    resolveSymbol(handle, "cuBLAS", blas.create, "cublasCreate_v2");
    resolveSymbol(handle, "cuBLAS", blas.setStream, "cublasSetStream_v2");
    resolveSymbol(handle, "cuBLAS", blas.statusName, "cublasGetStatusName");
    resolveSymbol(handle, "cuBLAS", blas.sgemm, "cublasSgemm_v2");
    resolveSymbol(handle, "cuBLAS", blas.sgemmStridedBatched,
                  "cublasSgemmStridedBatched");
    if (cublasStatus status = blas.create(&blas.handle))
      fail(1, std::string("creating the cuBLAS handle failed: ") +
                  blas.statusName(status));
    blas.setStream(blas.handle, cuda.stream);
    return blas;
  }();
  return library;
}

} // namespace

extern "C" void parallax_rt_cuda_matmul_f32(int64_t rankA, void *a,
                                            int64_t rankB, void *b,
                                            int64_t rankC, void *c) {
  Cublas &blas = cublas();
  using parallax::runtime::Matrices;
  using parallax::runtime::viewMatrices;
  Matrices A = viewMatrices(rankA, a), B = viewMatrices(rankB, b),
           C = viewMatrices(rankC, c);
  if (stepGraphSkips(StepWork::Product,
                     uint64_t(C.rows) ^ (uint64_t(C.cols) << 21) ^
                         (uint64_t(A.cols) << 42) ^ (uint64_t(C.batch) << 58)))
    return;
  for (int64_t size :
       {C.rows, C.cols, A.cols, A.leading, B.leading, C.leading, C.batch})
    if (size > INT32_MAX)
      fail(1, "a matrix product of " + std::to_string(C.rows) + "x" +
                  std::to_string(A.cols) + " by " + std::to_string(A.cols) +
                  "x" + std::to_string(C.cols) +
                  " is past cuBLAS's 32-bit sizes");
  // Row-major C = A B is column-major C^T = B^T A^T: B's data comes first.
  const float one = 1.0f;
  int opB = B.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  int opA = A.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  DeviceTiming timing("cuBLAS", [&] {
    return "sgemm " +
           (C.batch > 1 ? std::to_string(C.batch) + "x" : std::string()) +
           std::to_string(C.rows) + "x" + std::to_string(C.cols) + "x" +
           std::to_string(A.cols);
  });
  cublasStatus status =
      C.batch == 1
          ? blas.sgemm(blas.handle, opB, opA, C.cols, C.rows, A.cols, &one,
                       B.data, B.leading, A.data, A.leading, &one, C.data,
                       C.leading)
          : blas.sgemmStridedBatched(
                blas.handle, opB, opA, C.cols, C.rows, A.cols, &one, B.data,
                B.leading, B.batchStride, A.data, A.leading, A.batchStride,
                &one, C.data, C.leading, C.batchStride, C.batch);
  if (status)
    fail(1, std::string("cublasSgemm failed: ") + blas.statusName(status));
  // Queued on the program's stream: the stream orders what reads C, and
  // the host waits for it before it reads C itself
  // (--parallax-gpu-stream-ordered-calls).
}
