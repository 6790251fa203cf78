//===- Runtime.cpp - The C ABI that compiled Parallax programs call -------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"
#include "parallax/Runtime/Npy.h"

#include "Descriptor.h"
#include "Support.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <string>
#include <sys/stat.h>

using namespace parallax::runtime;

static const char *programName = "program";
static ExitHandler exitHandler = nullptr;
static std::string messagePrefix;

namespace {
std::string inputDir, outputDir;
int64_t repeatCount = 1;
} // namespace

void parallax::runtime::setProgramName(const char *name) { programName = name; }

[[noreturn]] void parallax::runtime::die(const std::string &message) {
  std::fprintf(stderr, "%s: error: %s%s\n", programName, messagePrefix.c_str(),
               message.c_str());
  std::fflush(stderr);
  if (exitHandler)
    exitHandler(1);
  std::exit(1);
}

void parallax::runtime::setExitHandler(ExitHandler handler,
                                       const std::string &prefix) {
  exitHandler = handler;
  messagePrefix = prefix;
}

int64_t parallax::runtime::parseCount(const std::string &flag, const char *text,
                                      int64_t min) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (errno || !*text || *end || value < min)
    die(flag + " expects an integer >= " + std::to_string(min) + ", got '" +
        text + "'");
  return value;
}

void parallax::runtime::keepFreedMemory() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
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
  setProgramName(argc > 0 ? argv[0] : "program");
  keepFreedMemory();
  auto usage = [&](const std::string &problem) {
    die(problem + "\nusage: " + programName +
        " --inputs DIR --outputs DIR [--repeat N]\n  reads DIR/<graph "
        "input>.npy, writes DIR/<graph output>.npy; --repeat runs the model N "
        "times (each run timed with PARALLAX_TIMING=1), writing the last "
        "run's outputs");
  };
  for (int32_t i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--inputs" || arg == "--outputs") && i + 1 < argc)
      (arg == "--inputs" ? inputDir : outputDir) = argv[++i];
    else if (arg == "--repeat" && i + 1 < argc)
      repeatCount = parseCount(arg, argv[++i], 1);
    else if (arg == "--help" || arg == "-h")
      usage("");
    else
      usage("unexpected argument '" + arg + "'");
  }
  if (inputDir.empty() || outputDir.empty())
    usage("--inputs and --outputs are required");
  struct stat info;
  if (stat(inputDir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    die("--inputs '" + inputDir + "' is not a directory");
  if (stat(outputDir.c_str(), &info) != 0 &&
      mkdir(outputDir.c_str(), 0777) != 0)
    die("cannot create --outputs directory '" + outputDir +
        "': " + std::strerror(errno));
}

static void readInput(const char *name, const char *dtype, int64_t rank,
                      void *descriptor) {
  std::string path = inputDir + "/" + name + ".npy";
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
  if (array.shape != d.sizes)
    die("'" + path + "' has shape " + shapeString(array.shape) + ", input '" +
        name + "' must have shape " + shapeString(d.sizes));
  std::memcpy(d.data, array.data.data(), array.data.size());
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
  array.data.assign(d.data, d.data + count * elementSize);
  std::string error;
  if (!writeNpy(outputDir + "/" + name + ".npy", array, error))
    die(error);
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

namespace {
/// MLIR's unranked memref as passed by pointer: a rank and a descriptor.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};
} // namespace

/// `memref.copy` between memrefs with arbitrary strides, which the LLVM
/// lowering turns into a call to this function (MLIR's C runner utilities
/// define it too; programs do not link those).
extern "C" void memrefCopy(int64_t elementSize, UnrankedMemRef *source,
                           UnrankedMemRef *target) {
  int64_t rank = source->rank;
  StridedView src = viewDescriptor(rank, source->descriptor, elementSize);
  StridedView dst = viewDescriptor(rank, target->descriptor, elementSize);
  // The innermost dimensions that are contiguous in both form one run,
  // copied with memcpy; the outer ones are walked index by index.
  int64_t run = 1, inner = rank;
  while (inner > 0 && src.strides[inner - 1] == run &&
         dst.strides[inner - 1] == run) {
    run *= src.sizes[inner - 1];
    --inner;
  }
  int64_t count = 1;
  for (int64_t d = 0; d < inner; ++d)
    count *= src.sizes[d];
  std::vector<int64_t> index(inner, 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t d = 0; d < inner; ++d) {
      srcOffset += index[d] * src.strides[d];
      dstOffset += index[d] * dst.strides[d];
    }
    std::memcpy(dst.data + dstOffset * elementSize,
                src.data + srcOffset * elementSize, run * elementSize);
    for (int64_t d = inner - 1; d >= 0; --d) {
      if (++index[d] < src.sizes[d])
        break;
      index[d] = 0;
    }
  }
}
