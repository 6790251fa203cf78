//===- Runtime.cpp - The C ABI that compiled Parallax programs call -------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"
#include "parallax/Support/Npy.h"

#include "CpuKernels.h"
#include "Descriptor.h"
#include "Support.h"
#include "Threads.h"
#include "parallax/Support/FileNames.h"
#include "parallax/Support/Segments.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <malloc.h>
#include <map>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace parallax::runtime;

static const char *programName = "program";
static ExitHandler exitHandler = nullptr;
static std::string messagePrefix;

namespace {
std::string inputDir, outputDir;
int64_t repeatCount = 1;

/// A range the program declared for an integer graph input.
struct InputRange {
  int64_t low, high; // [low, high)
  bool hasIgnored;
  int64_t ignored; // a value allowed besides (a loss's ignore_index)
  std::string use;
  /// (offset, size, stride) per dimension; empty: every element.
  std::vector<int64_t> region;

  /// Whether element `flat` of an array of `shape` is in the region;
  /// dimension 0 counts within a batch of `batch` examples.
  bool covers(int64_t flat, const std::vector<int64_t> &shape,
              int64_t batch) const {
    if (region.empty())
      return true;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t size = shape[d] ? shape[d] : 1;
      int64_t index = flat % size;
      flat /= size;
      if (d == 0 && batch > 0)
        index %= batch;
      if (3 * d + 2 >= region.size())
        continue;
      int64_t offset = region[3 * d], count = region[3 * d + 1],
              stride = region[3 * d + 2];
      if (index < offset || (index - offset) % stride != 0 ||
          (index - offset) / stride >= count)
        return false;
    }
    return true;
  }
};
std::map<std::string, std::vector<InputRange>> inputRanges;

std::deque<SegmentGroup> segmentGroups; // stable addresses

SegmentGroup &segmentGroup(const std::string &offsets) {
  if (SegmentGroup *group = segmentGroupStartedBy(offsets))
    return *group;
  segmentGroups.push_back({});
  segmentGroups.back().offsets = offsets;
  return segmentGroups.back();
}

constexpr const char *kOutputsManifest = "outputs.json";
std::vector<std::pair<std::string, std::string>> writtenOutputs;

/// "[3, 1]": the position of element `flat` of `shape`, from dimension
/// `from` on.
std::string positionString(int64_t flat, const std::vector<int64_t> &shape,
                           size_t from) {
  std::vector<int64_t> index(shape.size() - from);
  for (size_t d = shape.size(); d-- > from;) {
    index[d - from] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string text = "[";
  for (size_t i = 0; i < index.size(); ++i)
    text += (i ? ", " : "") + std::to_string(index[i]);
  return text + "]";
}

/// "example 7, position [2]" (or "element [7, 2]").
std::string elementString(int64_t flat, const std::vector<int64_t> &shape,
                          bool examples) {
  if (!examples || shape.empty())
    return "element " + positionString(flat, shape, 0);
  int64_t perExample = 1;
  for (size_t d = 1; d < shape.size(); ++d)
    perExample *= shape[d];
  std::string text =
      "example " + std::to_string(perExample ? flat / perExample : 0);
  if (shape.size() > 1)
    text += ", position " +
            positionString(perExample ? flat % perExample : 0, shape, 1);
  return text;
}

template <typename T>
void checkRanges(const std::string &path, const NpyArray &array,
                 const std::vector<InputRange> &ranges, bool examples,
                 int64_t batch) {
  const T *values = reinterpret_cast<const T *>(array.data.data());
  int64_t count = array.data.size() / sizeof(T);
  for (const InputRange &range : ranges) {
    // One pass that the compiler vectorizes; the rare bad element is
    // looked for only when there is one (the ignored label, padding in
    // most data, is no reason to look).
    // v is outside [low, high) when v - low, as unsigned, is at least
    // high - low: one compare per element.
    uint64_t low = range.low, span = uint64_t(range.high) - low;
    bool bad = false;
    if (range.hasIgnored)
      for (int64_t i = 0; i < count; ++i)
        bad |= (uint64_t(int64_t(values[i])) - low >= span) &
               (int64_t(values[i]) != range.ignored);
    else
      for (int64_t i = 0; i < count; ++i)
        bad |= uint64_t(int64_t(values[i])) - low >= span;
    if (!bad)
      continue;
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = values[i];
      if ((v >= range.low && v < range.high) ||
          (range.hasIgnored && v == range.ignored) ||
          !range.covers(i, array.shape, batch))
        continue;
      die("'" + path + "' " + elementString(i, array.shape, examples) +
          ": value " + std::to_string(v) + " is outside [" +
          std::to_string(range.low) + ", " + std::to_string(range.high) +
          "), the valid range of " + range.use +
          (range.hasIgnored ? " (or " + std::to_string(range.ignored) +
                                  ", the ignored label)"
                            : ""));
    }
  }
}

template <typename T>
void checkFinite(const std::string &path, const NpyArray &array,
                 bool examples) {
  const T *values = reinterpret_cast<const T *>(array.data.data());
  int64_t count = array.data.size() / sizeof(T);
  bool bad = false;
  for (int64_t i = 0; i < count; ++i)
    bad |= !(values[i] - values[i] == 0); // NaN and infinities
  if (!bad)
    return;
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(values[i]))
      die("'" + path + "' " + elementString(i, array.shape, examples) + " is " +
          (std::isnan(values[i]) ? "NaN" : "infinite") +
          ": training data must be finite");
}

/// Rewrites --outputs' manifest: which file holds which output.
void writeOutputsManifest() {
  std::string json = "{\"format\": \"parallax-outputs\", \"version\": 1, "
                     "\"outputs\": [";
  for (size_t i = 0; i < writtenOutputs.size(); ++i)
    json += std::string(i ? ", " : "") +
            "{\"name\": " + jsonString(writtenOutputs[i].first) +
            ", \"file\": " + jsonString(writtenOutputs[i].second) + "}";
  json += "]}\n";
  std::string error;
  if (!writeFileAtomically(outputDir + "/" + kOutputsManifest, {json}, error))
    die(error);
}
} // namespace

void parallax::runtime::checkInputValues(const std::string &name,
                                         const std::string &path,
                                         const NpyArray &array, bool examples,
                                         bool finite, int64_t batch) {
  auto it = inputRanges.find(name);
  if (it != inputRanges.end()) {
    const std::string &t = array.dtype;
    if (t == "<i8")
      checkRanges<int64_t>(path, array, it->second, examples, batch);
    else if (t == "<i4")
      checkRanges<int32_t>(path, array, it->second, examples, batch);
    else if (t == "<i2")
      checkRanges<int16_t>(path, array, it->second, examples, batch);
    else if (t == "|i1")
      checkRanges<int8_t>(path, array, it->second, examples, batch);
  }
  if (finite && array.dtype == "<f4")
    checkFinite<float>(path, array, examples);
  else if (finite && array.dtype == "<f8")
    checkFinite<double>(path, array, examples);
}

SegmentGroup *parallax::runtime::segmentGroupOf(const std::string &input) {
  for (SegmentGroup &group : segmentGroups)
    if (std::find(group.members.begin(), group.members.end(), input) !=
        group.members.end())
      return &group;
  return nullptr;
}

SegmentGroup *
parallax::runtime::segmentGroupStartedBy(const std::string &offsets) {
  for (SegmentGroup &group : segmentGroups)
    if (group.offsets == offsets)
      return &group;
  return nullptr;
}

extern "C" void parallax_rt_segment_input(const char *name,
                                          const char *offsets) {
  segmentGroup(offsets).members.push_back(name);
}

extern "C" void parallax_rt_segment_count(const char *offsets, int64_t rank,
                                          void *descriptor) {
  StridedView d = viewDescriptor(rank, descriptor, sizeof(int64_t));
  SegmentGroup &group = segmentGroup(offsets);
  group.count = reinterpret_cast<int64_t *>(d.data);
  if (group.read >= 0)
    *group.count = group.read;
}

extern "C" void parallax_rt_declare_input_range(const char *name, int64_t low,
                                                int64_t high,
                                                int32_t hasIgnored,
                                                int64_t ignored,
                                                const char *use) {
  inputRanges[name].push_back(
      {low, high, hasIgnored != 0, ignored, use, /*region=*/{}});
}

extern "C" void parallax_rt_declare_input_region(const char *name,
                                                 int64_t dimension,
                                                 int64_t offset, int64_t size,
                                                 int64_t stride) {
  auto it = inputRanges.find(name);
  if (it == inputRanges.end() || it->second.empty() || dimension < 0 ||
      stride < 1)
    die(std::string("internal error: bad region for input '") + name + "'");
  std::vector<int64_t> &region = it->second.back().region;
  // Dimensions not limited (yet) take every index.
  while (region.size() < 3 * size_t(dimension + 1))
    region.insert(region.end(), {0, std::numeric_limits<int64_t>::max(), 1});
  region[3 * dimension] = offset;
  region[3 * dimension + 1] = size;
  region[3 * dimension + 2] = stride;
}

extern "C" void parallax_rt_index_out_of_range(const char *where, int64_t value,
                                               int64_t low, int64_t high) {
  die(std::string(where) + ": index " + std::to_string(value) +
      " is outside [" + std::to_string(low) + ", " + std::to_string(high) +
      ")");
}

void parallax::runtime::setProgramName(const char *name) { programName = name; }

/// Bytes per chunk of a copy on the worker's threads.
constexpr int64_t kCopyChunkBytes = int64_t(1) << 16;

/// A contiguous host copy in chunks on the worker's threads: memref
/// copies, and a one-worker AllReduce's copy of a gradient (ResNet-18: 44
/// MB a step), which as one memcpy took twice as long with two threads
/// configured as with one (the other spun beside it).
static void hostCopy(void *to, const void *from, size_t bytes) {
  parallelChunks(static_cast<int64_t>(bytes), kCopyChunkBytes,
                 [&](int64_t begin, int64_t end) {
                   std::memcpy(static_cast<char *>(to) + begin,
                               static_cast<const char *>(from) + begin,
                               end - begin);
                 });
}
static parallax::runtime::BufferCopy bufferCopy = hostCopy;

void parallax::runtime::setBufferCopy(BufferCopy copy) { bufferCopy = copy; }

// Constant-initialised: set before main() runs.
static const char *deviceName = nullptr;
void parallax::runtime::setDevice(const char *name) { deviceName = name; }
const char *parallax::runtime::device() { return deviceName; }

void parallax::runtime::copyBuffer(void *to, const void *from, size_t bytes) {
  // A buffer onto itself: a gradient reduced in place at one worker.
  if (to != from)
    bufferCopy(to, from, bytes);
}

static parallax::runtime::DeviceMemoryQuery deviceMemoryQuery = nullptr;

void parallax::runtime::setDeviceMemoryQuery(DeviceMemoryQuery query) {
  deviceMemoryQuery = query;
}

bool parallax::runtime::isDeviceMemory(const void *data) {
  return deviceMemoryQuery && deviceMemoryQuery(data);
}

/// The host chunks device memory goes through: large enough that the
/// driver's per-copy cost vanishes, small beside any table.
constexpr int64_t kStagingChunkBytes = int64_t(16) << 20;

bool parallax::runtime::fillBuffer(
    char *at, int64_t bytes,
    const std::function<bool(char *, int64_t)> &produce) {
  if (!isDeviceMemory(at))
    return produce(at, bytes);
  std::vector<char> chunk(std::min(bytes, kStagingChunkBytes));
  for (int64_t done = 0; done < bytes;) {
    int64_t piece = std::min<int64_t>(bytes - done, chunk.size());
    if (!produce(chunk.data(), piece))
      return false;
    copyBuffer(at + done, chunk.data(), piece);
    done += piece;
  }
  return true;
}

bool parallax::runtime::drainBuffer(
    const char *at, int64_t bytes,
    const std::function<bool(const char *, int64_t)> &consume) {
  if (!isDeviceMemory(at))
    return consume(at, bytes);
  std::vector<char> chunk(std::min(bytes, kStagingChunkBytes));
  for (int64_t done = 0; done < bytes;) {
    int64_t piece = std::min<int64_t>(bytes - done, chunk.size());
    copyBuffer(chunk.data(), at + done, piece);
    if (!consume(chunk.data(), piece))
      return false;
    done += piece;
  }
  return true;
}

void parallax::runtime::readFileInto(
    int fd, int64_t offset, char *at, int64_t bytes,
    const std::function<void(int error)> &fail) {
  fillBuffer(at, bytes, [&](char *to, int64_t piece) {
    for (int64_t done = 0; done < piece;) {
      ssize_t n = ::pread(fd, to + done, piece - done, offset);
      if (n <= 0) {
        fail(n < 0 ? errno : 0);
        return false;
      }
      done += n;
      offset += n;
    }
    return true;
  });
}

void parallax::runtime::writeBuffer(char *at, int64_t bytes,
                                    const std::function<void(char *)> &write) {
  if (!isDeviceMemory(at))
    return write(at);
  std::vector<char> staged(bytes);
  write(staged.data());
  copyBuffer(at, staged.data(), bytes);
}

[[noreturn]] void parallax::runtime::die(const std::string &message) {
  std::fprintf(stderr, "%s: error: %s%s\n", programName, messagePrefix.c_str(),
               message.c_str());
  std::fflush(stderr);
  if (exitHandler)
    exitHandler(1);
  std::exit(1);
}

void parallax::runtime::warn(const std::string &message) {
  std::fprintf(stderr, "%s: warning: %s%s\n", programName,
               messagePrefix.c_str(), message.c_str());
}

void parallax::runtime::note(const std::string &message) {
  std::fprintf(stderr, "%s: %s\n", programName, message.c_str());
}

void parallax::runtime::setExitHandler(ExitHandler handler,
                                       const std::string &prefix) {
  exitHandler = handler;
  messagePrefix = prefix;
}

std::optional<int64_t> parallax::runtime::parseInteger(const char *text) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (errno || !*text || *end)
    return std::nullopt;
  return value;
}

int64_t parallax::runtime::parseCount(const std::string &flag, const char *text,
                                      int64_t min) {
  std::optional<int64_t> value = parseInteger(text);
  if (!value || *value < min)
    die(flag + " expects an integer >= " + std::to_string(min) + ", got '" +
        text + "'");
  return *value;
}

void parallax::runtime::keepFreedMemory() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  // Never trim: a step that frees more than any threshold at the top of
  // the heap (ResNet-18 at batch 32 frees over 1 GB) would give it back
  // and page-fault it in again the next step, some 250 brk calls a step.
  mallopt(M_TRIM_THRESHOLD, -1);
}

void parallax::runtime::checkReplaceableFile(const std::string &flag,
                                             const std::string &path,
                                             const std::string &signature,
                                             bool streamed) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return;
  if (S_ISDIR(info.st_mode) || (!S_ISREG(info.st_mode) && !streamed))
    die(flag + " '" + path +
        "' exists and is not a regular file: refusing to replace it");
  if (!S_ISREG(info.st_mode))
    return; // a device or a pipe (/dev/stdout): written to, not replaced
  if (info.st_size == 0)
    return;
  std::ifstream in(path, std::ios::binary);
  std::string start(signature.size(), '\0');
  in.read(start.data(), start.size());
  if (!in || start != signature)
    die(flag + " '" + path +
        "' exists and was not written by a Parallax program: refusing to "
        "overwrite it (choose another path or remove it)");
}

std::string parallax::runtime::dtypeName(const std::string &dtype) {
#define PARALLAX_RT_DTYPE_NAME(suffix, descr, numpyName)                       \
  if (dtype == descr)                                                          \
    return numpyName;
  PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_RT_DTYPE_NAME)
#undef PARALLAX_RT_DTYPE_NAME
  return dtype;
}

extern "C" void parallax_rt_init(int32_t argc, char **argv) {
  if (argc > 0)
    restartWithHugePageHeap(argv);
  setProgramName(argc > 0 ? argv[0] : "program");
  keepFreedMemory();
  auto usage = [&](const std::string &problem) {
    die(problem + "\nusage: " + programName +
        " --inputs DIR --outputs DIR [--repeat N] [--threads N] "
        "[--verbose]\n  reads "
        "DIR/<graph input>.npy, writes DIR/<graph output>.npy; --repeat runs "
        "the model N times (each run timed with PARALLAX_TIMING=1), writing "
        "the last run's outputs; --threads sets the threads of loops and "
        "BLAS (default: PARALLAX_THREADS, else OMP_NUM_THREADS, else the "
        "cores the program may run on); --verbose prints the CPU's features, "
        "the threads and the "
        "library and kernels chosen for them (PARALLAX_BLAS: auto, onednn or "
        "openblas; PARALLAX_BLAS_CORE: auto, library or an OpenBLAS core)");
  };
  bool verbose = false;
  int threads = 0;
  for (int32_t i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--inputs" || arg == "--outputs") && i + 1 < argc)
      (arg == "--inputs" ? inputDir : outputDir) = argv[++i];
    else if (arg == "--repeat" && i + 1 < argc)
      repeatCount = parseCount(arg, argv[++i], 1);
    else if (arg == "--threads" && i + 1 < argc)
      threads = parseThreads(arg, argv[++i]);
    else if (arg == "--verbose")
      verbose = true;
    else if (arg == "--help" || arg == "-h")
      usage("");
    else
      usage("unexpected argument '" + arg + "'");
  }
  configureThreads(threads);
  if (verbose)
    std::fprintf(stderr, "%s\n", describeKernels().c_str());
  if (inputDir.empty() || outputDir.empty())
    usage("--inputs and --outputs are required");
  struct stat info;
  if (stat(inputDir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    die("--inputs '" + inputDir + "' is not a directory");
  if (stat(outputDir.c_str(), &info) == 0) {
    // Only a directory this program wrote (its manifest is there) or an
    // empty one: outputs never replace files they did not create.
    if (!S_ISDIR(info.st_mode))
      die("--outputs '" + outputDir +
          "' exists and is not a directory: refusing to replace it");
    std::error_code ec;
    if (!std::filesystem::is_empty(outputDir, ec) &&
        stat((outputDir + "/" + kOutputsManifest).c_str(), &info) != 0)
      die("--outputs '" + outputDir +
          "' is a directory that holds no Parallax outputs (it has no " +
          kOutputsManifest +
          "): refusing to write into it (choose a new or an empty "
          "directory)");
  } else if (mkdir(outputDir.c_str(), 0777) != 0) {
    die("cannot create --outputs directory '" + outputDir +
        "': " + std::strerror(errno));
  }
  writeOutputsManifest();
}

/// The elements of the bags of one batch: up to the buffer's length, the
/// rest padded.
static void readSegmentedInput(SegmentGroup &group, const std::string &name,
                               const std::string &path, const NpyArray &array,
                               const StridedView &d) {
  int64_t capacity = d.sizes.front();
  if (array.shape.size() != 1 || array.shape.front() > capacity)
    die("'" + path + "' has shape " + shapeString(array.shape) + ", input '" +
        name + "' holds the elements of the bags '" + group.offsets +
        "' starts: 1-D, at most " + std::to_string(capacity) +
        " (the program's length)");
  int64_t count = array.shape.front();
  if (group.read >= 0 && group.read != count)
    die("'" + path + "' holds " + std::to_string(count) + " elements, but '" +
        group.readFrom + "' holds " + std::to_string(group.read) +
        ": the inputs of the bags '" + group.offsets +
        "' starts must hold as many");
  checkInputValues(name, path, array, /*examples=*/false, /*finite=*/false,
                   /*batch=*/0);
  writeBuffer(d.data, capacity * dtypeSize(array.dtype), [&](char *to) {
    copySegment(to, capacity, array.data.data(), {0, count},
                dtypeSize(array.dtype));
  });
  group.read = count;
  group.readFrom = path;
  if (group.count)
    *group.count = count;
}

static void readInput(const char *name, const char *dtype, int64_t rank,
                      void *descriptor) {
  std::string path = inputDir + "/" + encodeFileName(name) + ".npy";
  int64_t elementSize = dtypeSize(dtype);
  StridedView d = viewDescriptor(rank, descriptor, elementSize);
  NpyArray array;
  std::string error;
  if (!readNpy(path, array, error))
    die(error + " (input '" + name + "' must be " + dtypeName(dtype) +
        " of shape " + shapeString(d.sizes) + ")");
  if (array.dtype != dtype)
    die("'" + path + "' holds " + dtypeName(array.dtype) + ", input '" + name +
        "' must be " + dtypeName(dtype) + " of shape " + shapeString(d.sizes));
  if (SegmentGroup *group = segmentGroupOf(name)) {
    readSegmentedInput(*group, name, path, array, d);
    return;
  }
  if (array.shape != d.sizes)
    die("'" + path + "' has shape " + shapeString(array.shape) + ", input '" +
        name + "' must have shape " + shapeString(d.sizes));
  checkInputValues(name, path, array, /*examples=*/false, /*finite=*/false,
                   /*batch=*/0);
  copyBuffer(d.data, array.data.data(), array.data.size());
}

static void writeOutput(const char *name, const char *dtype, int64_t rank,
                        void *descriptor) {
  int64_t elementSize = dtypeSize(dtype);
  StridedView d = viewDescriptor(rank, descriptor, elementSize);
  NpyArray array;
  array.dtype = dtype;
  array.shape = d.sizes;
  int64_t count = 1;
  for (int64_t s : d.sizes)
    count *= s;
  array.data.resize(count * elementSize);
  copyBuffer(array.data.data(), d.data, array.data.size());
  std::string error;
  std::string file = encodeFileName(name) + ".npy";
  if (!writeNpy(outputDir + "/" + file, array, error))
    die(error);
  for (const auto &entry : writtenOutputs)
    if (entry.first == name)
      return;
  writtenOutputs.push_back({name, file});
  writeOutputsManifest();
}

// One entry point per element type: generated code declares each with
// its own memref<*xT> signature, which all lower to (rank, descriptor).
#define PARALLAX_RT_IO(suffix, dtype, ...)                                     \
  extern "C" void parallax_rt_read_input_##suffix(const char *name,            \
                                                  int64_t rank, void *desc) {  \
    readInput(name, dtype, rank, desc);                                        \
  }                                                                            \
  extern "C" void parallax_rt_write_output_##suffix(                           \
      const char *name, int64_t rank, void *desc) {                            \
    writeOutput(name, dtype, rank, desc);                                      \
  }
PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_RT_IO)
#undef PARALLAX_RT_IO

extern "C" int64_t parallax_rt_repeat_count() { return repeatCount; }

extern "C" void parallax_rt_report_time(const char *what, double start,
                                        double end) {
  if (std::getenv("PARALLAX_TIMING"))
    std::fprintf(stderr, "%s: %.6f s\n", what, end - start);
}

extern "C" double parallax_rt_now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// `length` elements of type T from `from` to `to`, `fromStep` and
/// `toStep` bytes apart.
template <typename T>
static void copyStrided(const char *from, char *to, int64_t length,
                        int64_t fromStep, int64_t toStep) {
  for (int64_t i = 0; i < length; ++i) {
    T value;
    std::memcpy(&value, from + i * fromStep, sizeof(T));
    std::memcpy(to + i * toStep, &value, sizeof(T));
  }
}

extern "C" void parallax_rt_memref_copy(int64_t elementSize, void *sourcePtr,
                                        void *targetPtr) {
  // MLIR's unranked memrefs, passed by pointer.
  auto *source = static_cast<UnrankedMemRefType<char> *>(sourcePtr);
  auto *target = static_cast<UnrankedMemRefType<char> *>(targetPtr);
  int64_t rank = source->rank;
  StridedView src = viewDescriptor(rank, source->descriptor, elementSize);
  StridedView dst = viewDescriptor(rank, target->descriptor, elementSize);
  // The innermost dimensions that are contiguous in both form one run,
  // copied with memcpy; the outer ones are walked index by index, the
  // innermost of them as a strided loop (a dilation or a strided slice
  // copies single elements: a typed load and store each, not a memcpy
  // call).
  int64_t run = 1, inner = rank;
  while (inner > 0 && src.strides[inner - 1] == run &&
         dst.strides[inner - 1] == run) {
    run *= src.sizes[inner - 1];
    --inner;
  }
  // Large copies run in chunks on the worker's threads.
  if (inner == 0) {
    hostCopy(dst.data, src.data, run * elementSize);
    return;
  }
  int64_t lines = 1;
  for (int64_t d = 0; d + 1 < inner; ++d)
    lines *= src.sizes[d];
  int64_t length = src.sizes[inner - 1];
  int64_t srcStep = src.strides[inner - 1] * elementSize;
  int64_t dstStep = dst.strides[inner - 1] * elementSize;
  int64_t bytes = run * elementSize;
  int64_t linesPerChunk = std::max<int64_t>(
      1, kCopyChunkBytes / std::max<int64_t>(1, length * bytes));
  parallelChunks(lines, linesPerChunk, [&](int64_t first, int64_t last) {
    // The index of line `first` in the outer dimensions.
    std::vector<int64_t> index(inner - 1, 0);
    for (int64_t d = inner - 2, rest = first; d >= 0; --d) {
      index[d] = rest % src.sizes[d];
      rest /= src.sizes[d];
    }
    for (int64_t line = first; line < last; ++line) {
      int64_t srcOffset = 0, dstOffset = 0;
      for (int64_t d = 0; d + 1 < inner; ++d) {
        srcOffset += index[d] * src.strides[d];
        dstOffset += index[d] * dst.strides[d];
      }
      const char *from = src.data + srcOffset * elementSize;
      char *to = dst.data + dstOffset * elementSize;
      if (bytes == 4)
        copyStrided<uint32_t>(from, to, length, srcStep, dstStep);
      else if (bytes == 8)
        copyStrided<uint64_t>(from, to, length, srcStep, dstStep);
      else
        for (int64_t i = 0; i < length; ++i)
          std::memcpy(to + i * dstStep, from + i * srcStep, bytes);
      for (int64_t d = inner - 2; d >= 0; --d) {
        if (++index[d] < src.sizes[d])
          break;
        index[d] = 0;
      }
    }
  });
}
