//===- parallax-runtime-fuzzer.cpp - Fuzz what training programs read -----===//
//
// Part of the Parallax project.
//
// A libFuzzer target over the inputs a training program reads from disk:
// .npy data files (parsed, then checked against declared index ranges,
// with and without a region, and for NaN), checkpoint directories (a
// manifest and variable files, restored into registered variables), and
// ONNX models a variable's initial value is loaded from.
// The first byte picks the case. Errors the runtime reports (die) are the
// expected outcome for bad input: they throw here and are caught; any
// crash, sanitizer report or hang is a bug. Also checks that file-name
// encoding round-trips. Built by scripts/fuzz-runtime.sh.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"
#include "parallax/Support/Npy.h"

#include "Checkpoint.h"
#include "ModelWeights.h"
#include "Support.h"
#include "parallax/Support/FileNames.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace parallax::runtime;

namespace {

struct Died {};

[[noreturn]] void throwInsteadOfExit(int) { throw Died(); }

std::string workDir() {
  static std::string dir = [] {
    char pattern[] = "/tmp/parallax-runtime-fuzz-XXXXXX";
    if (!mkdtemp(pattern))
      std::abort();
    return std::string(pattern);
  }();
  return dir;
}

void writeFile(const std::string &path, const uint8_t *data, size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(data), size);
}

void fuzzData(const uint8_t *data, size_t size) {
  std::string path = workDir() + "/x.npy";
  writeFile(path, data, size);
  NpyArray array;
  std::string error;
  if (!readNpy(path, array, error))
    return;
  bool examples = size % 2;
  int64_t batch = examples && !array.shape.empty() ? 1 + size % 5 : 0;
  checkInputValues("x", path, array, examples, /*finite=*/true, batch);
}

void fuzzCheckpoint(const uint8_t *data, size_t size) {
  // manifest \0 w.npy \0 w.sum.npy
  std::vector<std::string> parts(3);
  size_t part = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && part < 2) {
      ++part;
      continue;
    }
    parts[part].push_back(static_cast<char>(data[i]));
  }
  std::string dir = workDir() + "/ckpt";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  if (!parts[0].empty())
    std::ofstream(dir + "/checkpoint.json") << parts[0];
  std::ofstream(dir + "/w.npy", std::ios::binary) << parts[1];
  std::ofstream(dir + "/w.sum.npy", std::ios::binary) << parts[2];
  static float weights[12], sums[12];
  std::vector<Variable> variables(2);
  variables[0].name = "w";
  variables[1].name = "w.sum";
  for (Variable &v : variables) {
    v.dtype = "<f4";
    v.shape = {4, 3};
    v.bytes = sizeof weights;
    v.partitions = 0;
    v.firstServer = 0;
  }
  variables[0].data = reinterpret_cast<char *>(weights);
  variables[0].isState = false;
  variables[1].data = reinterpret_cast<char *>(sums);
  variables[1].isState = true;
  restoreCheckpoint(dir, variables);
}

void fuzzModelWeights(const uint8_t *data, size_t size) {
  // The bytes are the model; a 4x3 float variable 'w' is loaded from it
  // (external data, if it names any, from w.data beside it: 40 bytes, too
  // few for the variable).
  std::string dir = workDir() + "/model";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = dir + "/model.onnx";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(data), size);
  std::ofstream(dir + "/w.data", std::ios::binary) << std::string(40, 'x');
  static float weights[12];
  std::vector<Variable> variables(1);
  Variable &v = variables[0];
  v.name = "w";
  v.dtype = "<f4";
  v.shape = {4, 3};
  v.bytes = sizeof weights;
  v.data = reinterpret_cast<char *>(weights);
  v.isState = false;
  v.partitions = 0;
  v.firstServer = 0;
  markFromModel("w");
  loadModelWeights(variables, path);
}

void fuzzFileNames(const uint8_t *data, size_t size) {
  std::string name(reinterpret_cast<const char *>(data), size);
  std::string file = encodeFileName(name);
  if (file.find('/') != std::string::npos || file.empty() ||
      file.front() == '.' || file.size() > 200)
    std::abort();
  if (file.find("%~") == std::string::npos && decodeFileName(file) != name)
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setExitHandler(throwInsteadOfExit, "");
  parallax_rt_declare_input_range("x", -7, 7, 1, -100, "fuzzed ids");
  parallax_rt_declare_input_range("x", 0, 3, 0, 0, "a fuzzed column");
  parallax_rt_declare_input_region("x", 1, 1, 2, 2);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  try {
    switch (data[0] % 4) {
    case 0:
      fuzzData(data + 1, size - 1);
      break;
    case 1:
      fuzzCheckpoint(data + 1, size - 1);
      break;
    case 3:
      fuzzModelWeights(data + 1, size - 1);
      break;
    default:
      fuzzFileNames(data + 1, size - 1);
    }
  } catch (const Died &) {
  }
  return 0;
}
