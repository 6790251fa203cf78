//===- HostStagingTest.cpp - Host access to device memory -----------------===//
//
// Part of the Parallax project.
//
// The runtime reaches a GPU program's device memory (variables, their
// state, inputs) only by copies: fillBuffer, drainBuffer and writeBuffer
// stage it through host chunks, and leave host memory to be read and
// written in place. Here a host array stands for device memory: the
// query says which addresses are "device", and the copy hook records
// every copy, so each case checks what went through copies and what was
// touched in place.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <unistd.h>
#include <vector>

using namespace parallax::runtime;

namespace {

/// Larger than the runtime's 16 MiB staging chunk, not a multiple of it.
constexpr int64_t kBytes = (int64_t(40) << 20) + 12;

struct Region {
  const char *begin = nullptr, *end = nullptr;
};
Region device;
int64_t copies = 0, copiedIntoDevice = 0, copiedFromDevice = 0;

bool inDevice(const void *data) {
  auto *p = static_cast<const char *>(data);
  return p >= device.begin && p < device.end;
}

class HostStagingTest : public ::testing::Test {
protected:
  void SetUp() override {
    memory.resize(kBytes);
    device = {memory.data(), memory.data() + memory.size()};
    copies = copiedIntoDevice = copiedFromDevice = 0;
    setDeviceMemoryQuery(inDevice);
    setBufferCopy([](void *to, const void *from, size_t bytes) {
      // Host code must not touch the "device" except through here.
      ASSERT_NE(inDevice(to), inDevice(from));
      ++copies;
      (inDevice(to) ? copiedIntoDevice : copiedFromDevice) += bytes;
      std::memcpy(to, from, bytes);
    });
  }
  void TearDown() override {
    setDeviceMemoryQuery(nullptr);
    setBufferCopy([](void *to, const void *from, size_t bytes) {
      std::memcpy(to, from, bytes);
    });
  }
  std::vector<char> memory; // the "device memory"
};

TEST_F(HostStagingTest, FillGoesThroughHostChunks) {
  std::vector<int64_t> pieces;
  int64_t written = 0;
  ASSERT_TRUE(fillBuffer(memory.data(), kBytes, [&](char *to, int64_t n) {
    EXPECT_FALSE(inDevice(to));
    for (int64_t i = 0; i < n; ++i)
      to[i] = static_cast<char>((written + i) % 251);
    written += n;
    pieces.push_back(n);
    return true;
  }));
  EXPECT_EQ(pieces, (std::vector<int64_t>{16 << 20, 16 << 20, (8 << 20) + 12}));
  EXPECT_EQ(copiedIntoDevice, kBytes);
  for (int64_t i = 0; i < kBytes; i += 4099)
    ASSERT_EQ(memory[i], static_cast<char>(i % 251)) << "byte " << i;
}

TEST_F(HostStagingTest, DrainReadsThroughHostChunks) {
  for (int64_t i = 0; i < kBytes; ++i)
    memory[i] = static_cast<char>(i % 253);
  int64_t read = 0;
  ASSERT_TRUE(
      drainBuffer(memory.data(), kBytes, [&](const char *from, int64_t n) {
        EXPECT_FALSE(inDevice(from));
        for (int64_t i = 0; i < n; i += 1021)
          EXPECT_EQ(from[i], static_cast<char>((read + i) % 253));
        read += n;
        return true;
      }));
  EXPECT_EQ(read, kBytes);
  EXPECT_EQ(copiedFromDevice, kBytes);
}

TEST_F(HostStagingTest, TheFirstFalseStops) {
  int calls = 0;
  EXPECT_FALSE(fillBuffer(memory.data(), kBytes, [&](char *, int64_t) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(copies, 0); // nothing half-written
  calls = 0;
  EXPECT_FALSE(drainBuffer(memory.data(), kBytes,
                           [&](const char *, int64_t) { return ++calls < 2; }));
  EXPECT_EQ(calls, 2);
}

TEST_F(HostStagingTest, HostMemoryIsReachedInPlace) {
  std::vector<char> host(1000);
  int calls = 0;
  EXPECT_TRUE(fillBuffer(host.data(), host.size(), [&](char *to, int64_t n) {
    EXPECT_EQ(to, host.data());
    EXPECT_EQ(n, 1000);
    ++calls;
    return true;
  }));
  EXPECT_TRUE(
      drainBuffer(host.data(), host.size(), [&](const char *from, int64_t n) {
        EXPECT_EQ(from, host.data());
        ++calls;
        return true;
      }));
  writeBuffer(host.data(), host.size(), [&](char *to) {
    EXPECT_EQ(to, host.data());
    ++calls;
  });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(copies, 0);
}

TEST_F(HostStagingTest, FileRangesReadIntoDeviceMemory) {
  std::vector<char> data(kBytes);
  for (int64_t i = 0; i < kBytes; ++i)
    data[i] = static_cast<char>(i % 241);
  char path[] = "/tmp/parallax-host-staging-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, data.data(), kBytes), kBytes);
  int failures = 0;
  auto fail = [&](int error) {
    EXPECT_EQ(error, 0); // the file ended, no I/O error
    ++failures;
  };
  // From offset 100: every byte but the first 100 and the last 200.
  readFileInto(fd, 100, memory.data(), kBytes - 300, fail);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(copiedIntoDevice, kBytes - 300);
  for (int64_t i = 0; i < kBytes - 300; i += 4093)
    ASSERT_EQ(memory[i], data[i + 100]) << "byte " << i;
  // Past the end of the file: one failure, saying it ended.
  readFileInto(fd, 100, memory.data(), kBytes, fail);
  EXPECT_EQ(failures, 1);
  close(fd);
  unlink(path);
}

TEST_F(HostStagingTest, WriteBufferStagesAllAtOnce) {
  // An interior address of the block counts as device memory too.
  char *at = memory.data() + 64;
  writeBuffer(at, 4096, [&](char *to) {
    EXPECT_FALSE(inDevice(to));
    std::iota(to, to + 4096, 0);
  });
  EXPECT_EQ(copies, 1);
  EXPECT_EQ(copiedIntoDevice, 4096);
  EXPECT_EQ(at[5], 5);
}

} // namespace
