//===- FakeCudaDriverTest.cpp - The fake driver keeps device memory sealed ===//
//
// Part of the Parallax project.
//
// The tests of --target cuda programs on test/FakeCudaDriver rely on its
// device memory being out of the host's reach, as a GPU's is: a program
// whose host code touched a device buffer would then fault here rather
// than pass. This checks that it does, and that managed memory and the
// driver's own copies still reach what they should.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cstring>
#include <dlfcn.h>

namespace {

using CUdeviceptr = unsigned long long;

struct FakeDriver {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  template <typename F> F *get(const char *name) {
    return reinterpret_cast<F *>(dlsym(library, name));
  }
};

class FakeCudaDriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!driver.library || !driver.get<void()>("parallaxFakeCudaStall"))
      GTEST_SKIP() << "needs test/FakeCudaDriver's libcuda.so.1 on "
                      "LD_LIBRARY_PATH";
    ASSERT_EQ(driver.get<int(unsigned)>("cuInit")(0), 0);
  }

  CUdeviceptr allocate(const char *function, size_t bytes) {
    CUdeviceptr pointer = 0;
    if (std::strcmp(function, "cuMemAllocManaged") == 0)
      EXPECT_EQ(driver.get<int(CUdeviceptr *, size_t, unsigned)>(function)(
                    &pointer, bytes, 1),
                0);
    else
      EXPECT_EQ(
          driver.get<int(CUdeviceptr *, size_t)>(function)(&pointer, bytes), 0);
    return pointer;
  }

  FakeDriver driver;
};

TEST_F(FakeCudaDriverTest, HostTouchOfDeviceMemoryFaults) {
  auto *values = reinterpret_cast<volatile float *>(
      allocate("cuMemAlloc_v2", 64 * sizeof(float)));
  EXPECT_DEATH(values[3] = 1.0f, "");
  EXPECT_DEATH((void)values[63], "");
}

TEST_F(FakeCudaDriverTest, ManagedMemoryAndCopiesReachTheirBlocks) {
  auto *managed = reinterpret_cast<float *>(
      allocate("cuMemAllocManaged", 8 * sizeof(float)));
  CUdeviceptr device = allocate("cuMemAlloc_v2", 8 * sizeof(float));
  for (int i = 0; i < 8; ++i)
    managed[i] = float(i);
  auto copy = driver.get<int(CUdeviceptr, CUdeviceptr, size_t, void *)>(
      "cuMemcpyAsync");
  ASSERT_EQ(copy(device, reinterpret_cast<CUdeviceptr>(managed),
                 8 * sizeof(float), nullptr),
            0);
  std::memset(managed, 0, 8 * sizeof(float));
  ASSERT_EQ(copy(reinterpret_cast<CUdeviceptr>(managed), device,
                 8 * sizeof(float), nullptr),
            0);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(managed[i], float(i));
  // Sealed again after the copies.
  EXPECT_DEATH((void)*reinterpret_cast<volatile float *>(device), "");
  EXPECT_EQ(driver.get<int(CUdeviceptr)>("cuMemFree_v2")(device), 0);
}

} // namespace
