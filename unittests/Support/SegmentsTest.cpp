//===- SegmentsTest.cpp - Bags of varying size ----------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Support/Segments.h"

#include <gtest/gtest.h>

#include <vector>

using namespace parallax::runtime;

TEST(Segments, RangesOfBatchesEndAtTheNextOffsetOrTheData) {
  // Five examples' bags: {0, 1}, {}, {2, 3, 4}, {5}, {}.
  std::vector<int64_t> offsets{0, 2, 2, 5, 6};
  SegmentRange first = segmentRange(offsets.data(), 5, 6, 0, 2);
  EXPECT_EQ(first.begin, 0);
  EXPECT_EQ(first.end, 2);
  SegmentRange middle = segmentRange(offsets.data(), 5, 6, 2, 2);
  EXPECT_EQ(middle.begin, 2);
  EXPECT_EQ(middle.end, 6);
  SegmentRange last = segmentRange(offsets.data(), 5, 6, 4, 1);
  EXPECT_EQ(last.begin, 6);
  EXPECT_EQ(last.size(), 0);
}

TEST(Segments, OffsetsStartAtZeroNeverDecreaseAndStayInTheData) {
  std::vector<int64_t> good{0, 2, 2, 5};
  EXPECT_EQ(checkSegmentOffsets(good.data(), 4, 5), "");
  EXPECT_EQ(checkSegmentOffsets(good.data(), 0, 0), "");
  std::vector<int64_t> late{1, 2};
  EXPECT_EQ(checkSegmentOffsets(late.data(), 2, 5),
            "example 0: offset 1 must be 0 (the first bag starts the file)");
  std::vector<int64_t> down{0, 3, 2};
  EXPECT_EQ(checkSegmentOffsets(down.data(), 3, 5),
            "example 2: offset 2 is less than example 1's, 3");
  std::vector<int64_t> past{0, 6};
  EXPECT_EQ(checkSegmentOffsets(past.data(), 2, 5),
            "example 1: offset 6 is past the 5 elements of the bags");
}

TEST(Segments, PaddingRepeatsTheLastElementOrIsZero) {
  std::vector<int64_t> data{7, 8, 9, 10};
  std::vector<int64_t> batch(5, -1);
  copySegment(reinterpret_cast<char *>(batch.data()), 5,
              reinterpret_cast<const char *>(data.data()), {1, 3},
              sizeof(int64_t));
  EXPECT_EQ(batch, (std::vector<int64_t>{8, 9, 9, 9, 9}));
  copySegment(reinterpret_cast<char *>(batch.data()), 5,
              reinterpret_cast<const char *>(data.data()), {2, 2},
              sizeof(int64_t));
  EXPECT_EQ(batch, (std::vector<int64_t>(5, 0)));
  std::vector<float> weights{0.5f, 0.25f};
  std::vector<float> full(2);
  copySegment(reinterpret_cast<char *>(full.data()), 2,
              reinterpret_cast<const char *>(weights.data()), {0, 2},
              sizeof(float));
  EXPECT_EQ(full, weights);
}

TEST(Segments, OffsetsAreReadFromInt64AndInt32Files) {
  std::vector<int64_t> values;
  NpyArray wide{"<i8", {3}, {}};
  std::vector<int64_t> data64{0, 2, 5};
  wide.data.assign(reinterpret_cast<const char *>(data64.data()),
                   reinterpret_cast<const char *>(data64.data() + 3));
  EXPECT_TRUE(segmentOffsetsOf(wide, values));
  EXPECT_EQ(values, data64);
  NpyArray narrow{"<i4", {3}, {}};
  std::vector<int32_t> data32{0, 1, 4};
  narrow.data.assign(reinterpret_cast<const char *>(data32.data()),
                     reinterpret_cast<const char *>(data32.data() + 3));
  EXPECT_TRUE(segmentOffsetsOf(narrow, values));
  EXPECT_EQ(values, (std::vector<int64_t>{0, 1, 4}));
  NpyArray floats{"<f4", {1}, std::vector<char>(4)};
  EXPECT_FALSE(segmentOffsetsOf(floats, values));
  EXPECT_TRUE(values.empty());
}
