//===- ThreadsTest.cpp - The threads of a worker --------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Threads.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <sched.h>
#include <vector>

using namespace parallax::runtime;

namespace {

int coresOfThisProcess() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  EXPECT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  return CPU_COUNT(&cpus);
}

TEST(ThreadsTest, OptionThenEnvironmentThenCores) {
  unsetenv("PARALLAX_THREADS");
  unsetenv("OMP_NUM_THREADS");
  configureThreads(0);
  EXPECT_EQ(workerThreads(), coresOfThisProcess());
  EXPECT_NE(describeThreads().find("the cores this rank may run on"),
            std::string::npos);

  setenv("OMP_NUM_THREADS", "4,2", 1);
  configureThreads(0);
  EXPECT_EQ(workerThreads(), 4);
  EXPECT_EQ(describeThreads(), "threads: 4 (OMP_NUM_THREADS)");

  setenv("PARALLAX_THREADS", "3", 1);
  configureThreads(0);
  EXPECT_EQ(workerThreads(), 3);
  EXPECT_EQ(describeThreads(), "threads: 3 (PARALLAX_THREADS)");

  configureThreads(5);
  EXPECT_EQ(workerThreads(), 5);
  EXPECT_EQ(describeThreads(), "threads: 5 (--threads)");
  unsetenv("PARALLAX_THREADS");
  unsetenv("OMP_NUM_THREADS");
}

TEST(ThreadsTest, CountsAreChecked) {
  EXPECT_EQ(parseThreads("--threads", "1"), 1);
  EXPECT_EQ(parseThreads("--threads", "64"), 64);
  for (const char *bad : {"0", "-2", "", "2x", "99999999999"})
    EXPECT_EXIT(parseThreads("--threads", bad), testing::ExitedWithCode(1),
                "--threads '.*': expected a thread count from 1 to 4096")
        << bad;
}

// Equal chunks go to the threads in runs: thread t takes the t-th run of
// consecutive chunks, as the generated loop nests' static schedule does,
// so each thread reads back what it wrote in the kernel before.
TEST(ThreadsTest, ChunksGoToTheThreadsInRuns) {
  configureThreads(3);
  constexpr int64_t kCount = 3000;
  std::vector<int> owner(kCount, -1);
  for (int pass = 0; pass < 2; ++pass)
    parallelChunks(kCount, 10, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        int me = omp_get_thread_num();
        if (pass == 0)
          owner[i] = me;
        else
          EXPECT_EQ(owner[i], me) << "index " << i;
      }
    });
  for (int64_t i = 1; i < kCount; ++i)
    EXPECT_LE(owner[i - 1], owner[i]) << "index " << i;
  EXPECT_EQ(owner.front(), 0);
  EXPECT_EQ(owner.back(), 2);
  configureThreads(1);
}

TEST(ThreadsTest, TasksRunOnceEach) {
  for (int threads : {1, 3}) {
    configureThreads(threads);
    std::vector<std::atomic<int>> runs(257);
    parallelTasks(static_cast<int64_t>(runs.size()),
                  [&](int64_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < runs.size(); ++i)
      EXPECT_EQ(runs[i].load(), 1)
          << "task " << i << ", " << threads << " threads";
    parallelTasks(0, [&](int64_t) { FAIL() << "a task of none"; });
  }
  configureThreads(1);
}

} // namespace
