//===- CudaStepGraph.cpp - The training step as one CUDA graph ------------===//
//
// Part of the Parallax project.
//
// A training step of a small model is hundreds of launches, each costing
// the host microseconds: the GPU waits for the host. With
// PARALLAX_CUDA_GRAPHS=1, a one-worker program whose step the compiler
// found capturable (--parallax-gpu-step-graph: it only queues work on the
// stream until its last wait) runs two steps as usual (cuDNN chooses its
// algorithms, the block cache fills), captures the third on the program's
// stream (relaxed mode: the block cache may still allocate), and from then
// on replays the graph: one launch a step.
//
// A replayed step's host code still runs, but queues nothing: each launch,
// copy, fill, product, convolution and event asks stepGraphSkips, which
// checks it against what the capture recorded (the same kernel and grid,
// the same sizes) and ends the program if the step asked for other work;
// each allocation returns the block the capture got, so every address the
// graph's kernels were given stays right. Those blocks belong to the
// graph from then on: freeing one keeps it out of the cache.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Comm.h"
#include "CudaDriver.h"
#include "Profile.h"
#include "Support.h"

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

using namespace parallax::runtime;
using namespace parallax::runtime::cuda;

namespace {

/// Steps run as usual before the capture: the first chooses cuDNN's
/// algorithms and grows its workspace, the second takes every block from
/// the cache.
constexpr int64_t kStepsBeforeCapture = 2;

enum class Mode { Off, Capturing, Replaying };

struct Recorded {
  StepWork work;
  uint64_t key;
  void *block;
};

struct StepGraph {
  Mode mode = Mode::Off;
  int64_t stepsRun = 0;
  std::vector<Recorded> recorded;
  size_t next = 0;
  std::set<void *> owned;
  CUgraphExec graph = nullptr;
  int64_t capturedAt = 0;
  bool declined = false;
};

StepGraph &state() {
  static StepGraph graph;
  return graph;
}

bool enabled() {
  static const bool on = [] {
    const char *text = std::getenv("PARALLAX_CUDA_GRAPHS");
    std::string setting = text ? text : "0";
    if (setting != "0" && setting != "1")
      die("PARALLAX_CUDA_GRAPHS must be 1 or 0, got '" + setting + "'");
    return setting == "1";
  }();
  return on;
}

const char *describe(StepWork work) {
  switch (work) {
  case StepWork::Kernel:
    return "kernel launch";
  case StepWork::Copy:
    return "copy";
  case StepWork::Fill:
    return "fill";
  case StepWork::Product:
    return "cuBLAS product";
  case StepWork::Convolution:
    return "cuDNN convolution";
  case StepWork::Event:
    return "event";
  case StepWork::Allocation:
    return "allocation";
  }
  return "operation";
}

/// The next recorded work, which a replayed step must ask for now.
Recorded &expect(StepWork work, uint64_t key) {
  StepGraph &g = state();
  if (g.next >= g.recorded.size() || g.recorded[g.next].work != work ||
      g.recorded[g.next].key != key)
    fail(1, "internal error: a training step replayed as a CUDA graph asked "
            "for another " +
                std::string(describe(work)) + " (its operation " +
                std::to_string(g.next + 1) + ") than the step captured; " +
                "run it without PARALLAX_CUDA_GRAPHS");
  return g.recorded[g.next++];
}

/// Declines the graph once, saying why.
void decline(const std::string &why) {
  StepGraph &g = state();
  if (!g.declined)
    warn("PARALLAX_CUDA_GRAPHS=1: the training step runs as separate "
         "launches: " +
         why);
  g.declined = true;
}

} // namespace

bool parallax::runtime::cuda::stepGraphSkips(StepWork work, uint64_t key) {
  StepGraph &g = state();
  switch (g.mode) {
  case Mode::Off:
    return false;
  case Mode::Capturing:
    g.recorded.push_back({work, key, nullptr});
    return false;
  case Mode::Replaying:
    expect(work, key);
    return true;
  }
  return false;
}

void *parallax::runtime::cuda::stepGraphAllocation(uint64_t bytes,
                                                   bool hostShared) {
  StepGraph &g = state();
  if (g.mode != Mode::Replaying)
    return nullptr;
  return expect(StepWork::Allocation, bytes * 2 + hostShared).block;
}

void parallax::runtime::cuda::stepGraphAllocated(void *block, uint64_t bytes,
                                                 bool hostShared) {
  StepGraph &g = state();
  if (g.mode == Mode::Capturing)
    g.recorded.push_back({StepWork::Allocation, bytes * 2 + hostShared, block});
}

bool parallax::runtime::cuda::stepGraphOwns(void *block) {
  const StepGraph &g = state();
  return !g.owned.empty() && g.owned.count(block);
}

bool parallax::runtime::cuda::stepGraphDefersWaits() {
  return state().mode != Mode::Off;
}

extern "C" void parallax_rt_cuda_step_graph_begin(int64_t step,
                                                  const char *obstacle) {
  if (!enabled())
    return;
  StepGraph &g = state();
  if (*obstacle)
    return decline(std::string("the compiler found ") + obstacle);
  if (world().size > 1)
    return decline("it runs at " + std::to_string(world().size) +
                   " workers (graphs are for one)");
  if (profiling())
    return decline("--profile times each launch on its own");
  if (g.graph) {
    g.mode = Mode::Replaying;
    g.next = 0;
    return;
  }
  if (++g.stepsRun <= kStepsBeforeCapture)
    return;
  Driver &cuda = driver();
  g.recorded.clear();
  check(cuda.cuStreamBeginCapture(cuda.stream, CU_STREAM_CAPTURE_MODE_RELAXED),
        "starting to capture the training step as a CUDA graph");
  g.mode = Mode::Capturing;
  g.capturedAt = step;
}

extern "C" void parallax_rt_cuda_step_graph_end() {
  StepGraph &g = state();
  if (g.mode == Mode::Off)
    return;
  Driver &cuda = driver();
  if (g.mode == Mode::Capturing) {
    CUgraph captured = nullptr;
    check(cuda.cuStreamEndCapture(cuda.stream, &captured),
          "capturing the training step as a CUDA graph");
    check(cuda.cuGraphInstantiate(&g.graph, captured, 0),
          "instantiating the training step's CUDA graph");
    // The graph's kernels use the blocks the step got: keep them out of
    // the cache for the rest of the run.
    size_t kernels = 0;
    for (const Recorded &r : g.recorded) {
      kernels += r.work == StepWork::Kernel;
      if (r.block)
        g.owned.insert(r.block);
    }
    {
      std::lock_guard<std::mutex> lock(cuda.mutex);
      for (auto block = cuda.freeBlocks.begin();
           block != cuda.freeBlocks.end();)
        block = g.owned.count(block->second) ? cuda.freeBlocks.erase(block)
                                             : std::next(block);
    }
    note("the training step runs as one CUDA graph, captured at step " +
         std::to_string(g.capturedAt) + " (" +
         std::to_string(g.recorded.size()) + " operations captured, " +
         std::to_string(kernels) + " of them kernel launches)");
  } else if (g.next != g.recorded.size()) {
    fail(1, "internal error: a training step replayed as a CUDA graph asked "
            "for " +
                std::to_string(g.next) + " of the " +
                std::to_string(g.recorded.size()) +
                " operations the step captured; run it without "
                "PARALLAX_CUDA_GRAPHS");
  }
  g.mode = Mode::Off;
  check(cuda.cuGraphLaunch(g.graph, cuda.stream),
        "launching the training step's CUDA graph");
  check(cuda.cuStreamSynchronize(cuda.stream),
        "the training step's CUDA graph (a kernel's error, if any, is above)");
}
