//===- FakeCudaDriver.cpp - A CUDA driver without a GPU, for tests --------===//
//
// Part of the Parallax project.
//
// libcuda.so.1 (and, by other names, libcublas.so.13 and libcudnn.so.9)
// for machines without a GPU: the driver, cuBLAS and cuDNN functions that
// lib/Runtime/CudaRuntime.cpp and CudnnConvolutions.cpp call, on host
// memory. Generated kernels and products are not run (their results stay
// whatever the buffers held); the runtime's own kernels (the parameter
// store's, lib/Runtime/RowKernels.h) are, through the same functions the
// PTX was compiled from, and cuDNN's convolutions are, by their definition, one
// multiply-add at a time (to check the runtime's descriptors), but
// everything around them is exercised as on a GPU: the driver is loaded
// and the module with it from the program's global constructor, launches
// and products are checked against the limits an NVIDIA GPU and cuBLAS
// enforce, memory is allocated, copied, set and freed, and device memory
// (not managed) is out of the host code's reach (a touch faults). A test runs a
// --target cuda program with this library first on LD_LIBRARY_PATH to
// check the program's host side end to end; numbers are checked on a GPU
// (scripts/gpu-check.sh). PARALLAX_FAKE_CUDA_REPORT set: the counts are
// printed to stderr at exit, with the copies from the host by the memory
// they read (page-locked or pageable, which a GPU copies asynchronously
// or not) and the stream they were queued on, the most device memory
// allocated at any time, the host's waits for a stream, and the CUDA
// graphs captured and launched. A stream being captured records its
// launches, copies and fills into the graph instead of doing them (a
// graph launch does the copies and fills); waiting for that stream, or a
// copy with the host on it, fails during the capture.
// PARALLAX_FAKE_CUDA_NO_PIN
// set: host memory cannot be page-locked in place (cuMemHostRegister
// fails, as it can where the locked-memory limit is low).
// PARALLAX_FAKE_CUDA_GPUS: how many GPUs it has (1);
// PARALLAX_FAKE_CUDA_FREE_MIB: its free memory (16 GiB). FakeNccl.cpp is the
// NCCL beside it; it calls parallaxFakeCudaStall when a collective it
// fakes never completes (a peer lost), after which no event does.
//
//===----------------------------------------------------------------------===//

#include "RowKernels.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;

/// What a fat binary starts with (fatbinary.h's FATBIN_MAGIC).
constexpr uint32_t fatbinMagic = 0xBA55ED50;

std::atomic<bool> initialised{false}, stalled{false};
std::atomic<long> launches{0}, modules{0}, allocations{0}, copies{0},
    products{0}, streams{0}, convolutions{0}, streamWaits{0};
int context, event;

/// A captured graph: the copies and fills to do, the kernels counted.
struct Graph {
  std::vector<std::function<void()>> work;
  long kernels = 0;
};
/// The stream being captured and its graph (one at a time).
void *capturedStream = nullptr;
Graph *capturing = nullptr;
std::atomic<long> graphsCaptured{0}, graphLaunches{0}, graphKernels{0};

/// Whether work queued on `stream` goes into the graph being captured.
bool captures(void *stream) { return capturing && stream == capturedStream; }

/// Where memory came from, by its first byte and size: device (and
/// managed) allocations, and page-locked host memory (allocated or
/// registered). Everything else is pageable host memory.
enum class Memory { Device, Pinned, Pageable };
std::mutex memoryMutex;
std::map<uintptr_t, std::pair<size_t, Memory>> blocks;
/// Device memory allocated now, and the most at any time; the same of
/// managed memory alone.
size_t deviceBytes = 0, peakDeviceBytes = 0, managedBytes = 0,
       peakManagedBytes = 0;

/// Device memory proper (cuMemAlloc, not managed), by first byte and
/// size, is mapped without access, as a GPU's memory is out of the host's
/// reach: host code that touches it faults here as it would with a GPU.
/// The fake's own work on it (copies, sets, the runtime's kernels, cuDNN's
/// convolutions, the fake NCCL's transfers) opens all of it while any
/// such work runs (`openings` counts them).
std::map<uintptr_t, size_t> sealedBlocks;
int openings = 0;

size_t mappedBytes(size_t bytes) {
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

/// Opens or closes every sealed block; memoryMutex held.
void setDeviceAccess(bool open) {
  for (auto [address, bytes] : sealedBlocks)
    mprotect(reinterpret_cast<void *>(address), mappedBytes(bytes),
             open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

void openDevice() {
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (openings++ == 0)
    setDeviceAccess(true);
}

void closeDevice() {
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (--openings == 0)
    setDeviceAccess(false);
}

/// Device memory open for the fake's work in this scope.
struct DeviceAccess {
  DeviceAccess() { openDevice(); }
  ~DeviceAccess() { closeDevice(); }
  DeviceAccess(const DeviceAccess &) = delete;
  DeviceAccess &operator=(const DeviceAccess &) = delete;
};

Memory memoryAt(const void *pointer) {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto block = blocks.upper_bound(address);
  if (block == blocks.begin())
    return Memory::Pageable;
  --block;
  return address < block->first + block->second.first ? block->second.second
                                                      : Memory::Pageable;
}

void addBlock(const void *pointer, size_t bytes, Memory memory,
              bool managed = false) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  blocks[reinterpret_cast<uintptr_t>(pointer)] = {bytes, memory};
  if (memory == Memory::Device)
    peakDeviceBytes = std::max(peakDeviceBytes, deviceBytes += bytes);
  if (managed)
    peakManagedBytes = std::max(peakManagedBytes, managedBytes += bytes);
}

/// Forgets the block at `pointer`; the bytes it maps if it was sealed
/// device memory, else 0.
size_t removeBlock(const void *pointer) {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto block = blocks.find(address);
  if (block == blocks.end())
    return 0;
  size_t bytes = block->second.first;
  bool sealed = sealedBlocks.erase(address) > 0;
  if (block->second.second == Memory::Device) {
    deviceBytes -= bytes;
    if (!sealed)
      managedBytes -= bytes;
  }
  blocks.erase(block);
  return sealed ? mappedBytes(bytes) : 0;
}

/// Copies to the device from the host: from page-locked memory, from
/// pageable memory, and those queued on a stream other than the first
/// one made (the program's).
std::atomic<long> pinnedCopies{0}, pageableCopies{0}, sideStreamCopies{0};
void *firstStream = nullptr;

struct Report {
  ~Report() {
    if (!std::getenv("PARALLAX_FAKE_CUDA_REPORT"))
      return;
    std::fprintf(stderr,
                 "fake CUDA driver: %ld modules, %ld launches, %ld "
                 "allocations, %ld copies, %ld cuBLAS products, %ld cuDNN "
                 "convolutions\n",
                 modules.load(), launches.load(), allocations.load(),
                 copies.load(), products.load(), convolutions.load());
    std::fprintf(stderr,
                 "fake CUDA driver: %ld streams; copies to the device from "
                 "the host: %ld from page-locked memory, %ld from pageable "
                 "memory, %ld on a stream other than the first\n",
                 streams.load(), pinnedCopies.load(), pageableCopies.load(),
                 sideStreamCopies.load());
    std::fprintf(stderr,
                 "fake CUDA driver: at most %.2f MiB of device memory "
                 "allocated, at most %.2f MiB of it managed\n",
                 peakDeviceBytes / double(1 << 20),
                 peakManagedBytes / double(1 << 20));
    std::fprintf(stderr,
                 "fake CUDA driver: the host waited for a stream %ld times "
                 "(cuStreamSynchronize)\n",
                 streamWaits.load());
    std::fprintf(stderr,
                 "fake CUDA driver: %ld CUDA graphs captured, launched %ld "
                 "times (%ld kernels run by them)\n",
                 graphsCaptured.load(), graphLaunches.load(),
                 graphKernels.load());
  }
} report;

CUresult ready() {
  return initialised ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

} // namespace

extern "C" {

CUresult cuInit(unsigned flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  initialised = true;
  return CUDA_SUCCESS;
}

/// One GPU, or PARALLAX_FAKE_CUDA_GPUS of them.
int gpuCount() {
  const char *text = std::getenv("PARALLAX_FAKE_CUDA_GPUS");
  return text ? std::max(1, std::atoi(text)) : 1;
}

CUresult cuDeviceGetCount(int *count) {
  *count = gpuCount();
  return ready();
}

CUresult cuDeviceGet(int *device, int ordinal) {
  if (ordinal < 0 || ordinal >= gpuCount())
    return CUDA_ERROR_INVALID_VALUE;
  *device = 0;
  return ready();
}

CUresult cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "Parallax fake CUDA driver");
  return ready();
}

CUresult cuDevicePrimaryCtxRetain(void **result, int) {
  *result = &context;
  return ready();
}

CUresult cuCtxSetCurrent(void *current) {
  return current == &context ? ready() : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case CUDA_SUCCESS:
    *name = "CUDA_SUCCESS";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NOT_INITIALIZED:
    *name = "CUDA_ERROR_NOT_INITIALIZED";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_IMAGE:
    *name = "CUDA_ERROR_INVALID_IMAGE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_HANDLE:
    *name = "CUDA_ERROR_INVALID_HANDLE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    return CUDA_SUCCESS;
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = "(fake CUDA driver)";
  return error == CUDA_SUCCESS || error == CUDA_ERROR_INVALID_VALUE ||
                 error == CUDA_ERROR_NOT_INITIALIZED ||
                 error == CUDA_ERROR_INVALID_IMAGE ||
                 error == CUDA_ERROR_INVALID_HANDLE ||
                 error == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ||
                 error == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
             ? CUDA_SUCCESS
             : CUDA_ERROR_INVALID_VALUE;
}

/// The runtime's PTX module of the parameter store's kernels.
bool isRowKernelsPtx(const void *image) {
  const char *text = static_cast<const char *>(image);
  return std::strstr(text, ".target sm_") &&
         std::strstr(text, ".entry parallax_rows_sum") &&
         std::strstr(text, ".entry parallax_rows_update");
}

CUresult cuModuleLoadData(void **module, const void *image) {
  if (CUresult result = ready())
    return result;
  uint32_t magic = 0;
  std::memcpy(&magic, image, sizeof(magic));
  if (magic != fatbinMagic && !isRowKernelsPtx(image))
    return CUDA_ERROR_INVALID_IMAGE;
  ++modules;
  *module = const_cast<void *>(image);
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(void *) { return CUDA_SUCCESS; }

/// A function handle is its name, kept for the program's lifetime: the
/// same handle for the same kernel, as a driver's.
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  if (CUresult result = ready())
    return result;
  if (!module || !name || !*name)
    return CUDA_ERROR_INVALID_VALUE;
  static std::mutex mutex;
  static std::map<std::pair<void *, std::string>, std::string *> handles;
  std::lock_guard<std::mutex> lock(mutex);
  std::string *&handle = handles[{module, name}];
  if (!handle)
    handle = new std::string(name);
  *function = handle;
  return CUDA_SUCCESS;
}

/// The limits every NVIDIA GPU since sm_30 enforces.
CUresult cuLaunchKernel(void *function, unsigned gridX, unsigned gridY,
                        unsigned gridZ, unsigned blockX, unsigned blockY,
                        unsigned blockZ, unsigned sharedBytes, void *stream,
                        void **parameters, void **extra) {
  if (CUresult result = ready())
    return result;
  if (!function)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ ||
      gridY > 65535 || gridZ > 65535 || blockX > 1024 || blockY > 1024 ||
      blockZ > 64 || (!parameters && !extra))
    return CUDA_ERROR_INVALID_VALUE;
  if (uint64_t(blockX) * blockY * blockZ > 1024 || sharedBytes > 48 * 1024)
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  namespace rk = parallax::runtime::rowkernels;
  const std::string &name = *static_cast<std::string *>(function);
  if (captures(stream)) {
    // The fake runs the runtime's kernels at launch only: not captured.
    if (name == rk::kSumRowsKernel || name == rk::kUpdateRowsKernel)
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    ++capturing->kernels;
    return CUDA_SUCCESS;
  }
  ++launches;
  // The runtime's kernels run here, element by element, as their PTX would.
  DeviceAccess access;
  if (name == rk::kSumRowsKernel)
    rk::sumRowsOnHost(*static_cast<const rk::RowSum *>(parameters[0]));
  else if (name == rk::kUpdateRowsKernel)
    rk::updateRowsOnHost(*static_cast<const rk::RowUpdate *>(parameters[0]));
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(void **result, unsigned) {
  if (CUresult status = ready())
    return status;
  *result = new int;
  if (streams++ == 0)
    firstStream = *result;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(void *stream) {
  if (captures(stream))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  ++streamWaits;
  return ready();
}
CUresult cuStreamWaitEvent(void *, void *, unsigned) { return ready(); }
CUresult cuEventCreate(void **result, unsigned) {
  *result = &event;
  return ready();
}
CUresult cuEventDestroy_v2(void *) { return ready(); }
CUresult cuEventSynchronize(void *) { return ready(); }
CUresult cuEventQuery(void *) {
  return stalled ? CUDA_ERROR_NOT_READY : ready();
}

/// From now on, the work queued is never done (FakeNccl.cpp).
void parallaxFakeCudaStall() { stalled = true; }

/// Kernels launched one by one, graph launches and the kernels they ran
/// (the CUDA-graph tests of unittests/Runtime/CudaStepGraphTest.cpp).
void parallaxFakeCudaLaunches(long *kernels, long *graphs,
                              long *graphKernelsRun) {
  *kernels = launches;
  *graphs = graphLaunches;
  *graphKernelsRun = graphKernels;
}
CUresult cuEventRecord(void *, void *) { return ready(); }
/// Every piece of timed work took a microsecond.
CUresult cuEventElapsedTime(float *milliseconds, void *, void *) {
  *milliseconds = 0.001f;
  return ready();
}

/// Device memory is host memory here, zeroed (kernels do not run, and
/// the host side must not depend on what they would have written).
/// Managed memory is open to the host; device memory proper is sealed.
CUresult allocate(CUdeviceptr *pointer, size_t bytes, bool managed) {
  if (CUresult result = ready())
    return result;
  if (!bytes)
    return CUDA_ERROR_INVALID_VALUE;
  void *block = nullptr;
  if (managed) {
    block = std::calloc(1, bytes);
  } else {
    std::lock_guard<std::mutex> lock(memoryMutex);
    block = mmap(nullptr, mappedBytes(bytes),
                 openings ? PROT_READ | PROT_WRITE : PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED)
      block = nullptr;
    else
      sealedBlocks[reinterpret_cast<uintptr_t>(block)] = bytes;
  }
  if (!block)
    return CUDA_ERROR_OUT_OF_MEMORY;
  ++allocations;
  addBlock(block, bytes, Memory::Device, managed);
  *pointer = reinterpret_cast<CUdeviceptr>(block);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  return allocate(pointer, bytes, /*managed=*/false);
}

CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned) {
  return allocate(pointer, bytes, /*managed=*/true);
}

CUresult cuMemFree_v2(CUdeviceptr address) {
  auto *pointer = reinterpret_cast<void *>(address);
  if (size_t mapped = removeBlock(pointer))
    munmap(pointer, mapped);
  else
    std::free(pointer);
  return ready();
}

/// Device memory open to the fake NCCL's transfers until the matching
/// close.
void parallaxFakeCudaOpenDevice() { openDevice(); }
void parallaxFakeCudaCloseDevice() { closeDevice(); }

/// 16 GiB free, or PARALLAX_FAKE_CUDA_FREE_MIB (fractions allowed).
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  const char *text = std::getenv("PARALLAX_FAKE_CUDA_FREE_MIB");
  *free = text ? size_t(std::atof(text) * (1 << 20)) : size_t(1) << 34;
  *total = size_t(1) << 34;
  return ready();
}

CUresult cuMemcpyAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                       void *stream) {
  auto *target = reinterpret_cast<void *>(to);
  auto *source = reinterpret_cast<void *>(from);
  Memory read = memoryAt(source);
  if (captures(stream)) {
    // The runtime copies only between device buffers inside a graph.
    if (read != Memory::Device || memoryAt(target) != Memory::Device)
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    capturing->work.push_back([=] {
      DeviceAccess access;
      std::memmove(target, source, bytes);
      ++copies;
    });
    return CUDA_SUCCESS;
  }
  if (memoryAt(target) == Memory::Device && read != Memory::Device) {
    ++(read == Memory::Pinned ? pinnedCopies : pageableCopies);
    if (stream && stream != firstStream)
      ++sideStreamCopies;
  }
  DeviceAccess access;
  std::memmove(target, source, bytes);
  ++copies;
  return ready();
}

} // extern "C"

namespace {

template <typename Word>
CUresult fill(CUdeviceptr to, Word value, size_t count, void *stream) {
  auto set = [=] {
    DeviceAccess access;
    auto *words = reinterpret_cast<Word *>(to);
    for (size_t i = 0; i < count; ++i)
      words[i] = value;
  };
  if (captures(stream))
    capturing->work.push_back(set);
  else
    set();
  return ready();
}

} // namespace

extern "C" {

CUresult cuMemsetD32Async(CUdeviceptr to, unsigned value, size_t count,
                          void *stream) {
  return fill<uint32_t>(to, value, count, stream);
}

CUresult cuMemsetD16Async(CUdeviceptr to, unsigned short value, size_t count,
                          void *stream) {
  return fill<uint16_t>(to, value, count, stream);
}

CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  if (capturing || !stream || mode < 0 || mode > 2)
    return CUDA_ERROR_INVALID_VALUE;
  capturedStream = stream;
  capturing = new Graph;
  return ready();
}

CUresult cuStreamEndCapture(void *stream, void **graph) {
  if (!captures(stream))
    return CUDA_ERROR_INVALID_VALUE;
  *graph = capturing;
  capturing = nullptr;
  capturedStream = nullptr;
  ++graphsCaptured;
  return ready();
}

/// An executable graph is the captured one.
CUresult cuGraphInstantiateWithFlags(void **executable, void *graph,
                                     unsigned long long) {
  if (!graph)
    return CUDA_ERROR_INVALID_VALUE;
  *executable = graph;
  return ready();
}

CUresult cuGraphLaunch(void *executable, void *stream) {
  if (!executable || captures(stream))
    return CUDA_ERROR_INVALID_VALUE;
  auto *graph = static_cast<Graph *>(executable);
  for (const std::function<void()> &work : graph->work)
    work();
  ++graphLaunches;
  graphKernels += graph->kernels;
  return ready();
}

CUresult cuMemAllocHost_v2(void **pointer, size_t bytes) {
  if (CUresult result = ready())
    return result;
  if (!bytes || !(*pointer = std::calloc(1, bytes)))
    return CUDA_ERROR_OUT_OF_MEMORY;
  addBlock(*pointer, bytes, Memory::Pinned);
  return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *pointer) {
  removeBlock(pointer);
  std::free(pointer);
  return ready();
}

CUresult cuMemHostRegister_v2(void *pointer, size_t bytes, unsigned) {
  if (CUresult result = ready())
    return result;
  if (std::getenv("PARALLAX_FAKE_CUDA_NO_PIN"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  addBlock(pointer, bytes, Memory::Pinned);
  return CUDA_SUCCESS;
}

CUresult cuMemHostUnregister(void *pointer) {
  removeBlock(pointer);
  return ready();
}

//===----------------------------------------------------------------------===//
// cuBLAS
//===----------------------------------------------------------------------===//

constexpr int CUBLAS_STATUS_INVALID_VALUE = 7;
int cublasHandleObject;

int cublasCreate_v2(void **handle) {
  *handle = &cublasHandleObject;
  return ready() == CUDA_SUCCESS ? 0 : 1; // CUBLAS_STATUS_NOT_INITIALIZED
}

int cublasSetStream_v2(void *handle, void *) {
  return handle == &cublasHandleObject ? 0 : CUBLAS_STATUS_INVALID_VALUE;
}

const char *cublasGetStatusName(int status) {
  return status == 0   ? "CUBLAS_STATUS_SUCCESS"
         : status == 1 ? "CUBLAS_STATUS_NOT_INITIALIZED"
         : status == 7 ? "CUBLAS_STATUS_INVALID_VALUE"
                       : "CUBLAS_STATUS_UNKNOWN";
}

/// cuBLAS's argument checks of a column-major product C = op(A) op(B).
int checkProduct(void *handle, int transA, int transB, int m, int n, int k,
                 int lda, int ldb, int ldc) {
  if (handle != &cublasHandleObject)
    return 1;
  auto isOp = [](int op) { return op == 0 || op == 1; };
  auto atLeastOne = [](int rows) { return rows > 1 ? rows : 1; };
  if (!isOp(transA) || !isOp(transB) || m < 0 || n < 0 || k < 0 ||
      lda < atLeastOne(transA ? k : m) || ldb < atLeastOne(transB ? n : k) ||
      ldc < atLeastOne(m))
    return CUBLAS_STATUS_INVALID_VALUE;
  ++products;
  return 0;
}

int cublasSgemm_v2(void *handle, int transA, int transB, int m, int n, int k,
                   const float *, const float *, int lda, const float *,
                   int ldb, const float *, float *, int ldc) {
  return checkProduct(handle, transA, transB, m, n, k, lda, ldb, ldc);
}

int cublasSgemmStridedBatched(void *handle, int transA, int transB, int m,
                              int n, int k, const float *, const float *,
                              int lda, long long, const float *, int ldb,
                              long long, const float *, float *, int ldc,
                              long long, int batch) {
  if (batch < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  return checkProduct(handle, transA, transB, m, n, k, lda, ldb, ldc);
}

//===----------------------------------------------------------------------===//
// cuDNN
//===----------------------------------------------------------------------===//

constexpr int CUDNN_STATUS_BAD_PARAM = 2000, CUDNN_STATUS_NOT_SUPPORTED = 3000;
int cudnnHandleObject;

/// What the descriptors hold: a tensor's or filter's sizes (4 or 5), a
/// convolution's geometry (2 or 3 spatial dimensions). A 2-d one is held
/// as a 3-d one of unit depth.
struct FakeDescriptor {
  int rank = 0;
  int sizes[5] = {0, 0, 1, 0, 0}; // N, C, D, H, W
  int pad[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  int groups = 1, mathType = 0;
  bool set = false;
};

int cudnnCreate(void **handle) {
  *handle = &cudnnHandleObject;
  return ready() == CUDA_SUCCESS ? 0 : 1001; // CUDNN_STATUS_NOT_INITIALIZED
}
int cudnnSetStream(void *handle, void *) {
  return handle == &cudnnHandleObject ? 0 : CUDNN_STATUS_BAD_PARAM;
}
const char *cudnnGetErrorString(int status) {
  return status == 0                            ? "CUDNN_STATUS_SUCCESS"
         : status == CUDNN_STATUS_BAD_PARAM     ? "CUDNN_STATUS_BAD_PARAM"
         : status == CUDNN_STATUS_NOT_SUPPORTED ? "CUDNN_STATUS_NOT_SUPPORTED"
                                                : "CUDNN_STATUS_UNKNOWN";
}
size_t cudnnGetVersion() { return 91300; }

int createDescriptor(void **descriptor) {
  *descriptor = new FakeDescriptor;
  return 0;
}
int cudnnCreateTensorDescriptor(void **d) { return createDescriptor(d); }
int cudnnCreateFilterDescriptor(void **d) { return createDescriptor(d); }
int cudnnCreateConvolutionDescriptor(void **d) { return createDescriptor(d); }

/// Sets a 4-d (NCHW) or 5-d (NCDHW) descriptor's sizes.
int setSizes(void *descriptor, int format, int type, int rank,
             const int *sizes) {
  if (format != 0 || type != 0 || (rank != 4 && rank != 5))
    return CUDNN_STATUS_BAD_PARAM; // NC[D]HW float only, as the runtime asks
  auto *fake = static_cast<FakeDescriptor *>(descriptor);
  *fake = FakeDescriptor();
  fake->rank = rank;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] < 1)
      return CUDNN_STATUS_BAD_PARAM;
    fake->sizes[d < 2 ? d : d + 5 - rank] = sizes[d];
  }
  fake->set = true;
  return 0;
}
int cudnnSetTensor4dDescriptor(void *d, int format, int type, int n, int c,
                               int h, int w) {
  int sizes[] = {n, c, h, w};
  return setSizes(d, format, type, 4, sizes);
}
int cudnnSetFilter4dDescriptor(void *d, int type, int format, int k, int c,
                               int h, int w) {
  int sizes[] = {k, c, h, w};
  return setSizes(d, format, type, 4, sizes);
}
/// Packed strides only, as the runtime's buffers are.
int cudnnSetTensorNdDescriptor(void *d, int type, int rank, const int *sizes,
                               const int *strides) {
  if (rank < 1 || rank > 5)
    return CUDNN_STATUS_BAD_PARAM;
  long long packed = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (strides[i] != packed)
      return CUDNN_STATUS_NOT_SUPPORTED;
    packed *= sizes[i];
  }
  return setSizes(d, 0, type, rank, sizes);
}
int cudnnSetFilterNdDescriptor(void *d, int type, int format, int rank,
                               const int *sizes) {
  return setSizes(d, format, type, rank, sizes);
}
/// A geometry of `spatial` (2 or 3) dimensions, a 2-d one at H and W.
int setGeometry(void *d, int spatial, const int *pads, const int *strides,
                const int *dilations, int mode, int type) {
  if ((spatial != 2 && spatial != 3) || mode != 1 || type != 0)
    return CUDNN_STATUS_BAD_PARAM;
  auto *fake = static_cast<FakeDescriptor *>(d);
  int groups = fake->groups, mathType = fake->mathType;
  *fake = FakeDescriptor();
  fake->rank = spatial + 2;
  for (int i = 0; i < spatial; ++i) {
    if (pads[i] < 0 || strides[i] < 1 || dilations[i] < 1)
      return CUDNN_STATUS_BAD_PARAM;
    int slot = i + 3 - spatial;
    fake->pad[slot] = pads[i];
    fake->stride[slot] = strides[i];
    fake->dilation[slot] = dilations[i];
  }
  fake->groups = groups;
  fake->mathType = mathType;
  fake->set = true;
  return 0;
}
int cudnnSetConvolution2dDescriptor(void *d, int padH, int padW, int strideH,
                                    int strideW, int dilationH, int dilationW,
                                    int mode, int type) {
  int pads[] = {padH, padW}, strides[] = {strideH, strideW},
      dilations[] = {dilationH, dilationW};
  return setGeometry(d, 2, pads, strides, dilations, mode, type);
}
int cudnnSetConvolutionNdDescriptor(void *d, int spatial, const int *pads,
                                    const int *strides, const int *dilations,
                                    int mode, int type) {
  return setGeometry(d, spatial, pads, strides, dilations, mode, type);
}
int cudnnSetConvolutionGroupCount(void *d, int groups) {
  if (groups < 1)
    return CUDNN_STATUS_BAD_PARAM;
  static_cast<FakeDescriptor *>(d)->groups = groups;
  return 0;
}
int cudnnSetConvolutionMathType(void *d, int mathType) {
  static_cast<FakeDescriptor *>(d)->mathType = mathType;
  return 0;
}

/// cuDNN's checks of a convolution's descriptors: one rank for all, and
/// the output's shape the one cuDNN computes.
bool consistent(const FakeDescriptor &x, const FakeDescriptor &w,
                const FakeDescriptor &conv, const FakeDescriptor &y) {
  if (!x.set || !w.set || !conv.set || !y.set || x.rank != w.rank ||
      x.rank != y.rank || x.rank != conv.rank)
    return false;
  if (x.sizes[1] != w.sizes[1] * conv.groups || w.sizes[0] % conv.groups ||
      y.sizes[0] != x.sizes[0] || y.sizes[1] != w.sizes[0])
    return false;
  for (int d = 0; d < 3; ++d) {
    int reach = x.sizes[d + 2] + 2 * conv.pad[d] -
                conv.dilation[d] * (w.sizes[d + 2] - 1) - 1;
    if (reach < 0 || reach / conv.stride[d] + 1 != y.sizes[d + 2])
      return false;
  }
  return true;
}

/// Workspace the fake's one algorithm asks for: the runtime must allocate
/// and pass it.
constexpr size_t kFakeWorkspace = 4096;

struct FakePerf {
  int algo, status;
  float time;
  size_t memory;
  int determinism, mathType, reserved[3];
};

/// One algorithm, deterministic, with the descriptor's math type.
int oneAlgorithm(const FakeDescriptor &x, const FakeDescriptor &w,
                 const FakeDescriptor &conv, const FakeDescriptor &y,
                 int requested, int *returned, FakePerf *perf) {
  if (requested < 1 || !consistent(x, w, conv, y))
    return CUDNN_STATUS_BAD_PARAM;
  *returned = 1;
  perf[0] = {1, 0, 0.0f, kFakeWorkspace, 1, conv.mathType, {0, 0, 0}};
  return 0;
}
#define FAKE(d) (*static_cast<const FakeDescriptor *>(d))
int cudnnGetConvolutionForwardAlgorithm_v7(void *handle, void *x, void *w,
                                           void *conv, void *y, int requested,
                                           int *returned, FakePerf *perf) {
  if (handle != &cudnnHandleObject)
    return CUDNN_STATUS_BAD_PARAM;
  return oneAlgorithm(FAKE(x), FAKE(w), FAKE(conv), FAKE(y), requested,
                      returned, perf);
}
int cudnnGetConvolutionBackwardDataAlgorithm_v7(void *handle, void *w, void *dy,
                                                void *conv, void *dx,
                                                int requested, int *returned,
                                                FakePerf *perf) {
  if (handle != &cudnnHandleObject)
    return CUDNN_STATUS_BAD_PARAM;
  return oneAlgorithm(FAKE(dx), FAKE(w), FAKE(conv), FAKE(dy), requested,
                      returned, perf);
}
int cudnnGetConvolutionBackwardFilterAlgorithm_v7(void *handle, void *x,
                                                  void *dy, void *conv,
                                                  void *dw, int requested,
                                                  int *returned,
                                                  FakePerf *perf) {
  if (handle != &cudnnHandleObject)
    return CUDNN_STATUS_BAD_PARAM;
  return oneAlgorithm(FAKE(x), FAKE(dw), FAKE(conv), FAKE(dy), requested,
                      returned, perf);
}

enum class Pass { Forward, Data, Filter };

/// out = alpha * (the pass's sums) + beta * out, one multiply-add at a
/// time over every (image, output channel, position, filter tap).
int convolve(Pass pass, void *handle, const float *alpha,
             const FakeDescriptor &xd, float *x, const FakeDescriptor &wd,
             float *w, const FakeDescriptor &conv, int algo, void *workspace,
             size_t workspaceBytes, const float *beta, const FakeDescriptor &yd,
             float *y) {
  if (handle != &cudnnHandleObject || !consistent(xd, wd, conv, yd))
    return CUDNN_STATUS_BAD_PARAM;
  if (algo != 1 || workspaceBytes < kFakeWorkspace || !workspace)
    return CUDNN_STATUS_BAD_PARAM;
  if (conv.mathType != 3) // CUDNN_FMA_MATH: the runtime never allows TF32
    return CUDNN_STATUS_NOT_SUPPORTED;
  ++convolutions;
  DeviceAccess access;
  const int *xs = xd.sizes, *ws = wd.sizes, *ys = yd.sizes;
  int n = xs[0], c = xs[1], m = ws[0], cg = ws[1], mg = m / conv.groups;
  auto count = [](const int *sizes) {
    size_t product = 1;
    for (int d = 0; d < 5; ++d)
      product *= size_t(sizes[d]);
    return product;
  };
  size_t outCount = count(pass == Pass::Forward ? ys
                          : pass == Pass::Data  ? xs
                                                : ws);
  float *out = pass == Pass::Forward ? y : pass == Pass::Data ? x : w;
  std::vector<double> sums(outCount, 0.0);
  for (int in = 0; in < n; ++in)
    for (int om = 0; om < m; ++om)
      for (int oz = 0; oz < ys[2]; ++oz)
        for (int oy = 0; oy < ys[3]; ++oy)
          for (int ox = 0; ox < ys[4]; ++ox)
            for (int ic = 0; ic < cg; ++ic)
              for (int a = 0; a < ws[2]; ++a)
                for (int i = 0; i < ws[3]; ++i)
                  for (int j = 0; j < ws[4]; ++j) {
                    int at[3] = {oz, oy, ox}, tap[3] = {a, i, j}, from[3];
                    bool inside = true;
                    for (int d = 0; d < 3; ++d) {
                      from[d] = at[d] * conv.stride[d] - conv.pad[d] +
                                tap[d] * conv.dilation[d];
                      inside &= from[d] >= 0 && from[d] < xs[d + 2];
                    }
                    if (!inside)
                      continue;
                    size_t xAt =
                        (((size_t(in) * c + om / mg * cg + ic) * xs[2] +
                          from[0]) *
                             xs[3] +
                         from[1]) *
                            xs[4] +
                        from[2];
                    size_t wAt =
                        (((size_t(om) * cg + ic) * ws[2] + a) * ws[3] + i) *
                            ws[4] +
                        j;
                    size_t yAt =
                        (((size_t(in) * m + om) * ys[2] + oz) * ys[3] + oy) *
                            ys[4] +
                        ox;
                    if (pass == Pass::Forward)
                      sums[yAt] += double(x[xAt]) * w[wAt];
                    else if (pass == Pass::Data)
                      sums[xAt] += double(w[wAt]) * y[yAt];
                    else
                      sums[wAt] += double(x[xAt]) * y[yAt];
                  }
  for (size_t i = 0; i < outCount; ++i)
    out[i] = float(*alpha * sums[i] + (*beta != 0.0f ? *beta * out[i] : 0.0));
  return 0;
}

int cudnnConvolutionForward(void *handle, const float *alpha, void *xd,
                            const float *x, void *wd, const float *w,
                            void *conv, int algo, void *workspace, size_t bytes,
                            const float *beta, void *yd, float *y) {
  return convolve(Pass::Forward, handle, alpha, FAKE(xd),
                  const_cast<float *>(x), FAKE(wd), const_cast<float *>(w),
                  FAKE(conv), algo, workspace, bytes, beta, FAKE(yd), y);
}
int cudnnConvolutionBackwardData(void *handle, const float *alpha, void *wd,
                                 const float *w, void *dyd, const float *dy,
                                 void *conv, int algo, void *workspace,
                                 size_t bytes, const float *beta, void *dxd,
                                 float *dx) {
  return convolve(Pass::Data, handle, alpha, FAKE(dxd), dx, FAKE(wd),
                  const_cast<float *>(w), FAKE(conv), algo, workspace, bytes,
                  beta, FAKE(dyd), const_cast<float *>(dy));
}
int cudnnConvolutionBackwardFilter(void *handle, const float *alpha, void *xd,
                                   const float *x, void *dyd, const float *dy,
                                   void *conv, int algo, void *workspace,
                                   size_t bytes, const float *beta, void *dwd,
                                   float *dw) {
  return convolve(Pass::Filter, handle, alpha, FAKE(xd), const_cast<float *>(x),
                  FAKE(dwd), dw, FAKE(conv), algo, workspace, bytes, beta,
                  FAKE(dyd), const_cast<float *>(dy));
}
#undef FAKE
}
