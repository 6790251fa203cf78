//===- Segments.cpp - Inputs that hold bags of varying size ---------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Support/Segments.h"

#include <cstring>

using namespace parallax::runtime;

SegmentRange parallax::runtime::segmentRange(const int64_t *offsets,
                                             int64_t examples, int64_t total,
                                             int64_t first, int64_t count) {
  int64_t end = first + count;
  return {offsets[first], end < examples ? offsets[end] : total};
}

bool parallax::runtime::segmentOffsetsOf(const NpyArray &file,
                                         std::vector<int64_t> &values) {
  values.clear();
  const char *data = file.data.data();
  int64_t count = elementCount(file);
  if (file.dtype == "<i8")
    values.assign(reinterpret_cast<const int64_t *>(data),
                  reinterpret_cast<const int64_t *>(data) + count);
  else if (file.dtype == "<i4")
    values.assign(reinterpret_cast<const int32_t *>(data),
                  reinterpret_cast<const int32_t *>(data) + count);
  else
    return false;
  return true;
}

std::string parallax::runtime::checkSegmentOffsets(const int64_t *offsets,
                                                   int64_t examples,
                                                   int64_t total) {
  if (examples > 0 && offsets[0] != 0)
    return "example 0: offset " + std::to_string(offsets[0]) +
           " must be 0 (the first bag starts the file)";
  for (int64_t e = 1; e < examples; ++e)
    if (offsets[e] < offsets[e - 1])
      return "example " + std::to_string(e) + ": offset " +
             std::to_string(offsets[e]) + " is less than example " +
             std::to_string(e - 1) + "'s, " + std::to_string(offsets[e - 1]);
  if (examples > 0 && offsets[examples - 1] > total)
    return "example " + std::to_string(examples - 1) + ": offset " +
           std::to_string(offsets[examples - 1]) + " is past the " +
           std::to_string(total) + " elements of the bags";
  return "";
}

void parallax::runtime::copySegment(char *to, int64_t capacity,
                                    const char *from, SegmentRange range,
                                    int64_t elementSize) {
  int64_t count = range.size();
  std::memcpy(to, from + range.begin * elementSize, count * elementSize);
  if (count == 0) {
    std::memset(to, 0, capacity * elementSize);
    return;
  }
  const char *last = to + (count - 1) * elementSize;
  for (int64_t i = count; i < capacity; ++i)
    std::memcpy(to + i * elementSize, last, elementSize);
}
