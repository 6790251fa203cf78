//===- Blas.cpp - Matrix products through OpenBLAS ------------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Descriptor.h"

#include <cblas.h>

using namespace parallax::runtime;

namespace {

/// A strided memref descriptor of rank 2 or 3 viewed as a batch of
/// row-major matrices (unit stride along the last dimension).
struct Matrices {
  float *data;
  int64_t batch, rows, cols, rowStride, batchStride;
};

Matrices view(int64_t rank, void *descriptor) {
  StridedView d = viewDescriptor(rank, descriptor, sizeof(float));
  Matrices m;
  m.data = reinterpret_cast<float *>(d.data);
  m.batch = rank == 3 ? d.sizes[0] : 1;
  m.batchStride = rank == 3 ? d.strides[0] : 0;
  m.rows = d.sizes[rank - 2];
  m.cols = d.sizes[rank - 1];
  m.rowStride = d.strides[rank - 2];
  return m;
}

} // namespace

extern "C" void parallax_rt_matmul_f32(int64_t rankA, void *a, int64_t rankB,
                                       void *b, int64_t rankC, void *c) {
  Matrices A = view(rankA, a), B = view(rankB, b), C = view(rankC, c);
  for (int64_t i = 0; i < C.batch; ++i)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, C.rows, C.cols,
                A.cols, 1.0f, A.data + i * A.batchStride, A.rowStride,
                B.data + i * B.batchStride, B.rowStride, 1.0f,
                C.data + i * C.batchStride, C.rowStride);
}
