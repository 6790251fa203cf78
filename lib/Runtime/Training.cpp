//===- Training.cpp - The driver loop of training programs ----------------===//
//
// Part of the Parallax project.
//
// Command line, training data, metrics, progress and checkpoints of a
// training program, run as one worker or as one of N MPI ranks. The
// generated `main` registers the variables and input buffers, then calls
// begin, load_batch / train_step / step_end per step, and finish. With N
// workers of batch B, worker r trains step s on examples
// [(s N + r) B, (s N + r + 1) B): the same computation as one worker with
// batch N B.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"
#include "parallax/Support/Npy.h"

#include "BatchPrefetch.h"
#include "Checkpoint.h"
#include "Comm.h"
#include "CommThread.h"
#include "CpuKernels.h"
#include "Descriptor.h"
#include "ModelWeights.h"
#include "ParameterStore.h"
#include "Profile.h"
#include "Support.h"
#include "Threads.h"
#include "Trace.h"
#include "parallax/Support/FileNames.h"
#include "parallax/Support/Segments.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace parallax::runtime;
namespace fs = std::filesystem;

namespace {

struct Input : Buffer {
  NpyArray file;
  int64_t exampleBytes = 0;
  // Bags of varying size (docs/training.md): the index in `bagGroups` of
  // the group whose elements this input holds, or whose offsets.
  int bags = -1;
  bool holdsElements = false;
};

/// Inputs holding bags of varying size, as the data holds them.
struct Bags {
  SegmentGroup *group = nullptr;
  Input *offsets = nullptr;        // each example's first element
  std::vector<int64_t> starts;     // its file's values (int32 or int64)
  const Input *elements = nullptr; // the first member; its length
  int64_t capacity = 0;            // the elements one batch may hold
};

struct Options {
  std::string data, metrics, save, restore, trace, profile, init;
  std::string rankMetrics; // --metrics-all-ranks: FILE.<rank>
  int64_t steps = -1, saveEvery = 0, logEvery = 10, commTimeout = 60;
  int threads = 0;             // --threads; 0: Threads.h's default
  std::optional<int64_t> seed; // --seed: replaces the compiled seed
  bool metricsAllRanks = false, verbose = false;
};

Options options;
std::vector<Input> inputs;
std::vector<Bags> bagGroups;
std::vector<Variable> variables;
int64_t firstStep = 0, endStep = 0, currentStep = 1, batch = 0;
// The global index of the first example of this worker's batch (random draws).
int64_t firstExample = 0;
double computeStart = 0; // parallax_rt_now() when the step function starts
/// A GPU program's loader of the inputs that are plain example rows: each
/// batch copied to the device during the step before its own. Null in a
/// CPU program. Never destroyed: it may be in use while the program exits.
BatchPrefetcher *prefetcher = nullptr;
std::FILE *metricsFile = nullptr, *rankMetricsFile = nullptr;
double stepStart = 0, runStart = 0;

Buffer view(const char *name, const std::string &dtype, int64_t rank,
            void *descriptor) {
  int64_t elementSize = dtypeSize(dtype);
  StridedView d = viewDescriptor(rank, descriptor, elementSize);
  int64_t count = 1;
  for (int64_t size : d.sizes)
    count *= size;
  return {name, dtype, d.data, d.sizes, count * elementSize};
}

/// For an error every worker finds at once (same flags, same data, the
/// global loss): worker 0 reports it and ends the job, the others wait for
/// that rather than print the same message again.
[[noreturn]] void dieTogether(const std::string &message) {
  const World &w = world();
  if (w.size > 1 && w.rank != 0) {
    barrier(w.comm, "waiting for worker 0 to report an error");
    std::exit(1); // not reached: worker 0 aborts the job
  }
  die(message);
}

constexpr const char *kMetricsSignature = "{\"step\": ";

/// `path` was checked at start-up (checkReplaceableFile).
std::FILE *openMetrics(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    die("cannot write --metrics '" + path + "': " + std::strerror(errno));
  return file;
}

/// The first record of a run (its first step) also names the kernels it
/// uses.
void writeMetrics(std::FILE *file, const std::string &path, int64_t step,
                  double loss, double seconds, double rate,
                  const TrafficByVariable &traffic) {
  std::string kernels;
  if (step == firstStep)
    kernels = ", \"kernels\": " + kernelsJson();
  Traffic sum;
  std::string perVariable;
  for (const auto &[name, t] : traffic) {
    sum.sent += t.sent;
    sum.received += t.received;
    perVariable += (perVariable.empty() ? "" : ", ") + jsonString(name) +
                   ": {\"sent\": " + std::to_string(t.sent) +
                   ", \"received\": " + std::to_string(t.received) + "}";
  }
  int written = std::fprintf(
      file,
      "{\"step\": %lld, \"loss\": %.9g, \"time_s\": %.6f, "
      "\"examples_per_s\": %.3f, \"bytes_sent\": %lld, "
      "\"bytes_received\": %lld, \"variables\": {%s}%s}\n",
      static_cast<long long>(step), loss, seconds, rate,
      static_cast<long long>(sum.sent), static_cast<long long>(sum.received),
      perVariable.c_str(), kernels.c_str());
  // A full disk must not pass for a finished run.
  if (written < 0 || std::fflush(file) != 0 || std::ferror(file))
    die("cannot write --metrics '" + path + "': " + std::strerror(errno));
}

/// 64-bit FNV-1a of a file's examples, to check every worker reads the
/// same data.
uint64_t fingerprint(const NpyArray &array) {
  uint64_t hash = fnv1a(std::string_view(array.data.data(), array.data.size()));
  return fnv1a(
      std::string_view(reinterpret_cast<const char *>(array.shape.data()),
                       array.shape.size() * sizeof(int64_t)),
      hash);
}

/// The --data file of graph input `input`.
std::string dataPathOf(const Input &input) {
  return options.data + "/" + encodeFileName(input.name) + ".npy";
}

/// Where the elements of worker slice `slice`'s bags lie in the data.
SegmentRange bagRange(const Bags &bags, int64_t slice) {
  return segmentRange(bags.starts.data(), bags.starts.size(),
                      bags.elements->file.shape.front(), slice * batch, batch);
}

/// Counts the batch's `count` offsets at `data` from its first element.
template <typename T> void rebase(char *data, int64_t count) {
  T *offsets = reinterpret_cast<T *>(data);
  for (int64_t e = count; e-- > 0;)
    offsets[e] -= offsets[0];
}

/// Writes worker slice `slice`'s batch of bags input `input` to `to`: its
/// bags' elements (padded to the buffer), or their offsets into the
/// batch's elements, not the file's.
void loadBags(const Input &input, int64_t slice, char *to) {
  if (input.holdsElements) {
    copySegment(to, input.shape.front(), input.file.data.data(),
                bagRange(bagGroups[input.bags], slice), dtypeSize(input.dtype));
    return;
  }
  std::memcpy(to, input.file.data.data() + slice * input.bytes, input.bytes);
  if (input.dtype == "<i8")
    rebase<int64_t>(to, batch);
  else
    rebase<int32_t>(to, batch);
}

/// Reads a file of bag elements: 1-D, any length.
void readBagElements(Input &input, const std::string &path,
                     const SegmentGroup &group) {
  std::string expected = dtypeName(input.dtype) +
                         " of shape (N,): the elements of every bag '" +
                         group.offsets + "' starts, one bag after another";
  std::string error;
  if (!readNpy(path, input.file, error))
    die(error + " (graph input '" + input.name + "' must be " + expected + ")");
  if (input.file.dtype != input.dtype || input.file.shape.size() != 1)
    die("'" + path + "' holds " + dtypeName(input.file.dtype) + " of shape " +
        shapeString(input.file.shape) + ", graph input '" + input.name +
        "' must be " + expected);
  checkInputValues(input.name, path, input.file, /*examples=*/false,
                   /*finite=*/true, /*batch=*/0);
}

/// Groups the bag inputs and checks their data: members of a group hold
/// as many elements, the offsets are int64 or int32, start at 0, never
/// decrease and stay within the elements.
void checkBagData() {
  for (Input &input : inputs) {
    SegmentGroup *group = segmentGroupOf(input.name);
    if (!group)
      continue;
    auto it = std::find_if(bagGroups.begin(), bagGroups.end(),
                           [&](const Bags &b) { return b.group == group; });
    if (it == bagGroups.end()) {
      Bags bags;
      bags.group = group;
      bags.elements = &input;
      bags.capacity = input.shape.front();
      for (Input &other : inputs)
        if (other.name == group->offsets)
          bags.offsets = &other;
      if (!bags.offsets)
        die("internal error: the offsets input '" + group->offsets + "' of '" +
            input.name + "' is not registered");
      bagGroups.push_back(bags);
      it = std::prev(bagGroups.end());
    }
    input.bags = it - bagGroups.begin();
    const Input &first = *it->elements;
    if (input.file.shape != first.file.shape)
      die("'" + dataPathOf(input) + "' holds " +
          std::to_string(input.file.shape.front()) + " elements, but '" +
          dataPathOf(first) + "' holds " +
          std::to_string(first.file.shape.front()) +
          ": the inputs of the bags '" + group->offsets +
          "' starts must hold as many");
  }
  for (size_t i = 0; i < bagGroups.size(); ++i) {
    Bags &bags = bagGroups[i];
    Input &offsets = *bags.offsets;
    offsets.bags = i;
    if (!segmentOffsetsOf(offsets.file, bags.starts))
      die("graph input '" + offsets.name +
          "' holds where bags start, so it must be int64 or int32, not " +
          dtypeName(offsets.dtype));
    std::string error =
        checkSegmentOffsets(bags.starts.data(), bags.starts.size(),
                            bags.elements->file.shape.front());
    if (!error.empty())
      die("'" + dataPathOf(offsets) + "' " + error +
          " (the bags' elements are '" + dataPathOf(*bags.elements) + "')");
  }
}

/// Every batch of bags the steps before `endStep` load fits the program's
/// buffers; a warning when a batch has no elements at all.
void checkBagCapacity() {
  const World &w = world();
  for (const Bags &bags : bagGroups) {
    int64_t most = -1, mostSlice = 0, emptySlice = -1;
    for (int64_t slice = 0; slice < endStep * w.size; ++slice) {
      int64_t size = bagRange(bags, slice).size();
      if (size > most) {
        most = size;
        mostSlice = slice;
      }
      if (size == 0 && emptySlice < 0)
        emptySlice = slice;
    }
    auto where = [&](int64_t slice) {
      return "step " + std::to_string(slice / w.size) +
             (w.size > 1 ? ", worker " + std::to_string(slice % w.size) : "");
    };
    const std::string &name = bags.elements->name;
    if (most > bags.capacity)
      dieTogether("the bags '" + bags.group->offsets + "' starts hold " +
                  std::to_string(most) + " elements in one batch (" +
                  where(mostSlice) + "), more than the " +
                  std::to_string(bags.capacity) +
                  " the program holds: compile it with at least that many "
                  "(parallax-compile --bind " +
                  name + ":0=" + std::to_string(most) + ")");
    if (emptySlice >= 0 && w.rank == 0)
      warn("the bags '" + bags.group->offsets +
           "' starts hold no elements in a batch (" + where(emptySlice) +
           "): its padding is element 0 of '" + name +
           "', and a table those ids index gets a zero-gradient update of "
           "row 0 (no change with SGD or Adagrad; with momentum, Adam or "
           "weight decay the row moves as if it were in the batch)");
  }
}

/// Worker 0 stops the job when another worker's data differs from its own.
void checkSameDataOnEveryWorker() {
  const World &w = world();
  if (w.size == 1)
    return;
  for (const Input &input : inputs) {
    uint64_t mine = fingerprint(input.file);
    std::vector<uint64_t> all(w.size);
    MPI_Request request;
    checkMPI(MPI_Igather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, 0,
                         w.comm, &request),
             "the data fingerprints");
    waitFor(request, "the data fingerprints");
    if (w.rank != 0)
      continue;
    for (int r = 1; r < w.size; ++r)
      if (all[r] != all[0])
        die("worker " + std::to_string(r) + "'s '" + options.data + "/" +
            input.name +
            ".npy' differs from worker 0's: every worker must "
            "read the same data (each trains on its own slice of it)");
  }
  // Nobody steps before worker 0 has compared.
  barrier(w.comm, "the barrier after the data check");
}

/// Worker 0 prints every worker's bytes sent and received.
void printTrafficSummary(int64_t steps) {
  const World &w = world();
  Traffic mine = totalTraffic();
  int64_t local[3] = {mine.sent, mine.received, w.machine};
  std::vector<int64_t> all(3 * w.size);
  MPI_Request request;
  checkMPI(MPI_Igather(local, 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T, 0,
                       w.comm, &request),
           "the traffic summary");
  waitFor(request, "the traffic summary");
  if (w.rank != 0)
    return;
  double perStep = steps > 0 ? 1.0 / steps : 0.0;
  std::fprintf(stderr, "bytes per step sent / received (%d machines):\n",
               w.machines);
  for (int r = 0; r < w.size; ++r)
    std::fprintf(stderr, "  worker %d (machine %lld): %.0f / %.0f\n", r,
                 static_cast<long long>(all[3 * r + 2]), all[3 * r] * perStep,
                 all[3 * r + 1] * perStep);
}

/// Every worker: the others wait in their next communication while
/// worker 0 writes, so their waits get time for it (20 MB/s at worst).
void checkpoint(int64_t step) {
  allowExtraWait(60 + checkpointBytes(variables) / 20e6);
  saveCheckpoint(options.save, step, variables);
}

} // namespace

extern "C" void parallax_rt_train_init(int32_t argc, char **argv) {
  if (argc > 0)
    restartWithHugePageHeap(argv);
  setProgramName(argc > 0 ? argv[0] : "program");
  keepFreedMemory();
  initWorld(&argc, &argv);
  auto usage = [&](const std::string &problem) {
    std::string text =
        "usage: [mpirun -np N] " + std::string(argc > 0 ? argv[0] : "program") +
        " --data DIR [--steps S] [--metrics FILE.jsonl]\n"
        "       [--metrics-all-ranks] [--save DIR] [--save-every K]\n"
        "       [--restore DIR] [--init MODEL.onnx|DIR] [--log-every K]\n"
        "       [--trace FILE.json] [--profile FILE.json]\n"
        "       [--comm-timeout SECONDS] [--seed S]\n"
        "       [--threads N] [--verbose]\n"
        "  --data DIR       DIR/<graph input>.npy, leading dimension = "
        "examples;\n"
        "                   worker r of N trains step s on examples\n"
        "                   [(s*N+r)*B, (s*N+r+1)*B)\n"
        "  --steps S        train until step S (default: every full batch)\n"
        "  --metrics FILE   one JSON object per step (worker 0: global loss,\n"
        "                   its own bytes sent and received per variable)\n"
        "  --metrics-all-ranks  worker r also writes FILE.<r> (its own loss)\n"
        "  --save DIR       write the variables (and optimizer state) at the "
        "end\n"
        "  --save-every K   ... and every K steps\n"
        "  --restore DIR    start from a checkpoint (or a directory of "
        "<variable>.npy)\n"
        "  --init MODEL|DIR take the initial weights from MODEL.onnx (or\n"
        "                   DIR/<variable>.npy) instead of the model the\n"
        "                   program was compiled from\n"
        "  --log-every K    progress on stderr every K steps (default 10)\n"
        "  --trace FILE     a Chrome-trace timeline (chrome://tracing,\n"
        "                   Perfetto) of every worker's steps, communication\n"
        "                   and checkpoints, written by worker 0 at the end\n"
        "  --profile FILE   where the step's time goes: time, FLOPs and bytes\n"
        "                   per kind of kernel against this machine's\n"
        "                   measured GEMM and memory peaks (a roofline),\n"
        "                   written by worker 0 at the end, with a table on\n"
        "                   stderr (the first step, a warm-up, left out)\n"
        "  --comm-timeout S end the job when a communication makes no\n"
        "                   progress for S seconds (plus the longest step),\n"
        "                   naming the ranks that do not respond; 0: wait\n"
        "                   forever (default 60)\n"
        "  --seed S         the seed of random draws (dropout masks) instead\n"
        "                   of the one compiled in (parallax-compile --seed)\n"
        "  --threads N      threads per worker, for generated loops and\n"
        "                   BLAS alike (default: PARALLAX_THREADS, else\n"
        "                   OMP_NUM_THREADS, else the cores the rank may run\n"
        "                   on, divided among the ranks of its machine that\n"
        "                   may run on them too)\n"
        "  --verbose        each worker prints its CPU's features, the\n"
        "                   library and kernels chosen for them\n"
        "                   (PARALLAX_BLAS: auto, onednn or openblas;\n"
        "                   PARALLAX_BLAS_CORE: auto, library or an\n"
        "                   OpenBLAS core), and how it communicates\n"
        "                   (PARALLAX_COMM_THREAD: 1 or 0)\n";
    if (device())
      text += "\nOn the GPU (" + std::string(device()) +
              "):\n"
              "  PARALLAX_CUDA_DEVICE   the GPU (default: the local rank's)\n"
              "  PARALLAX_GPU_COMM      how several workers communicate: "
              "auto (NCCL\n"
              "                         where each has a GPU, else MPI on "
              "host\n"
              "                         memory), nccl or mpi\n"
              "  PARALLAX_NCCL_LIBRARY  the NCCL to load (default "
              "libnccl.so.2)\n"
              "  PARALLAX_GPU_PREFETCH  1 (default): each batch goes to the "
              "GPU\n"
              "                         during the step before; 0: at its "
              "step,\n"
              "                         the host waiting (for comparisons)\n"
              "  PARALLAX_CUDA_GRAPHS   1: one worker's training step is "
              "captured\n"
              "                         once as a CUDA graph and replayed "
              "(one\n"
              "                         launch a step); 0 (default): "
              "separate\n"
              "                         launches\n";
    if (problem.empty()) {
      std::fputs(text.c_str(), stdout);
      std::exit(0);
    }
    die(problem + "\n" + text);
  };
  for (int32_t i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--data")
      options.data = value();
    else if (arg == "--steps")
      options.steps = parseCount(arg, value(), 0);
    else if (arg == "--metrics")
      options.metrics = value();
    else if (arg == "--metrics-all-ranks")
      options.metricsAllRanks = true;
    else if (arg == "--save")
      options.save = value();
    else if (arg == "--save-every")
      options.saveEvery = parseCount(arg, value(), 1);
    else if (arg == "--restore")
      options.restore = value();
    else if (arg == "--init")
      options.init = value();
    else if (arg == "--log-every")
      options.logEvery = parseCount(arg, value(), 1);
    else if (arg == "--trace")
      options.trace = value();
    else if (arg == "--profile")
      options.profile = value();
    else if (arg == "--comm-timeout")
      options.commTimeout = parseCount(arg, value(), 0);
    else if (arg == "--seed")
      options.seed = parseCount(arg, value(), 0);
    else if (arg == "--threads")
      options.threads = parseThreads(arg, value());
    else if (arg == "--verbose")
      options.verbose = true;
    else if (arg == "--help" || arg == "-h")
      usage("");
    else
      usage("unexpected argument '" + arg + "'");
  }
  configureThreads(options.threads);
  if (options.verbose) {
    const World &w = world();
    std::string who =
        w.size > 1 ? "worker " + std::to_string(w.rank) + ": " : "";
    std::fprintf(stderr, "%s%s\n", who.c_str(), describeKernels().c_str());
    if (w.size > 1)
      std::fprintf(stderr, "%s%s\n", who.c_str(),
                   describeCommunication().c_str());
  }
  if (options.data.empty())
    usage("--data is required");
  if (!fs::is_directory(options.data))
    die("--data '" + options.data + "' is not a directory");
  if (options.saveEvery && options.save.empty())
    usage("--save-every needs --save");
  if (!options.init.empty() && !options.restore.empty())
    usage("--init and --restore both give the initial values: use one");
  if (options.metricsAllRanks && options.metrics.empty())
    usage("--metrics-all-ranks needs --metrics");
  setCommTimeout(static_cast<double>(options.commTimeout));
  if (!options.trace.empty())
    enableTrace(options.trace);
  if (!options.profile.empty())
    enableProfile(options.profile);
  // Before any work: a --save that would replace what is not a
  // checkpoint, or that another run is writing, is refused now.
  if (!options.save.empty() && world().rank == 0)
    prepareCheckpointDir(options.save);
  if (options.metricsAllRanks) {
    options.rankMetrics = options.metrics + "." + std::to_string(world().rank);
    checkReplaceableFile("--metrics", options.rankMetrics, kMetricsSignature,
                         /*streamed=*/true);
  }
  if (!options.metrics.empty() && world().rank == 0)
    checkReplaceableFile("--metrics", options.metrics, kMetricsSignature,
                         /*streamed=*/true);
}

extern "C" void parallax_rt_set_workers(int64_t workers) {
  int size = world().size;
  if (workers == PARALLAX_RT_WORKERS_ONE && size > 1)
    dieTogether("this program trains as one worker (its training step was "
                "not distributed) but was launched with " +
                std::to_string(size) +
                " ranks: compile it with "
                "parallax-compile, which distributes every training step");
  if (workers != PARALLAX_RT_WORKERS_ANY &&
      workers != PARALLAX_RT_WORKERS_ONE && workers != size)
    dieTogether(
        "this program was compiled for " + std::to_string(workers) +
        " workers (--workers " + std::to_string(workers) +
        ") but was launched with " + std::to_string(size) +
        (size == 1 ? " (run it with mpirun -np " + std::to_string(workers) + ")"
                   : ""));
}

extern "C" int64_t parallax_rt_workers() { return world().size; }

extern "C" void parallax_rt_register_variable(const char *name, int32_t isState,
                                              int64_t partitions,
                                              int64_t firstServer, int64_t rank,
                                              void *descriptor) {
  Variable v;
  static_cast<Buffer &>(v) = view(name, "<f4", rank, descriptor);
  v.isState = isState != 0;
  v.partitions = partitions;
  v.firstServer = firstServer;
  // The parameter store reads and writes its rows on the host.
  if (v.partitions > 0 && isDeviceMemory(v.data))
    die("internal error: parameter-server variable '" + v.name +
        "' is in device memory, which the host cannot reach");
  variables.push_back(std::move(v));
}

extern "C" void parallax_rt_set_model(const char *path) { setModelPath(path); }

extern "C" void parallax_rt_variable_from_model(const char *name) {
  markFromModel(name);
}

static void registerInput(const char *name, const char *dtype, int64_t rank,
                          void *descriptor) {
  Input input;
  static_cast<Buffer &>(input) = view(name, dtype, rank, descriptor);
  if (input.shape.empty())
    die("graph input '" + input.name +
        "' has no batch dimension: training data needs one example per row");
  inputs.push_back(std::move(input));
}

#define PARALLAX_RT_REGISTER_INPUT(suffix, dtype, ...)                         \
  extern "C" void parallax_rt_register_input_##suffix(                         \
      const char *name, int64_t rank, void *descriptor) {                      \
    registerInput(name, dtype, rank, descriptor);                              \
  }
PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_RT_REGISTER_INPUT)
#undef PARALLAX_RT_REGISTER_INPUT

/// In a GPU program, stages every input through the device's side stream
/// (BatchPrefetch.h): example rows straight from the data, bags (their
/// elements and rebased offsets) written by the host into the loader's
/// page-locked buffers first. A CPU program ignores the GPU's setting, as
/// it does PARALLAX_GPU_COMM.
static void startPrefetching() {
  if (!device())
    return;
  const char *enabled = std::getenv("PARALLAX_GPU_PREFETCH");
  std::string setting = enabled ? enabled : "1";
  if (setting != "0" && setting != "1")
    die("PARALLAX_GPU_PREFETCH must be 1 or 0, got '" + setting + "'");
  if (setting == "0")
    return;
  std::vector<StagedInput> staged;
  for (const Input &input : inputs) {
    StagedInput stagedInput{input.data, static_cast<size_t>(input.bytes),
                            input.file.data.data(), input.file.data.size()};
    if (input.bags >= 0)
      stagedInput.fill = [&input](int64_t slice, char *to) {
        loadBags(input, slice, to);
      };
    staged.push_back(std::move(stagedInput));
  }
  StagingDevice *staging = staged.empty() ? nullptr : makeStagingDevice();
  if (!staging)
    return;
  const World &w = world();
  prefetcher =
      new BatchPrefetcher(*staging, std::move(staged),
                          [size = w.size, rank = w.rank](int64_t step) {
                            return step * size + rank;
                          });
  if (options.verbose)
    note(std::string("batches go to the GPU during the step before theirs, "
                     "on a side stream, ") +
         (prefetcher->pinnedInPlace()
              ? "from the training data, page-locked in place"
              : "through page-locked buffers (bags of varying size, or "
                "training data that could not be page-locked in place)"));
}

extern "C" int64_t parallax_rt_begin() {
  int64_t examples = -1;
  std::string examplesFrom;
  for (Input &input : inputs) {
    std::string path = dataPathOf(input);
    if (const SegmentGroup *group = segmentGroupOf(input.name)) {
      input.holdsElements = true;
      readBagElements(input, path, *group);
      continue;
    }
    std::vector<int64_t> perExample(input.shape.begin() + 1, input.shape.end());
    std::string expected = dtypeName(input.dtype) + " of shape (N";
    for (int64_t size : perExample)
      expected += ", " + std::to_string(size);
    expected += ")";
    std::string error;
    if (!readNpy(path, input.file, error))
      die(error + " (graph input '" + input.name + "' must be " + expected +
          ")");
    std::vector<int64_t> fileExample(input.file.shape.begin() +
                                         (input.file.shape.empty() ? 0 : 1),
                                     input.file.shape.end());
    if (input.file.dtype != input.dtype || input.file.shape.empty() ||
        fileExample != perExample)
      die("'" + path + "' holds " + dtypeName(input.file.dtype) + " of shape " +
          shapeString(input.file.shape) + ", graph input '" + input.name +
          "' must be " + expected);
    batch = input.shape.front();
    input.exampleBytes = input.bytes / batch;
    int64_t count = input.file.shape.front();
    if (examples >= 0 && count != examples)
      die("'" + path + "' has " + std::to_string(count) + " examples but '" +
          examplesFrom + "' has " + std::to_string(examples) +
          ": every input file must hold the same examples");
    examples = count;
    examplesFrom = path;
    checkInputValues(input.name, path, input.file, /*examples=*/true,
                     /*finite=*/true, batch);
  }
  checkBagData();
  checkSameDataOnEveryWorker();
  const World &w = world();
  int64_t globalBatch = batch * w.size;
  int64_t available = globalBatch ? examples / globalBatch : 0;
  endStep = options.steps >= 0 ? options.steps : available;
  if (options.steps < 0 && available == 0)
    dieTogether("'" + examplesFrom + "' has " + std::to_string(examples) +
                " examples, fewer than one step needs (" +
                (w.size > 1 ? std::to_string(w.size) + " workers x " : "") +
                "batch " + std::to_string(batch) +
                "): nothing would be trained (--steps 0 runs no step on "
                "purpose)");
  // A checkpoint replaces every variable: the model is not needed then.
  std::error_code ec;
  if (!options.restore.empty())
    firstStep = restoreCheckpoint(options.restore, variables);
  else if (!options.init.empty() &&
           std::filesystem::is_directory(options.init, ec))
    loadWeightsFromDirectory(variables, options.init);
  else if (!options.init.empty() && !hasModelWeights())
    die("--init '" + options.init +
        "': this program holds its initial weights (compiled with "
        "--embed-weights, or from a model without trainable initializers); "
        "--init DIR takes them from DIR/<variable>.npy");
  else
    loadModelWeights(variables, options.init);
  if (endStep > available)
    dieTogether("--steps " + std::to_string(endStep) + " needs " +
                std::to_string(endStep * globalBatch) + " examples (" +
                (w.size > 1 ? std::to_string(w.size) + " workers x " : "") +
                "batch " + std::to_string(batch) + "), but '" + examplesFrom +
                "' has " + std::to_string(examples));
  if (firstStep > endStep)
    die("the checkpoint is at step " + std::to_string(firstStep) +
        ", after --steps " + std::to_string(endStep));
  checkBagCapacity();
  if (!options.metrics.empty() && w.rank == 0)
    metricsFile = openMetrics(options.metrics);
  if (options.metricsAllRanks)
    rankMetricsFile = openMetrics(options.rankMetrics);
  startPrefetching();
  setTraceOrigin();
  startProfile(endStep - firstStep);
  runStart = stepStart = parallax_rt_now();
  return firstStep;
}

extern "C" int64_t parallax_rt_end_step() { return endStep; }

extern "C" int64_t parallax_rt_current_step() { return currentStep; }

extern "C" int64_t parallax_rt_random_seed(int64_t compiled) {
  return options.seed.value_or(compiled);
}

extern "C" int64_t parallax_rt_first_example() { return firstExample; }

extern "C" void parallax_rt_load_batch(int64_t step) {
  {
    TraceScope trace("data", [] { return std::string("load batch"); });
    currentStep = step + 1;
    int64_t slice = step * world().size + world().rank;
    firstExample = slice * batch;
    if (!prefetcher)
      for (Input &input : inputs) {
        if (input.bags >= 0)
          writeBuffer(input.data, input.bytes,
                      [&](char *to) { loadBags(input, slice, to); });
        else
          copyBuffer(input.data, input.file.data.data() + slice * input.bytes,
                     input.bytes);
      }
    for (const Bags &bags : bagGroups)
      if (bags.group->count)
        *bags.group->count = bagRange(bags, slice).size();
    if (prefetcher)
      prefetcher->load(step, step + 1 < endStep ? step + 1 : -1);
  }
  computeStart = tracing() ? parallax_rt_now() : 0;
}

extern "C" void parallax_rt_step_end(int64_t step, float loss) {
  // The step's sparse pushes, queued to go in one exchange, are part of it.
  {
    ProfileScope profile("parameter store", "queued pushes");
    flushPushes();
  }
  // The step function's own time, communication inside it included (its
  // events nest in this one).
  if (tracing())
    traceEvent("step " + std::to_string(step), "compute", computeStart,
               parallax_rt_now());
  TraceScope trace("runtime",
                   [] { return std::string("step end (loss, metrics)"); });
  std::optional<ProfileScope> profile(std::in_place, "step end",
                                      "loss, metrics and progress");
  double end = parallax_rt_now(), seconds = end - stepStart;
  stepStart = end;
  noteStepTime(seconds);
  const World &w = world();
  double localLoss = loss, meanLoss = loss;
  if (w.size > 1) {
    // Through waitFor like every wait: a blocking MPI_Allreduce here hung
    // the job when a peer stopped between two steps.
    MPI_Request request;
    checkMPI(MPI_Iallreduce(&localLoss, &meanLoss, 1, MPI_DOUBLE, MPI_SUM,
                            w.comm, &request),
             "the step's mean loss");
    waitFor(request, "the step's mean loss");
    meanLoss /= w.size;
  }
  double rate = seconds > 0 ? batch * w.size / seconds : 0;
  TrafficByVariable traffic = takeStepTraffic();
  if (metricsFile)
    writeMetrics(metricsFile, options.metrics, step, meanLoss, seconds, rate,
                 traffic);
  if (rankMetricsFile)
    writeMetrics(rankMetricsFile, options.rankMetrics, step, localLoss, seconds,
                 rate, traffic);
  int64_t done = step + 1;
  if (w.rank == 0 && (done % options.logEvery == 0 || done == endStep))
    std::fprintf(stderr, "step %lld/%lld  loss %.6g  %.1f examples/s\n",
                 static_cast<long long>(done), static_cast<long long>(endStep),
                 meanLoss, rate);
  if (!std::isfinite(meanLoss))
    dieTogether("the loss is " +
                std::string(std::isnan(meanLoss) ? "NaN" : "infinite") +
                " at step " + std::to_string(step) +
                ": training diverged (the data holds no NaN or infinity, "
                "it was checked at the start: try a smaller learning "
                "rate)");
  profile.reset();
  if (options.saveEvery && done % options.saveEvery == 0 && done != endStep) {
    ProfileScope saving("checkpoint", "checkpoint");
    checkpoint(done);
  }
  profileStepEnd();
}

extern "C" int32_t parallax_rt_finish() {
  for (std::FILE *file : {metricsFile, rankMetricsFile})
    if (file && std::fclose(file) != 0)
      die("cannot write --metrics '" + options.metrics + "'");
  if (!options.save.empty())
    checkpoint(endStep);
  const World &w = world();
  double total = parallax_rt_now() - runStart;
  int64_t steps = endStep - firstStep;
  if (w.rank == 0)
    std::fprintf(stderr, "trained %lld steps in %.3f s (%.1f examples/s)\n",
                 static_cast<long long>(steps), total,
                 total > 0 ? steps * batch * w.size / total : 0.0);
  if (w.size > 1)
    printTrafficSummary(steps);
  writeTrace();
  writeProfile();
  finalizeWorld();
  return 0;
}
