//===- Blas.cpp - Matrix products through OpenBLAS ------------------------===//
//
// Part of the Parallax project.
//
// OpenBLAS is loaded by the runtime (CpuKernels.cpp), with the kernels
// the CPU's features call for.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "CpuKernels.h"
#include "Descriptor.h"

#include <algorithm>

using namespace parallax::runtime;

namespace {

/// A strided memref descriptor of rank 2 or 3 viewed as a batch of
/// matrices: row-major (unit stride along the last dimension), or the
/// transposed view of row-major ones (unit stride along the one before).
struct Matrices {
  float *data;
  int64_t batch, rows, cols, leading, batchStride;
  bool transposed;

  CBLAS_TRANSPOSE trans() const {
    return transposed ? CblasTrans : CblasNoTrans;
  }
};

Matrices view(int64_t rank, void *descriptor) {
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

} // namespace

extern "C" void parallax_rt_matmul_f32(int64_t rankA, void *a, int64_t rankB,
                                       void *b, int64_t rankC, void *c) {
  static const SgemmFn sgemm = requireBlasLibrary().sgemm;
  Matrices A = view(rankA, a), B = view(rankB, b), C = view(rankC, c);
  for (int64_t i = 0; i < C.batch; ++i)
    sgemm(CblasRowMajor, A.trans(), B.trans(), C.rows, C.cols, A.cols, 1.0f,
          A.data + i * A.batchStride, A.leading, B.data + i * B.batchStride,
          B.leading, 1.0f, C.data + i * C.batchStride, C.leading);
}
