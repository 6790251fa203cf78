//===- CudaStepGraphTest.cpp - The training step as one CUDA graph --------===//
//
// Part of the Parallax project.
//
// lib/Runtime/CudaStepGraph.cpp on the fake driver of test/FakeCudaDriver,
// which captures as a GPU does: two steps as launches, the third captured,
// the later ones replayed; the replayed step's blocks are the captured
// one's and stay the graph's; a replayed step that asks for other work
// ends the program; an obstacle the compiler named keeps the launches.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>

extern "C" {
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemoryBytes, void *stream,
                      void **parameters, void **extra, size_t parameterCount);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared);
void mgpuMemFree(void *pointer, void *stream);
void mgpuStreamSynchronize(void *stream);
}

namespace {

struct Counts {
  long kernels = 0, graphs = 0, graphKernels = 0;
};

Counts counts() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  using Query = void(long *, long *, long *);
  auto *query = reinterpret_cast<Query *>(
      library ? dlsym(library, "parallaxFakeCudaLaunches") : nullptr);
  Counts c;
  if (query)
    query(&c.kernels, &c.graphs, &c.graphKernels);
  return c;
}

class CudaStepGraphTest : public ::testing::Test {
protected:
  void SetUp() override {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library || !dlsym(library, "parallaxFakeCudaLaunches"))
      GTEST_SKIP() << "needs test/FakeCudaDriver's libcuda.so.1 on "
                      "LD_LIBRARY_PATH";
    // Read once, at the first step.
    setenv("PARALLAX_CUDA_GRAPHS", "1", 1);
    // What the fake driver takes for a fat binary: its magic number.
    static const uint32_t fatbin[4] = {0xBA55ED50u, 0, 0, 0};
    module = mgpuModuleLoad(const_cast<uint32_t *>(fatbin), sizeof fatbin);
    first = mgpuModuleGetFunction(module, "first");
    second = mgpuModuleGetFunction(module, "second");
  }

  /// One step as a compiled program's: a temporary the kernel writes, a
  /// product-free body, the loss (managed memory) returned after the wait.
  void *step(int64_t index, void *kernel, const char *obstacle = "") {
    parallax_rt_cuda_step_graph_begin(index, obstacle);
    void *temporary = mgpuMemAlloc(256, nullptr, false);
    void *loss = mgpuMemAlloc(4, nullptr, true);
    void *parameters[] = {&temporary, &loss};
    mgpuLaunchKernel(kernel, 2, 1, 1, 64, 1, 1, 0, nullptr, parameters, nullptr,
                     2);
    mgpuLaunchKernel(first, 1, 1, 1, 32, 1, 1, 0, nullptr, parameters, nullptr,
                     2);
    mgpuMemFree(temporary, nullptr);
    mgpuStreamSynchronize(nullptr);
    parallax_rt_cuda_step_graph_end();
    return loss;
  }

  void *module = nullptr, *first = nullptr, *second = nullptr;
};

// Declared first: the declined step leaves no state behind.
TEST_F(CudaStepGraphTest, AnObstacleKeepsTheLaunches) {
  Counts before = counts();
  testing::internal::CaptureStderr();
  for (int64_t i = 0; i < 4; ++i)
    mgpuMemFree(step(i, second, "the host waits for the GPU inside the step"),
                nullptr);
  std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("warning: PARALLAX_CUDA_GRAPHS=1: the training step "
                         "runs as separate launches: the compiler found the "
                         "host waits for the GPU inside the step"),
            std::string::npos)
      << printed;
  // Said once.
  EXPECT_EQ(printed.find("warning", printed.find("warning") + 1),
            std::string::npos)
      << printed;
  Counts after = counts();
  EXPECT_EQ(after.kernels - before.kernels, 8);
  EXPECT_EQ(after.graphs, before.graphs);
}

TEST_F(CudaStepGraphTest, CapturesTheThirdStepAndReplaysIt) {
  Counts before = counts();
  void *losses[6];
  for (int64_t i = 0; i < 6; ++i) {
    losses[i] = step(i, second);
    mgpuMemFree(losses[i], nullptr);
  }
  Counts after = counts();
  // Steps 0 and 1 launch their 2 kernels each; step 2 is captured and
  // launched as a graph, as are steps 3 to 5.
  EXPECT_EQ(after.kernels - before.kernels, 4);
  EXPECT_EQ(after.graphs - before.graphs, 4);
  EXPECT_EQ(after.graphKernels - before.graphKernels, 8);
  // The replayed steps get the captured step's blocks...
  EXPECT_EQ(losses[3], losses[2]);
  EXPECT_EQ(losses[5], losses[2]);
  // ...which stay the graph's: freed, they are not handed out again.
  void *other = mgpuMemAlloc(4, nullptr, true);
  EXPECT_NE(other, losses[2]);
  mgpuMemFree(other, nullptr);

  // A replayed step that asks for another kernel than the captured one
  // would run the graph's work for another program: it ends instead.
  EXPECT_EXIT(step(6, first), testing::ExitedWithCode(1),
              "internal error: a training step replayed as a CUDA graph "
              "asked for another kernel launch \\(its operation 3\\)");
}

} // namespace
