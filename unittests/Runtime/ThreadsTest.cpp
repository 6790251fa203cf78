//===- ThreadsTest.cpp - The threads of a worker --------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Threads.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sched.h>

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

} // namespace
