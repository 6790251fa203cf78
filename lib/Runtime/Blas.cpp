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
#include "Matrices.h"

using namespace parallax::runtime;

namespace {

CBLAS_TRANSPOSE transposeOf(const Matrices &m) {
  return m.transposed ? CblasTrans : CblasNoTrans;
}

} // namespace

extern "C" void parallax_rt_matmul_f32(int64_t rankA, void *a, int64_t rankB,
                                       void *b, int64_t rankC, void *c) {
  static const SgemmFn sgemm = requireBlasLibrary().sgemm;
  Matrices A = viewMatrices(rankA, a), B = viewMatrices(rankB, b),
           C = viewMatrices(rankC, c);
  for (int64_t i = 0; i < C.batch; ++i)
    sgemm(CblasRowMajor, transposeOf(A), transposeOf(B), C.rows, C.cols, A.cols,
          1.0f, A.data + i * A.batchStride, A.leading,
          B.data + i * B.batchStride, B.leading, 1.0f,
          C.data + i * C.batchStride, C.leading);
}
