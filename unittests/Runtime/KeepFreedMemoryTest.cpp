//===- KeepFreedMemoryTest.cpp - Freed memory stays in the process --------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <malloc.h>
#include <vector>

using namespace parallax::runtime;

namespace {

// A step of ResNet-18 at batch 32 frees over 1 GB of buffers: the heap
// must keep them for the next step rather than trim them and fault them
// in again. No page is touched, so nothing becomes resident.
TEST(KeepFreedMemoryTest, LargeFreesStayInTheHeap) {
  keepFreedMemory();
  constexpr size_t chunk = size_t(128) << 20;
  std::vector<void *> buffers;
  for (int i = 0; i < 12; ++i) {
    buffers.push_back(std::malloc(chunk));
    ASSERT_NE(buffers.back(), nullptr);
  }
  size_t grown = mallinfo2().arena;
  ASSERT_GE(grown, 12 * chunk) << "the buffers were not taken from the heap";
  for (void *buffer : buffers)
    std::free(buffer);
  EXPECT_GE(mallinfo2().arena, 12 * chunk) << "the heap was trimmed";
}

} // namespace
