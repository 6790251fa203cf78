//===- Descriptor.h - MLIR memref descriptors seen from C++ -----*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// Memrefs reach the runtime in MLIR's unranked convention, a rank and a
// pointer to a strided descriptor; they are read with MLIR's own types
// (mlir/ExecutionEngine/CRunnerUtils.h, header only: programs do not link
// MLIR's runner libraries), never by offsets into the descriptor.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_DESCRIPTOR_H
#define PARALLAX_LIB_RUNTIME_DESCRIPTOR_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdint>
#include <vector>

namespace parallax::runtime {

/// A memref of elements of some size: its first element (aligned pointer
/// plus offset), sizes and strides (in elements).
struct StridedView {
  char *data;
  std::vector<int64_t> sizes, strides;
};

inline StridedView viewDescriptor(int64_t rank, void *descriptor,
                                  int64_t elementSize) {
  DynamicMemRefType<char> memref(UnrankedMemRefType<char>{rank, descriptor});
  return {memref.data + memref.offset * elementSize,
          std::vector<int64_t>(memref.sizes, memref.sizes + rank),
          std::vector<int64_t>(memref.strides, memref.strides + rank)};
}

/// The sizes of a memref (its rank entries).
inline const int64_t *sizesOf(int64_t rank, void *descriptor) {
  return DynamicMemRefType<char>(UnrankedMemRefType<char>{rank, descriptor})
      .sizes;
}

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_DESCRIPTOR_H
