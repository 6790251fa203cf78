//===- Segments.h - Inputs that hold bags of varying size -------*- C++ -*-===//
//
// Part of the Parallax project. Shared by the runtime and the compiler
// (lib/Support).
//
// nn.EmbeddingBag's 1-D ids (and per-sample weights) with offsets: a
// dataset holds every example's bag one after another in one 1-D file, and
// an offsets file the position of each example's first element, as
// PyTorch's `bag(ids, offsets)` takes them. A batch of examples holds a
// varying number of elements, up to the length the program was compiled
// for (its capacity); the rest of the program's buffer is padding that no
// bag covers (docs/training.md).
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_SUPPORT_SEGMENTS_H
#define PARALLAX_SUPPORT_SEGMENTS_H

#include "parallax/Support/Npy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace parallax::runtime {

/// The elements [begin, end) of a segmented input's file.
struct SegmentRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

/// Where the elements of examples [first, first + count) lie, with
/// `offsets` the dataset's `examples` offsets into `total` elements
/// (checked by checkSegmentOffsets): example e's bag runs from offsets[e]
/// to offsets[e + 1], the last one to `total`.
SegmentRange segmentRange(const int64_t *offsets, int64_t examples,
                          int64_t total, int64_t first, int64_t count);

/// The values of a dataset's offsets file, int64 or int32, as int64;
/// false (and `values` left empty) for another dtype.
bool segmentOffsetsOf(const NpyArray &file, std::vector<int64_t> &values);

/// Checks a dataset's offsets: the first is 0 (when there is one), none
/// decreases, none is past `total`. Returns "" or what is wrong, naming
/// the example ("example 3: offset 9 is less than example 2's, 11").
std::string checkSegmentOffsets(const int64_t *offsets, int64_t examples,
                                int64_t total);

/// Copies `range` of the `elementSize`-byte elements at `from` to the
/// start of `to`, which holds `capacity` elements (range.size() <=
/// capacity), and fills the rest with copies of the last element copied,
/// or zeros when there is none: padding ids stay valid rows that a
/// sparse update touches anyway, so padding changes no update.
void copySegment(char *to, int64_t capacity, const char *from,
                 SegmentRange range, int64_t elementSize);

} // namespace parallax::runtime

#endif // PARALLAX_SUPPORT_SEGMENTS_H
