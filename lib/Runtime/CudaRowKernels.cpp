//===- CudaRowKernels.cpp - Launching the parameter store's kernels -------===//
//
// Part of the Parallax project.
//
// The PTX of RowKernels.cu, embedded at build time, is loaded on the first
// launch (the driver compiles it for the GPU found); each launch queues on
// the program's stream.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "RowKernels.h"

#include "RowKernelsPtx.inc"

#include <algorithm>

using namespace parallax::runtime;
using namespace parallax::runtime::cuda;

namespace {

struct RowFunctions {
  CUfunction sum = nullptr, update = nullptr;
};

const RowFunctions &rowFunctions() {
  static const RowFunctions functions = [] {
    Driver &cuda = driver();
    CUmodule module = nullptr;
    check(cuda.cuModuleLoadData(&module, kRowKernelsPtx),
          "loading the parameter store's GPU kernels");
    RowFunctions loaded;
    check(cuda.cuModuleGetFunction(&loaded.sum, module,
                                   rowkernels::kSumRowsKernel),
          "finding the kernel parallax_rows_sum");
    check(cuda.cuModuleGetFunction(&loaded.update, module,
                                   rowkernels::kUpdateRowsKernel),
          "finding the kernel parallax_rows_update");
    return loaded;
  }();
  return functions;
}

/// Queues `function` over `elements` with its one by-value argument.
void launch(CUfunction function, const char *name, void *argument,
            int64_t elements) {
  if (elements <= 0)
    return;
  constexpr int64_t threads = 256, maxBlocks = 65535;
  unsigned blocks = static_cast<unsigned>(
      std::min((elements + threads - 1) / threads, maxBlocks));
  Driver &cuda = driver();
  DeviceTiming timing("kernel", [&] { return std::string(name); });
  void *parameters[] = {argument};
  check(cuda.cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0,
                            cuda.stream, parameters, nullptr),
        std::string("launching ") + name);
}

} // namespace

void cuda::launchSumRows(const rowkernels::RowSum &sum) {
  rowkernels::RowSum argument = sum;
  launch(rowFunctions().sum, rowkernels::kSumRowsKernel, &argument,
         sum.segments * sum.width);
}

void cuda::launchUpdateRows(const rowkernels::RowUpdate &update) {
  rowkernels::RowUpdate argument = update;
  launch(rowFunctions().update, rowkernels::kUpdateRowsKernel, &argument,
         update.gradient.segments * update.gradient.width);
}
