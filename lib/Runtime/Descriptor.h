//===- Descriptor.h - MLIR memref descriptors seen from C++ -----*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_DESCRIPTOR_H
#define PARALLAX_LIB_RUNTIME_DESCRIPTOR_H

#include <cstdint>
#include <vector>

namespace parallax::runtime {

/// A strided memref descriptor of rank `rank` as MLIR lays it out:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, with `data`
/// pointing at the first element (aligned + offset).
struct StridedView {
  char *data;
  std::vector<int64_t> sizes, strides;
};

inline StridedView viewDescriptor(int64_t rank, void *descriptor,
                                  int64_t elementSize) {
  auto *words = static_cast<int64_t *>(descriptor);
  return {reinterpret_cast<char *>(words[1]) + words[2] * elementSize,
          std::vector<int64_t>(words + 3, words + 3 + rank),
          std::vector<int64_t>(words + 3 + rank, words + 3 + 2 * rank)};
}

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_DESCRIPTOR_H
