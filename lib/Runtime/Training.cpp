//===- Training.cpp - The driver loop of training programs ----------------===//
//
// Part of the Parallax project.
//
// Command line, training data, metrics, progress and checkpoints of a
// training program (one worker). The generated `main` registers the
// variables and input buffers, then calls begin, load_batch / train_step /
// step_end per step, and finish.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Npy.h"
#include "parallax/Runtime/Runtime.h"

#include "Descriptor.h"
#include "Support.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace parallax::runtime;
namespace fs = std::filesystem;

namespace {

struct Buffer {
  std::string name;
  std::string dtype;
  char *data;
  std::vector<int64_t> shape;
  int64_t bytes;
};

struct Input : Buffer {
  NpyArray file;
  int64_t exampleBytes = 0;
};

struct Variable : Buffer {
  bool isState;
};

struct Options {
  std::string data, metrics, save, restore;
  int64_t steps = -1, saveEvery = 0, logEvery = 10;
};

Options options;
std::vector<Input> inputs;
std::vector<Variable> variables;
int64_t firstStep = 0, endStep = 0, currentStep = 1, batch = 0;
std::FILE *metricsFile = nullptr;
double stepStart = 0, runStart = 0;

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

Buffer view(const char *name, const std::string &dtype, int64_t rank,
            void *descriptor) {
  int64_t elementSize = dtypeSize(dtype);
  StridedView d = viewDescriptor(rank, descriptor, elementSize);
  int64_t count = 1;
  for (int64_t size : d.sizes)
    count *= size;
  return {name, dtype, d.data, d.sizes, count * elementSize};
}

int64_t parseCount(const std::string &flag, const char *text, int64_t min) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (errno || !*text || *end || value < min)
    die(flag + " expects an integer >= " + std::to_string(min) + ", got '" +
        text + "'");
  return value;
}

std::string checkpointPath(const std::string &dir, const std::string &name) {
  return dir + "/" + name + ".npy";
}

/// Writes every variable (and optimizer state) and checkpoint.json into a
/// fresh directory that then replaces `dir`: a crash leaves either the old
/// or the new checkpoint, never a mixture.
void saveCheckpoint(const std::string &dir, int64_t step) {
  std::string staging = dir + ".partial." + std::to_string(getpid());
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (!fs::create_directories(staging, ec) || ec)
    die("cannot create checkpoint directory '" + staging +
        "': " + ec.message());
  std::ostringstream manifest;
  manifest << "{\"step\": " << step << ", \"variables\": [";
  bool first = true;
  for (const Variable &v : variables) {
    NpyArray array{v.dtype, v.shape,
                   std::vector<char>(v.data, v.data + v.bytes)};
    std::string error;
    if (!writeNpy(checkpointPath(staging, v.name), array, error))
      die(error);
    manifest << (first ? "" : ", ") << "{\"name\": \"" << v.name
             << "\", \"state\": " << (v.isState ? "true" : "false") << "}";
    first = false;
  }
  manifest << "]}\n";
  {
    std::ofstream out(staging + "/checkpoint.json");
    out << manifest.str();
    if (!out.flush())
      die("cannot write '" + staging + "/checkpoint.json'");
  }
  std::string old = dir + ".old." + std::to_string(getpid());
  bool hadOld = fs::exists(dir);
  if (hadOld) {
    fs::rename(dir, old, ec);
    if (ec)
      die("cannot replace checkpoint '" + dir + "': " + ec.message());
  }
  fs::rename(staging, dir, ec);
  if (ec)
    die("cannot move checkpoint '" + staging + "' to '" + dir +
        "': " + ec.message());
  if (hadOld)
    fs::remove_all(old, ec);
}

/// Reads `dir`: every trainable variable must be there with its shape;
/// optimizer state and the step are read when checkpoint.json says they
/// were saved.
void restoreCheckpoint(const std::string &dir) {
  if (!fs::is_directory(dir))
    die("--restore '" + dir + "' is not a directory");
  bool full = fs::exists(dir + "/checkpoint.json");
  int64_t step = 0;
  if (full) {
    std::ifstream in(dir + "/checkpoint.json");
    std::stringstream text;
    text << in.rdbuf();
    std::string json = text.str();
    size_t at = json.find("\"step\":");
    if (at == std::string::npos ||
        std::sscanf(json.c_str() + at + 7, "%lld",
                    reinterpret_cast<long long *>(&step)) != 1 ||
        step < 0)
      die("'" + dir + "/checkpoint.json' has no valid \"step\"");
  }
  // Read everything before changing anything: no half-restored model.
  std::vector<NpyArray> arrays(variables.size());
  for (size_t i = 0; i < variables.size(); ++i) {
    const Variable &v = variables[i];
    std::string path = checkpointPath(dir, v.name);
    if (v.isState && !full)
      continue;
    std::string error;
    if (!readNpy(path, arrays[i], error))
      die(error + (v.isState ? " (optimizer state '" : " (variable '") +
          v.name + "' must be " + dtypeName(v.dtype) + " of shape " +
          shapeString(v.shape) +
          (v.isState ? "; was the checkpoint written with another optimizer?)"
                     : ")"));
    if (arrays[i].dtype != v.dtype || arrays[i].shape != v.shape)
      die("'" + path + "' holds " + dtypeName(arrays[i].dtype) + " of shape " +
          shapeString(arrays[i].shape) + ", variable '" + v.name + "' is " +
          dtypeName(v.dtype) + " of shape " + shapeString(v.shape));
  }
  for (size_t i = 0; i < variables.size(); ++i)
    if (!arrays[i].data.empty())
      std::memcpy(variables[i].data, arrays[i].data.data(), variables[i].bytes);
  firstStep = step;
}

} // namespace

extern "C" void parallax_rt_train_init(int32_t argc, char **argv) {
  setProgramName(argc > 0 ? argv[0] : "program");
  keepFreedMemory();
  auto usage = [&](const std::string &problem) {
    std::string text =
        "usage: " + std::string(argc > 0 ? argv[0] : "program") +
        " --data DIR [--steps S] [--metrics FILE.jsonl] [--save DIR]\n"
        "       [--save-every K] [--restore DIR] [--log-every K]\n"
        "  --data DIR       DIR/<graph input>.npy, leading dimension = "
        "examples;\n"
        "                   step s trains on examples [s*B, (s+1)*B)\n"
        "  --steps S        train until step S (default: every full batch)\n"
        "  --metrics FILE   one JSON object per step\n"
        "  --save DIR       write the variables (and optimizer state) at the "
        "end\n"
        "  --save-every K   ... and every K steps\n"
        "  --restore DIR    start from a checkpoint (or a directory of "
        "<variable>.npy)\n"
        "  --log-every K    progress on stderr every K steps (default 10)\n";
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
      ; // one worker: rank 0 writes the metrics anyway
    else if (arg == "--save")
      options.save = value();
    else if (arg == "--save-every")
      options.saveEvery = parseCount(arg, value(), 1);
    else if (arg == "--restore")
      options.restore = value();
    else if (arg == "--log-every")
      options.logEvery = parseCount(arg, value(), 1);
    else if (arg == "--help" || arg == "-h")
      usage("");
    else
      usage("unexpected argument '" + arg + "'");
  }
  if (options.data.empty())
    usage("--data is required");
  if (!fs::is_directory(options.data))
    die("--data '" + options.data + "' is not a directory");
  if (options.saveEvery && options.save.empty())
    usage("--save-every needs --save");
}

extern "C" void parallax_rt_register_variable(const char *name, int32_t isState,
                                              int64_t rank, void *descriptor) {
  Variable v;
  static_cast<Buffer &>(v) = view(name, "<f4", rank, descriptor);
  v.isState = isState != 0;
  variables.push_back(std::move(v));
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

#define PARALLAX_RT_REGISTER_INPUT(suffix, dtype, ...)                              \
  extern "C" void parallax_rt_register_input_##suffix(                         \
      const char *name, int64_t rank, void *descriptor) {                      \
    registerInput(name, dtype, rank, descriptor);                              \
  }
PARALLAX_RT_FOR_EACH_DTYPE(PARALLAX_RT_REGISTER_INPUT)
#undef PARALLAX_RT_REGISTER_INPUT

extern "C" int64_t parallax_rt_begin() {
  int64_t examples = -1;
  std::string examplesFrom;
  for (Input &input : inputs) {
    std::string path = options.data + "/" + input.name + ".npy";
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
  }
  int64_t available = batch ? examples / batch : 0;
  endStep = options.steps >= 0 ? options.steps : available;
  if (!options.restore.empty())
    restoreCheckpoint(options.restore);
  if (endStep > available)
    die("--steps " + std::to_string(endStep) + " needs " +
        std::to_string(endStep * batch) + " examples (batch " +
        std::to_string(batch) + "), but '" + examplesFrom + "' has " +
        std::to_string(examples));
  if (firstStep > endStep)
    die("the checkpoint is at step " + std::to_string(firstStep) +
        ", after --steps " + std::to_string(endStep));
  if (!options.metrics.empty()) {
    metricsFile = std::fopen(options.metrics.c_str(), "w");
    if (!metricsFile)
      die("cannot write --metrics '" + options.metrics +
          "': " + std::strerror(errno));
  }
  runStart = stepStart = now();
  return firstStep;
}

extern "C" int64_t parallax_rt_end_step() { return endStep; }

extern "C" int64_t parallax_rt_current_step() { return currentStep; }

extern "C" void parallax_rt_load_batch(int64_t step) {
  currentStep = step + 1;
  for (Input &input : inputs)
    std::memcpy(input.data, input.file.data.data() + step * input.bytes,
                input.bytes);
}

extern "C" void parallax_rt_step_end(int64_t step, float loss) {
  double end = now(), seconds = end - stepStart;
  stepStart = end;
  double rate = seconds > 0 ? batch / seconds : 0;
  if (metricsFile) {
    std::fprintf(metricsFile,
                 "{\"step\": %lld, \"loss\": %.9g, \"time_s\": %.6f, "
                 "\"examples_per_s\": %.3f, \"bytes_sent\": 0, "
                 "\"bytes_received\": 0}\n",
                 static_cast<long long>(step), loss, seconds, rate);
    std::fflush(metricsFile);
  }
  int64_t done = step + 1;
  if (done % options.logEvery == 0 || done == endStep)
    std::fprintf(stderr, "step %lld/%lld  loss %.6g  %.1f examples/s\n",
                 static_cast<long long>(done), static_cast<long long>(endStep),
                 loss, rate);
  if (!std::isfinite(loss))
    die("the loss is " + std::string(std::isnan(loss) ? "NaN" : "infinite") +
        " at step " + std::to_string(step) +
        ": training diverged (try a smaller learning rate)");
  if (options.saveEvery && done % options.saveEvery == 0 && done != endStep)
    saveCheckpoint(options.save, done);
}

extern "C" int32_t parallax_rt_finish() {
  if (metricsFile && std::fclose(metricsFile) != 0)
    die("cannot write --metrics '" + options.metrics + "'");
  if (!options.save.empty())
    saveCheckpoint(options.save, endStep);
  double total = now() - runStart;
  int64_t steps = endStep - firstStep;
  std::fprintf(stderr, "trained %lld steps in %.3f s (%.1f examples/s)\n",
               static_cast<long long>(steps), total,
               total > 0 ? steps * batch / total : 0.0);
  return 0;
}
