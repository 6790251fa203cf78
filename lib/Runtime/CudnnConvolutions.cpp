//===- CudnnConvolutions.cpp - Convolutions through cuDNN -----------------===//
//
// Part of the Parallax project.
//
// The cuda_conv2d and cuda_conv3d calls of RuntimeABI.def (4-d and 5-d
// descriptors): cuDNN's forward, backward-data
// and backward-filter convolutions (its legacy API, exported by
// libcudnn.so.9 and loaded at run time like cuBLAS) on the program's
// stream. Each shape's descriptors and algorithm are made once: the
// first of cuDNN's heuristic ranking among the deterministic algorithms
// with FP32 arithmetic (CUDNN_FMA_MATH: no TF32, as the products) that
// need at most kMaxWorkspace bytes of workspace, so a program's results
// are the same from run to run (a non-deterministic one, with a warning,
// where no deterministic one fits). One device workspace, grown to
// the largest need, serves every call.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Convolutions.h"
#include "CudaDriver.h"
#include "Support.h"

#include <array>
#include <dlfcn.h>
#include <map>
#include <string>
#include <type_traits>

using namespace parallax::runtime;
using namespace parallax::runtime::cuda;

namespace {

// cuDNN's types and constants (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h),
// declared here so the runtime builds without cuDNN's headers.
using cudnnStatus = int;
using cudnnHandle = void *;
using cudnnDescriptor = void *;
constexpr int CUDNN_DATA_FLOAT = 0, CUDNN_TENSOR_NCHW = 0,
              CUDNN_CROSS_CORRELATION = 1, CUDNN_DEFAULT_MATH = 0,
              CUDNN_FMA_MATH = 3, CUDNN_DETERMINISTIC = 1;
struct AlgorithmPerf { // cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t
  int algo;
  cudnnStatus status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};
using GetAlgorithms = cudnnStatus (*)(cudnnHandle, cudnnDescriptor,
                                      cudnnDescriptor, cudnnDescriptor,
                                      cudnnDescriptor, int, int *,
                                      AlgorithmPerf *);
using Convolve = cudnnStatus (*)(cudnnHandle, const void *, cudnnDescriptor,
                                 const void *, cudnnDescriptor, const void *,
                                 cudnnDescriptor, int, void *, size_t,
                                 const void *, cudnnDescriptor, void *);

/// The most workspace one convolution may use.
constexpr size_t kMaxWorkspace = size_t(1) << 30;

struct Cudnn {
  cudnnStatus (*create)(cudnnHandle *);
  cudnnStatus (*setStream)(cudnnHandle, CUstream);
  const char *(*errorString)(cudnnStatus);
  size_t (*version)();
  cudnnStatus (*createTensor)(cudnnDescriptor *);
  cudnnStatus (*setTensor4d)(cudnnDescriptor, int, int, int, int, int, int);
  cudnnStatus (*setTensorNd)(cudnnDescriptor, int, int, const int *,
                             const int *);
  cudnnStatus (*createFilter)(cudnnDescriptor *);
  cudnnStatus (*setFilter4d)(cudnnDescriptor, int, int, int, int, int, int);
  cudnnStatus (*setFilterNd)(cudnnDescriptor, int, int, int, const int *);
  cudnnStatus (*createConvolution)(cudnnDescriptor *);
  cudnnStatus (*setConvolution2d)(cudnnDescriptor, int, int, int, int, int, int,
                                  int, int);
  cudnnStatus (*setConvolutionNd)(cudnnDescriptor, int, const int *,
                                  const int *, const int *, int, int);
  cudnnStatus (*setGroupCount)(cudnnDescriptor, int);
  cudnnStatus (*setMathType)(cudnnDescriptor, int);
  GetAlgorithms forwardAlgorithms, dataAlgorithms, filterAlgorithms;
  Convolve forward, backwardData, backwardFilter;
  cudnnHandle handle = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
};

/// A warning, once per program.
void warnOnce(const std::string &message) {
  static bool warned = false;
  if (!warned)
    warn(message);
  warned = true;
}

/// Ends the program when a cuDNN call failed.
void checkCudnn(const Cudnn &dnn, cudnnStatus status,
                const std::string &operation) {
  if (status)
    fail(1, operation + " failed: " + dnn.errorString(status));
}

Cudnn &cudnn() {
  static Cudnn library = [] {
    Driver &cuda = driver();
    void *handle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      fail(2, std::string("this program's convolutions run on cuDNN 9, "
                          "which cannot be loaded (") +
                  dlerror() +
                  "): put the directory of libcudnn.so.9 (the CUDA "
                  "toolkit's lib64, or site-packages/nvidia/cudnn/lib of "
                  "PyTorch's pip packages) on LD_LIBRARY_PATH, or build "
                  "with --gpu-convolutions=im2col");
    Cudnn dnn;
    resolveSymbol(handle, "cuDNN", dnn.create, "cudnnCreate");
    resolveSymbol(handle, "cuDNN", dnn.setStream, "cudnnSetStream");
    resolveSymbol(handle, "cuDNN", dnn.errorString, "cudnnGetErrorString");
    resolveSymbol(handle, "cuDNN", dnn.version, "cudnnGetVersion");
    resolveSymbol(handle, "cuDNN", dnn.createTensor,
                  "cudnnCreateTensorDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.setTensor4d,
                  "cudnnSetTensor4dDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.setTensorNd,
                  "cudnnSetTensorNdDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.createFilter,
                  "cudnnCreateFilterDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.setFilter4d,
                  "cudnnSetFilter4dDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.setFilterNd,
                  "cudnnSetFilterNdDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.createConvolution,
                  "cudnnCreateConvolutionDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.setConvolution2d,
                  "cudnnSetConvolution2dDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.setConvolutionNd,
                  "cudnnSetConvolutionNdDescriptor");
    resolveSymbol(handle, "cuDNN", dnn.setGroupCount,
                  "cudnnSetConvolutionGroupCount");
    resolveSymbol(handle, "cuDNN", dnn.setMathType,
                  "cudnnSetConvolutionMathType");
    resolveSymbol(handle, "cuDNN", dnn.forwardAlgorithms,
                  "cudnnGetConvolutionForwardAlgorithm_v7");
    resolveSymbol(handle, "cuDNN", dnn.dataAlgorithms,
                  "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    resolveSymbol(handle, "cuDNN", dnn.filterAlgorithms,
                  "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    resolveSymbol(handle, "cuDNN", dnn.forward, "cudnnConvolutionForward");
    resolveSymbol(handle, "cuDNN", dnn.backwardData,
                  "cudnnConvolutionBackwardData");
    resolveSymbol(handle, "cuDNN", dnn.backwardFilter,
                  "cudnnConvolutionBackwardFilter");
    if (dnn.version() < 90000)
      fail(2, "libcudnn.so.9 reports version " + std::to_string(dnn.version()) +
                  ", not cuDNN 9");
    checkCudnn(dnn, dnn.create(&dnn.handle), "creating the cuDNN handle");
    checkCudnn(dnn, dnn.setStream(dnn.handle, cuda.stream),
               "setting cuDNN's stream");
    return dnn;
  }();
  return library;
}

enum class Direction { Forward, BackwardData, BackwardFilter };

const char *nameOf(Direction direction) {
  switch (direction) {
  case Direction::Forward:
    return "forward";
  case Direction::BackwardData:
    return "input gradient";
  case Direction::BackwardFilter:
    return "filter gradient";
  }
  return "";
}

/// A shape's descriptors and the algorithm chosen for it.
struct Plan {
  cudnnDescriptor x, w, y, conv;
  int algorithm;
  size_t workspace;
};

int narrow(int64_t value, const Convolution &conv) {
  if (value > INT32_MAX)
    fail(1, "a convolution of " + describeShapes(conv) +
                " is past cuDNN's 32-bit sizes");
  return static_cast<int>(value);
}

const Plan &planFor(Direction direction, const Convolution &conv) {
  // Every size but the output's, which the others determine.
  using Key = std::array<int64_t, 21>;
  static std::map<Key, Plan> plans;
  Key key{int64_t(direction), conv.spatial, conv.n, conv.c, conv.m,
          conv.groups};
  size_t at = 6;
  for (int d = 0; d < 3; ++d)
    for (int64_t value : {conv.in[d], conv.kernel[d], conv.stride[d],
                          conv.pad[d], conv.dilation[d]})
      key[at++] = value;
  auto [found, added] = plans.try_emplace(key);
  Plan &plan = found->second;
  if (!added)
    return plan;
  Cudnn &dnn = cudnn();
  auto call = [&](cudnnStatus status, const char *what) {
    checkCudnn(dnn, status, std::string("cuDNN's ") + what);
  };
  call(dnn.createTensor(&plan.x), "cudnnCreateTensorDescriptor");
  call(dnn.createTensor(&plan.y), "cudnnCreateTensorDescriptor");
  call(dnn.createFilter(&plan.w), "cudnnCreateFilterDescriptor");
  call(dnn.createConvolution(&plan.conv), "cudnnCreateConvolutionDescriptor");
  auto n = [&](int64_t value) { return narrow(value, conv); };
  if (conv.spatial == 2) {
    call(dnn.setTensor4d(plan.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n(conv.n),
                         n(conv.c), n(conv.in[1]), n(conv.in[2])),
         "cudnnSetTensor4dDescriptor");
    call(dnn.setTensor4d(plan.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n(conv.n),
                         n(conv.m), n(conv.out[1]), n(conv.out[2])),
         "cudnnSetTensor4dDescriptor");
    call(dnn.setFilter4d(plan.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, n(conv.m),
                         n(conv.c / conv.groups), n(conv.kernel[1]),
                         n(conv.kernel[2])),
         "cudnnSetFilter4dDescriptor");
    call(dnn.setConvolution2d(plan.conv, n(conv.pad[1]), n(conv.pad[2]),
                              n(conv.stride[1]), n(conv.stride[2]),
                              n(conv.dilation[1]), n(conv.dilation[2]),
                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
         "cudnnSetConvolution2dDescriptor");
  } else {
    // NCDHW, packed: the Nd descriptors take the strides.
    auto setTensor = [&](cudnnDescriptor descriptor, int64_t channels,
                         const int64_t *spatial) {
      int sizes[5] = {n(conv.n), n(channels), n(spatial[0]), n(spatial[1]),
                      n(spatial[2])};
      int strides[5];
      int64_t stride = 1;
      for (int d = 4; d >= 0; --d) {
        strides[d] = n(stride);
        stride *= sizes[d];
      }
      call(dnn.setTensorNd(descriptor, CUDNN_DATA_FLOAT, 5, sizes, strides),
           "cudnnSetTensorNdDescriptor");
    };
    setTensor(plan.x, conv.c, conv.in);
    setTensor(plan.y, conv.m, conv.out);
    int filter[5] = {n(conv.m), n(conv.c / conv.groups), n(conv.kernel[0]),
                     n(conv.kernel[1]), n(conv.kernel[2])};
    call(
        dnn.setFilterNd(plan.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, filter),
        "cudnnSetFilterNdDescriptor");
    int pads[3], strides[3], dilations[3];
    for (int d = 0; d < 3; ++d) {
      pads[d] = n(conv.pad[d]);
      strides[d] = n(conv.stride[d]);
      dilations[d] = n(conv.dilation[d]);
    }
    call(dnn.setConvolutionNd(plan.conv, 3, pads, strides, dilations,
                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
         "cudnnSetConvolutionNdDescriptor");
  }
  call(dnn.setGroupCount(plan.conv, narrow(conv.groups, conv)),
       "cudnnSetConvolutionGroupCount");
  call(dnn.setMathType(plan.conv, CUDNN_FMA_MATH),
       "cudnnSetConvolutionMathType");

  constexpr int kRequested = 16;
  AlgorithmPerf perf[kRequested] = {};
  int returned = 0;
  switch (direction) {
  case Direction::Forward:
    call(dnn.forwardAlgorithms(dnn.handle, plan.x, plan.w, plan.conv, plan.y,
                               kRequested, &returned, perf),
         "cudnnGetConvolutionForwardAlgorithm_v7");
    break;
  case Direction::BackwardData:
    call(dnn.dataAlgorithms(dnn.handle, plan.w, plan.y, plan.conv, plan.x,
                            kRequested, &returned, perf),
         "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    break;
  case Direction::BackwardFilter:
    call(dnn.filterAlgorithms(dnn.handle, plan.x, plan.y, plan.conv, plan.w,
                              kRequested, &returned, perf),
         "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    break;
  }
  // FP32 (the descriptor's FMA math; heuristics may report it as the
  // default), deterministic where any such algorithm fits.
  auto usable = [&](const AlgorithmPerf &p, bool deterministic) {
    return p.status == 0 && p.memory <= kMaxWorkspace &&
           (p.mathType == CUDNN_FMA_MATH || p.mathType == CUDNN_DEFAULT_MATH) &&
           (!deterministic || p.determinism == CUDNN_DETERMINISTIC);
  };
  const AlgorithmPerf *chosen = nullptr;
  for (bool deterministic : {true, false})
    for (int i = 0; i < returned && !chosen; ++i)
      if (usable(perf[i], deterministic))
        chosen = &perf[i];
  if (!chosen)
    fail(1, std::string("cuDNN has no FP32 algorithm within ") +
                std::to_string(kMaxWorkspace >> 20) +
                " MiB of workspace for the " + nameOf(direction) +
                " of a convolution of " + describeShapes(conv) +
                " (rebuild with --gpu-convolutions=im2col)");
  if (chosen->determinism != CUDNN_DETERMINISTIC)
    warnOnce("cuDNN has no deterministic FP32 algorithm for the " +
             std::string(nameOf(direction)) + " of a convolution of " +
             describeShapes(conv) +
             ": its results may differ from run to run in the last bits");
  plan.algorithm = chosen->algo;
  plan.workspace = chosen->memory;
  return plan;
}

/// Queues one convolution on the program's stream: the plan of its shape,
/// the workspace, the call (the stream orders what reads the result, and
/// the host waits before it reads it itself).
void convolve(Direction direction, const char *what, const Convolution &conv) {
  if (!conv.error.empty())
    fail(1, std::string(what) + " of " + conv.error);
  const Plan &plan = planFor(direction, conv);
  if (stepGraphSkips(StepWork::Convolution,
                     reinterpret_cast<uintptr_t>(&plan) +
                         static_cast<uint64_t>(direction)))
    return;
  Cudnn &dnn = cudnn();
  Driver &cuda = driver();
  if (plan.workspace > dnn.workspaceBytes) {
    check(cuda.cuStreamSynchronize(cuda.stream), "a convolution");
    if (dnn.workspace)
      check(cuda.cuMemFree(dnn.workspace), "freeing cuDNN's workspace");
    check(cuda.cuMemAlloc(&dnn.workspace, plan.workspace),
          "allocating cuDNN's workspace");
    dnn.workspaceBytes = plan.workspace;
  }
  const float one = 1.0f, zero = 0.0f;
  void *workspace = reinterpret_cast<void *>(dnn.workspace);
  DeviceTiming timing("cuDNN", [&] {
    return std::string("convolution ") + nameOf(direction) + " " +
           describeShapes(conv);
  });
  cudnnStatus status = 0;
  switch (direction) {
  case Direction::Forward:
    status = dnn.forward(dnn.handle, &one, plan.x, conv.x, plan.w, conv.filter,
                         plan.conv, plan.algorithm, workspace, plan.workspace,
                         &zero, plan.y, conv.y);
    break;
  case Direction::BackwardData:
    status = dnn.backwardData(dnn.handle, &one, plan.w, conv.filter, plan.y,
                              conv.y, plan.conv, plan.algorithm, workspace,
                              plan.workspace, &zero, plan.x, conv.x);
    break;
  case Direction::BackwardFilter:
    status = dnn.backwardFilter(dnn.handle, &one, plan.x, conv.x, plan.y,
                                conv.y, plan.conv, plan.algorithm, workspace,
                                plan.workspace, &zero, plan.w, conv.filter);
    break;
  }
  checkCudnn(dnn, status,
             std::string("cuDNN's convolution ") + nameOf(direction));
}

} // namespace

extern "C" void parallax_rt_cuda_conv2d_f32(
    int64_t rankX, void *x, int64_t rankW, void *w, int64_t rankY, void *y,
    int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,
    int64_t dilationH, int64_t dilationW, int64_t groups) {
  convolve(Direction::Forward, "a convolution",
           readConvolution2d(rankX, x, rankW, w, rankY, y, strideH, strideW,
                             padH, padW, dilationH, dilationW, groups));
}

extern "C" void parallax_rt_cuda_conv2d_filter_grad_f32(
    int64_t rankX, void *x, int64_t rankDy, void *dy, int64_t rankDw, void *dw,
    int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,
    int64_t dilationH, int64_t dilationW, int64_t groups) {
  convolve(Direction::BackwardFilter, "a convolution's filter gradient",
           readConvolution2d(rankX, x, rankDw, dw, rankDy, dy, strideH, strideW,
                             padH, padW, dilationH, dilationW, groups));
}

extern "C" void parallax_rt_cuda_conv2d_input_grad_f32(
    int64_t rankDy, void *dy, int64_t rankW, void *w, int64_t rankDx, void *dx,
    int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,
    int64_t dilationH, int64_t dilationW, int64_t groups) {
  convolve(Direction::BackwardData, "a convolution's input gradient",
           readConvolution2d(rankDx, dx, rankW, w, rankDy, dy, strideH, strideW,
                             padH, padW, dilationH, dilationW, groups));
}

extern "C" void parallax_rt_cuda_conv3d_f32(
    int64_t rankX, void *x, int64_t rankW, void *w, int64_t rankY, void *y,
    int64_t strideD, int64_t strideH, int64_t strideW, int64_t padD,
    int64_t padH, int64_t padW, int64_t dilationD, int64_t dilationH,
    int64_t dilationW, int64_t groups) {
  convolve(Direction::Forward, "a convolution",
           readConvolution3d(rankX, x, rankW, w, rankY, y, strideD, strideH,
                             strideW, padD, padH, padW, dilationD, dilationH,
                             dilationW, groups));
}

extern "C" void parallax_rt_cuda_conv3d_filter_grad_f32(
    int64_t rankX, void *x, int64_t rankDy, void *dy, int64_t rankDw, void *dw,
    int64_t strideD, int64_t strideH, int64_t strideW, int64_t padD,
    int64_t padH, int64_t padW, int64_t dilationD, int64_t dilationH,
    int64_t dilationW, int64_t groups) {
  convolve(Direction::BackwardFilter, "a convolution's filter gradient",
           readConvolution3d(rankX, x, rankDw, dw, rankDy, dy, strideD, strideH,
                             strideW, padD, padH, padW, dilationD, dilationH,
                             dilationW, groups));
}

extern "C" void parallax_rt_cuda_conv3d_input_grad_f32(
    int64_t rankDy, void *dy, int64_t rankW, void *w, int64_t rankDx, void *dx,
    int64_t strideD, int64_t strideH, int64_t strideW, int64_t padD,
    int64_t padH, int64_t padW, int64_t dilationD, int64_t dilationH,
    int64_t dilationW, int64_t groups) {
  convolve(Direction::BackwardData, "a convolution's input gradient",
           readConvolution3d(rankDx, dx, rankW, w, rankDy, dy, strideD, strideH,
                             strideW, padD, padH, padW, dilationD, dilationH,
                             dilationW, groups));
}
