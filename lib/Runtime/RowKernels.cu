//===- RowKernels.cu - The GPU parameter store's kernels ------------------===//
//
// Part of the Parallax project.
//
// Compiled to PTX at build time by clang (no CUDA toolkit needed: no CUDA
// headers, no libdevice) and embedded in the CUDA runtime, which loads it
// on first use (CudaRowKernels.cpp). Each kernel covers its elements with
// a grid-stride loop, one element per thread at a time.
//
//===----------------------------------------------------------------------===//

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))

#include "RowKernels.h"

using namespace parallax::runtime::rowkernels;

namespace {

template <typename Body>
__device__ inline void forEachElement(int64_t count, Body body) {
  int64_t stride = static_cast<int64_t>(__nvvm_read_ptx_sreg_nctaid_x()) *
                   __nvvm_read_ptx_sreg_ntid_x();
  for (int64_t i = static_cast<int64_t>(__nvvm_read_ptx_sreg_ctaid_x()) *
                       __nvvm_read_ptx_sreg_ntid_x() +
                   __nvvm_read_ptx_sreg_tid_x();
       i < count; i += stride)
    body(i);
}

} // namespace

extern "C" __global__ void parallax_rows_sum(RowSum sum) {
  forEachElement(sum.segments * sum.width,
                 [&](int64_t i) { sumRowsElement(sum, i); });
}

extern "C" __global__ void parallax_rows_update(RowUpdate update) {
  forEachElement(update.gradient.segments * update.gradient.width,
                 [&](int64_t i) { updateRowsElement(update, i); });
}
