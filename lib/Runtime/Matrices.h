//===- Matrices.h - Memref descriptors as batches of matrices ---*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// How the BLAS entry points (OpenBLAS in Blas.cpp, cuBLAS in
// CudaRuntime.cpp) read the operands of a matrix product.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_MATRICES_H
#define PARALLAX_LIB_RUNTIME_MATRICES_H

#include "Descriptor.h"

#include <algorithm>

namespace parallax::runtime {

/// A strided memref descriptor of rank 2 or 3 viewed as a batch of
/// matrices: row-major (unit stride along the last dimension), or the
/// transposed view of row-major ones (unit stride along the one before).
struct Matrices {
  float *data;
  int64_t batch, rows, cols, leading, batchStride;
  bool transposed;
};

inline Matrices viewMatrices(int64_t rank, void *descriptor) {
  StridedView d = viewDescriptor(rank, descriptor, sizeof(float));
  Matrices m;
  m.data = reinterpret_cast<float *>(d.data);
  m.batch = rank == 3 ? d.sizes[0] : 1;
  m.batchStride = rank == 3 ? d.strides[0] : 0;
  m.rows = d.sizes[rank - 2];
  m.cols = d.sizes[rank - 1];
  m.transposed = d.strides[rank - 1] != 1 && m.cols != 1;
  // BLAS wants a leading dimension of at least the stored row length.
  m.leading = m.transposed ? std::max(d.strides[rank - 1], m.rows)
                           : std::max(d.strides[rank - 2], m.cols);
  return m;
}

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_MATRICES_H
