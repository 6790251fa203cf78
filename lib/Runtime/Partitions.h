//===- Partitions.h - Row ranges of a partitioned variable ------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_PARTITIONS_H
#define PARALLAX_LIB_RUNTIME_PARTITIONS_H

#include <algorithm>
#include <cstdint>

namespace parallax::runtime {

/// A variable of `rows` rows split into `partitions` contiguous row ranges
/// as evenly as possible (the first rows % partitions ranges have one row
/// more); partition p is served by rank (firstServer + p) % workers.
struct Partitioning {
  int64_t rows, partitions, firstServer;

  Partitioning(int64_t rows, int64_t partitions, int64_t firstServer)
      : rows(rows),
        partitions(std::max<int64_t>(
            1, std::min<int64_t>(partitions, std::max<int64_t>(rows, 1)))),
        firstServer(firstServer) {}

  int64_t begin(int64_t p) const {
    return p * (rows / partitions) + std::min(p, rows % partitions);
  }
  int64_t end(int64_t p) const { return begin(p + 1); }

  int64_t partitionOf(int64_t row) const {
    int64_t small = rows / partitions, extra = rows % partitions;
    int64_t bigRows = extra * (small + 1);
    return row < bigRows
               ? row / (small + 1)
               : extra + (row - bigRows) / std::max<int64_t>(small, 1);
  }

  int ownerOf(int64_t partition, int workers) const {
    return static_cast<int>((firstServer + partition) % workers);
  }
  int ownerOfRow(int64_t row, int workers) const {
    return ownerOf(partitionOf(row), workers);
  }
};

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_PARTITIONS_H
