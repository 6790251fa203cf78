// RUN: parallax-opt %s --split-input-file --parallax-gpu-library-convolutions | FileCheck %s
// RUN: parallax-opt %s --split-input-file --parallax-gpu-library-convolutions=cudnn=false | FileCheck %s --check-prefix=SIM
// RUN: parallax-opt %s --split-input-file --parallax-gpu-library-convolutions --one-shot-bufferize="bufferize-function-boundaries allow-unknown-ops" | FileCheck %s --check-prefix=BUFFERS
// RUN: parallax-opt %s --split-input-file --parallax-gpu-library-convolutions --convert-parallax-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=VIEWS

// A padded, strided convolution with a bias: cuDNN's forward convolution
// into a fresh tensor, then the bias added along the channels in place.
// CHECK: func.func private @parallax_rt_cuda_conv2d_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @forward
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x16x4x4xf32>
// CHECK: %[[Y:.*]] = parallax.library_call @parallax_rt_cuda_conv2d_f32(%arg0, %arg1) outs(%[[INIT]]) scalars = [2, 2, 1, 1, 1, 1, 1] : (tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<2x16x4x4xf32>
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<16xf32>) outs(%[[Y]] : tensor<2x16x4x4xf32>)
// CHECK: arith.addf
// CHECK: return %[[B]]
// CHECK-NOT: parallax.conv
// SIM-LABEL: func.func @forward
// SIM: parallax.library_call @parallax_rt_conv2d_f32(
// SIM-NOT: cuda
// Bufferized: the call reads the operands' buffers and writes a fresh one.
// BUFFERS-LABEL: func.func @forward
// BUFFERS: %[[OUT:.*]] = memref.alloc() {{.*}}: memref<2x16x4x4xf32>
// BUFFERS: %[[O:.*]] = memref.cast %[[OUT]] : memref<2x16x4x4xf32> to memref<*xf32>
// BUFFERS: call @parallax_rt_cuda_conv2d_f32(%{{.*}}, %{{.*}}, %[[O]], %c2_i64, %c2_i64_{{[0-9]+}}, %c1_i64
// BUFFERS: linalg.generic {{.*}} outs(%[[OUT]] : memref<2x16x4x4xf32>)
func.func @forward(%x: tensor<2x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  %y = parallax.conv %x, %w, %b strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 1
      : tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>
  return %y : tensor<2x16x4x4xf32>
}

// -----

// The filter gradient autodiff writes on a zero-padded input: cuDNN pads
// the input itself, and the pad goes. A depthwise one keeps its groups.
// CHECK-LABEL: func.func @filter_grad
// CHECK-NOT: parallax.pad
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_filter_grad_f32(%arg0, %arg1) outs(%{{.*}}) scalars = [1, 1, 1, 1, 1, 1, 8] : (tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>) -> tensor<8x1x3x3xf32>
// CHECK-NOT: parallax.
// SIM-LABEL: func.func @filter_grad
// SIM: parallax.library_call @parallax_rt_conv2d_filter_grad_f32(
func.func @filter_grad(%x: tensor<2x8x6x6xf32>, %dy: tensor<2x8x6x6xf32>) -> tensor<8x1x3x3xf32> {
  %p = parallax.pad constant %x low = [0, 0, 1, 1] high = [0, 0, 1, 1] value = 0.0 : tensor<2x8x6x6xf32>
  %dw = parallax.conv_filter_grad %p, %dy kernel = [3, 3] strides = [1, 1] dilations = [1, 1] groups = 8
      : tensor<2x8x8x8xf32>, tensor<2x8x6x6xf32>
  return %dw : tensor<8x1x3x3xf32>
}

// -----

// Asymmetric pads: with a trailing pad of 0 the output has 5 rows, where
// cuDNN's leading pad at both ends would give 6: the padded input stays,
// read with no pads.
// CHECK-LABEL: func.func @asymmetric_filter_grad
// CHECK: %[[P:.*]] = parallax.pad constant %arg0
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_filter_grad_f32(%[[P]], %arg1) outs(%{{.*}}) scalars = [1, 1, 0, 0, 1, 1, 1]
func.func @asymmetric_filter_grad(%x: tensor<1x2x6x6xf32>, %dy: tensor<1x4x5x5xf32>) -> tensor<4x2x3x3xf32> {
  %p = parallax.pad constant %x low = [0, 0, 1, 1] high = [0, 0, 0, 0] value = 0.0 : tensor<1x2x6x6xf32>
  %dw = parallax.conv_filter_grad %p, %dy kernel = [3, 3] strides = [1, 1] dilations = [1, 1]
      : tensor<1x2x7x7xf32>, tensor<1x4x5x5xf32>
  return %dw : tensor<4x2x3x3xf32>
}

// -----

// A strided input gradient: cuDNN's backward data, one group.
// CHECK-LABEL: func.func @input_grad
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_input_grad_f32(%arg0, %arg1) outs(%{{.*}}) scalars = [2, 2, 1, 1, 1, 1, 1] : (tensor<2x16x4x4xf32>, tensor<16x3x3x3xf32>) -> tensor<2x3x8x8xf32>
// SIM-LABEL: func.func @input_grad
// SIM: parallax.library_call @parallax_rt_conv2d_input_grad_f32(
func.func @input_grad(%dy: tensor<2x16x4x4xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<2x3x8x8xf32> {
  %dx = parallax.conv_input_grad %dy, %w input_spatial = [8, 8] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1]
      : tensor<2x16x4x4xf32>, tensor<16x3x3x3xf32>
  return %dx : tensor<2x3x8x8xf32>
}

// -----

// The input gradient of an unstrided convolution, as autodiff writes it:
// the transposed convolution of dY padded by reach - pad (2 - 1) with the
// filter flipped and each group's channels swapped. It is cuDNN's
// backward data with the forward pad: the padded copy of dY and the
// filter's copies go. Depthwise (groups = 16) alike.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: parallax.
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_input_grad_f32(%arg0, %arg1) outs(%{{.*}}) scalars = [1, 1, 1, 1, 1, 1, 1] : (tensor<4x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<4x8x8x8xf32>
// CHECK-NOT: parallax.
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_input_grad_f32(%arg2, %arg3) outs(%{{.*}}) scalars = [1, 1, 1, 1, 1, 1, 16] : (tensor<4x16x4x4xf32>, tensor<16x1x3x3xf32>) -> tensor<4x16x4x4xf32>
// CHECK-NOT: parallax.
func.func @transposed(%dy: tensor<4x16x8x8xf32>, %w: tensor<16x8x3x3xf32>,
                      %dz: tensor<4x16x4x4xf32>, %v: tensor<16x1x3x3xf32>)
    -> (tensor<4x8x8x8xf32>, tensor<4x16x4x4xf32>) {
  %p = parallax.pad constant %dy low = [0, 0, 1, 1] high = [0, 0, 1, 1] : tensor<4x16x8x8xf32>
  %f = parallax.slice %w offsets = [0, 0, 2, 2] sizes = [16, 8, 3, 3] strides = [1, 1, -1, -1] : tensor<16x8x3x3xf32>
  %g = parallax.reshape %f : tensor<16x8x3x3xf32> -> tensor<1x16x8x3x3xf32>
  %t = parallax.transpose %g permutation = [0, 2, 1, 3, 4] : tensor<1x16x8x3x3xf32>
  %s = parallax.reshape %t : tensor<1x8x16x3x3xf32> -> tensor<8x16x3x3xf32>
  %dx = parallax.conv %p, %s strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1
      : tensor<4x16x10x10xf32>, tensor<8x16x3x3xf32>
  %p2 = parallax.pad constant %dz low = [0, 0, 1, 1] high = [0, 0, 1, 1] : tensor<4x16x4x4xf32>
  %f2 = parallax.slice %v offsets = [0, 0, 2, 2] sizes = [16, 1, 3, 3] strides = [1, 1, -1, -1] : tensor<16x1x3x3xf32>
  %g2 = parallax.reshape %f2 : tensor<16x1x3x3xf32> -> tensor<16x1x1x3x3xf32>
  %t2 = parallax.transpose %g2 permutation = [0, 2, 1, 3, 4] : tensor<16x1x1x3x3xf32>
  %s2 = parallax.reshape %t2 : tensor<16x1x1x3x3xf32> -> tensor<16x1x3x3xf32>
  %dz2 = parallax.conv %p2, %s2 strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 16
      : tensor<4x16x6x6xf32>, tensor<16x1x3x3xf32>
  return %dx, %dz2 : tensor<4x8x8x8xf32>, tensor<4x16x4x4xf32>
}

// -----

// A strided depthwise convolution's input gradient: autodiff dilates dY by
// the strides first (per dimension a unit dimension inserted, padded with
// stride - 1 zeros, merged, the trailing zeros sliced off; here from a
// 2-d dY, the reshapes folded into one), which cuDNN's backward data takes
// as its strides instead.
// CHECK-LABEL: func.func @transposed_strided
// CHECK: %[[DY:.*]] = parallax.reshape %arg0 : tensor<4x16xf32> -> tensor<4x16x1x1xf32>
// CHECK-NOT: parallax.pad
// CHECK-NOT: parallax.slice
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_input_grad_f32(%[[DY]], %arg1) outs(%{{.*}}) scalars = [2, 2, 1, 1, 1, 1, 16] : (tensor<4x16x1x1xf32>, tensor<16x1x3x3xf32>) -> tensor<4x16x2x2xf32>
func.func @transposed_strided(%dy: tensor<4x16xf32>, %w: tensor<16x1x3x3xf32>) -> tensor<4x16x2x2xf32> {
  %a = parallax.reshape %dy : tensor<4x16xf32> -> tensor<4x16x1x1x1xf32>
  %b = parallax.pad constant %a low = [0, 0, 0, 0, 0] high = [0, 0, 0, 1, 0] : tensor<4x16x1x1x1xf32>
  %c = parallax.reshape %b : tensor<4x16x1x2x1xf32> -> tensor<4x16x2x1xf32>
  %d = parallax.slice %c offsets = [0, 0, 0, 0] sizes = [4, 16, 1, 1] strides = [1, 1, 1, 1] : tensor<4x16x2x1xf32>
  %e = parallax.reshape %d : tensor<4x16x1x1xf32> -> tensor<4x16x1x1x1xf32>
  %f = parallax.pad constant %e low = [0, 0, 0, 0, 0] high = [0, 0, 0, 0, 1] : tensor<4x16x1x1x1xf32>
  %g = parallax.reshape %f : tensor<4x16x1x1x2xf32> -> tensor<4x16x1x2xf32>
  %h = parallax.slice %g offsets = [0, 0, 0, 0] sizes = [4, 16, 1, 1] strides = [1, 1, 1, 1] : tensor<4x16x1x2xf32>
  %p = parallax.pad constant %h low = [0, 0, 1, 1] high = [0, 0, 2, 2] : tensor<4x16x1x1xf32>
  %fl = parallax.slice %w offsets = [0, 0, 2, 2] sizes = [16, 1, 3, 3] strides = [1, 1, -1, -1] : tensor<16x1x3x3xf32>
  %gr = parallax.reshape %fl : tensor<16x1x3x3xf32> -> tensor<16x1x1x3x3xf32>
  %t = parallax.transpose %gr permutation = [0, 2, 1, 3, 4] : tensor<16x1x1x3x3xf32>
  %s = parallax.reshape %t : tensor<16x1x1x3x3xf32> -> tensor<16x1x3x3xf32>
  %dx = parallax.conv %p, %s strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 16
      : tensor<4x16x4x4xf32>, tensor<16x1x3x3xf32>
  return %dx : tensor<4x16x2x2xf32>
}

// -----

// Not a flipped filter (the slice keeps the taps' order): a forward
// convolution like any other.
// CHECK-LABEL: func.func @not_transposed
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_f32(
func.func @not_transposed(%dy: tensor<4x16x8x8xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<4x8x8x8xf32> {
  %p = parallax.pad constant %dy low = [0, 0, 1, 1] high = [0, 0, 1, 1] : tensor<4x16x8x8xf32>
  %f = parallax.slice %w offsets = [0, 0, 0, 0] sizes = [16, 8, 3, 3] strides = [1, 1, 1, 1] : tensor<16x8x3x3xf32>
  %g = parallax.reshape %f : tensor<16x8x3x3xf32> -> tensor<1x16x8x3x3xf32>
  %t = parallax.transpose %g permutation = [0, 2, 1, 3, 4] : tensor<1x16x8x3x3xf32>
  %s = parallax.reshape %t : tensor<1x8x16x3x3xf32> -> tensor<8x16x3x3xf32>
  %dx = parallax.conv %p, %s strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1
      : tensor<4x16x10x10xf32>, tensor<8x16x3x3xf32>
  return %dx : tensor<4x8x8x8xf32>
}

// -----

// A strided view as an operand: bufferization reads it through a
// contiguous copy, as the runtime needs.
// BUFFERS-LABEL: func.func @strided_operand
// BUFFERS: %[[VIEW:.*]] = memref.subview
// BUFFERS: %[[COPY:.*]] = memref.alloc() {{.*}}: memref<1x1x4x4xf32>
// BUFFERS: memref.copy %[[VIEW]], %[[COPY]]
// BUFFERS: %[[C:.*]] = memref.cast %[[COPY]] : memref<1x1x4x4xf32> to memref<*xf32>
// BUFFERS: call @parallax_rt_cuda_conv2d_f32(%[[C]],
func.func @strided_operand(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %v = tensor.extract_slice %x[0, 0, 0, 0] [1, 1, 4, 4] [1, 1, 2, 2] : tensor<1x1x8x8xf32> to tensor<1x1x4x4xf32>
  %y = parallax.conv %v, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1
      : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

// A 1-d convolution is a 2-d one of unit height, as PyTorch runs it on
// cuDNN: its operands and result reshaped to [N, C, 1, W] (views once
// bufferized), H's stride and dilation 1 and its pad 0.
// CHECK-LABEL: func.func @forward_1d
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4x1x4xf32>
// CHECK: %[[X:.*]] = parallax.reshape %arg0 : tensor<2x3x8xf32> -> tensor<2x3x1x8xf32>
// CHECK: %[[W:.*]] = parallax.reshape %arg1 : tensor<4x3x3xf32> -> tensor<4x3x1x3xf32>
// CHECK: %[[Y:.*]] = parallax.library_call @parallax_rt_cuda_conv2d_f32(%[[X]], %[[W]]) outs(%[[INIT]]) scalars = [1, 2, 0, 1, 1, 1, 1] : (tensor<2x3x1x8xf32>, tensor<4x3x1x3xf32>) -> tensor<2x4x1x4xf32>
// CHECK: %[[Y1:.*]] = parallax.reshape %[[Y]] : tensor<2x4x1x4xf32> -> tensor<2x4x4xf32>
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<4xf32>) outs(%[[Y1]] : tensor<2x4x4xf32>)
// CHECK: return %[[B]]
// SIM-LABEL: func.func @forward_1d
// SIM: parallax.library_call @parallax_rt_conv2d_f32(
// VIEWS-LABEL: func.func @forward_1d
// VIEWS-NOT: memref.copy
// VIEWS: %[[X:.*]] = memref.expand_shape {{.*}} into memref<2x3x1x8xf32>
// VIEWS-NOT: memref.copy
// VIEWS: %[[W:.*]] = memref.expand_shape {{.*}} into memref<4x3x1x3xf32>
// VIEWS-NOT: memref.copy
// VIEWS: %[[XC:.*]] = memref.cast %[[X]]
// VIEWS: %[[WC:.*]] = memref.cast %[[W]]
// VIEWS: call @parallax_rt_cuda_conv2d_f32(%[[XC]], %[[WC]],
// VIEWS-NOT: memref.copy
// VIEWS: return
func.func @forward_1d(%x: tensor<2x3x8xf32>, %w: tensor<4x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x4xf32> {
  %y = parallax.conv %x, %w, %b strides = [2] pads = [1, 1] dilations = [1] groups = 1
      : tensor<2x3x8xf32>, tensor<4x3x3xf32>, tensor<4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

// A 1-d filter gradient of a zero-padded input (cuDNN pads it) and a 1-d
// strided input gradient.
// CHECK-LABEL: func.func @gradients_1d
// CHECK-NOT: parallax.pad
// CHECK: %[[X:.*]] = parallax.reshape %arg0 : tensor<2x4x6xf32> -> tensor<2x4x1x6xf32>
// CHECK: %[[DY:.*]] = parallax.reshape %arg1 : tensor<2x8x6xf32> -> tensor<2x8x1x6xf32>
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_filter_grad_f32(%[[X]], %[[DY]]) outs(%{{.*}}) scalars = [1, 1, 0, 1, 1, 1, 1] : (tensor<2x4x1x6xf32>, tensor<2x8x1x6xf32>) -> tensor<8x4x1x3xf32>
// CHECK: parallax.reshape %{{.*}} : tensor<8x4x1x3xf32> -> tensor<8x4x3xf32>
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_input_grad_f32(%{{.*}}, %{{.*}}) outs(%{{.*}}) scalars = [1, 2, 0, 1, 1, 1, 1] : (tensor<2x16x1x4xf32>, tensor<16x3x1x3xf32>) -> tensor<2x3x1x8xf32>
// CHECK: parallax.reshape %{{.*}} : tensor<2x3x1x8xf32> -> tensor<2x3x8xf32>
func.func @gradients_1d(%x: tensor<2x4x6xf32>, %dy: tensor<2x8x6xf32>,
                        %dz: tensor<2x16x4xf32>, %w: tensor<16x3x3xf32>)
    -> (tensor<8x4x3xf32>, tensor<2x3x8xf32>) {
  %p = parallax.pad constant %x low = [0, 0, 1] high = [0, 0, 1] value = 0.0 : tensor<2x4x6xf32>
  %dw = parallax.conv_filter_grad %p, %dy kernel = [3] strides = [1] dilations = [1]
      : tensor<2x4x8xf32>, tensor<2x8x6xf32>
  %dx = parallax.conv_input_grad %dz, %w input_spatial = [8] strides = [2] pads = [1, 1] dilations = [1]
      : tensor<2x16x4xf32>, tensor<16x3x3xf32>
  return %dw, %dx : tensor<8x4x3xf32>, tensor<2x3x8xf32>
}

// -----

// A strided depthwise 1-d convolution's input gradient as autodiff writes
// it (dY dilated by the stride, padded, convolved with the flipped filter
// whose channels each group swaps): cuDNN's backward data with stride 2.
// CHECK-LABEL: func.func @transposed_strided_1d
// CHECK-NOT: parallax.pad
// CHECK-NOT: parallax.slice
// CHECK-NOT: parallax.transpose
// CHECK: %[[DY:.*]] = parallax.reshape %arg0 : tensor<4x16x3xf32> -> tensor<4x16x1x3xf32>
// CHECK: %[[W:.*]] = parallax.reshape %arg1 : tensor<16x1x3xf32> -> tensor<16x1x1x3xf32>
// CHECK: parallax.library_call @parallax_rt_cuda_conv2d_input_grad_f32(%[[DY]], %[[W]]) outs(%{{.*}}) scalars = [1, 2, 0, 1, 1, 1, 16] : (tensor<4x16x1x3xf32>, tensor<16x1x1x3xf32>) -> tensor<4x16x1x6xf32>
// CHECK-NOT: parallax.conv
func.func @transposed_strided_1d(%dy: tensor<4x16x3xf32>, %w: tensor<16x1x3xf32>) -> tensor<4x16x6xf32> {
  %a = parallax.reshape %dy : tensor<4x16x3xf32> -> tensor<4x16x3x1xf32>
  %b = parallax.pad constant %a low = [0, 0, 0, 0] high = [0, 0, 0, 1] : tensor<4x16x3x1xf32>
  %c = parallax.reshape %b : tensor<4x16x3x2xf32> -> tensor<4x16x6xf32>
  %d = parallax.slice %c offsets = [0, 0, 0] sizes = [4, 16, 5] strides = [1, 1, 1] : tensor<4x16x6xf32>
  %p = parallax.pad constant %d low = [0, 0, 1] high = [0, 0, 2] : tensor<4x16x5xf32>
  %fl = parallax.slice %w offsets = [0, 0, 2] sizes = [16, 1, 3] strides = [1, 1, -1] : tensor<16x1x3xf32>
  %gr = parallax.reshape %fl : tensor<16x1x3xf32> -> tensor<16x1x1x3xf32>
  %t = parallax.transpose %gr permutation = [0, 2, 1, 3] : tensor<16x1x1x3xf32>
  %s = parallax.reshape %t : tensor<16x1x1x3xf32> -> tensor<16x1x3xf32>
  %dx = parallax.conv %p, %s strides = [1] pads = [0, 0] dilations = [1] groups = 16
      : tensor<4x16x8xf32>, tensor<16x1x3xf32>
  return %dx : tensor<4x16x6xf32>
}

// -----

// A 3-d convolution with a bias and its gradients: the conv3d calls,
// with D's stride, pad and dilation first.
// CHECK-LABEL: func.func @volumes
// CHECK: parallax.library_call @parallax_rt_cuda_conv3d_f32(%arg0, %arg1) outs(%{{.*}}) scalars = [1, 2, 2, 1, 1, 1, 1, 1, 1, 1] : (tensor<2x3x5x8x8xf32>, tensor<4x3x3x3x3xf32>) -> tensor<2x4x5x4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%arg2 : tensor<4xf32>) outs(%{{.*}} : tensor<2x4x5x4x4xf32>)
// CHECK: parallax.library_call @parallax_rt_cuda_conv3d_filter_grad_f32(%arg0, %arg3) outs(%{{.*}}) scalars = [1, 2, 2, 1, 1, 1, 1, 1, 1, 1] : (tensor<2x3x5x8x8xf32>, tensor<2x4x5x4x4xf32>) -> tensor<4x3x3x3x3xf32>
// CHECK: parallax.library_call @parallax_rt_cuda_conv3d_input_grad_f32(%arg3, %arg1) outs(%{{.*}}) scalars = [1, 2, 2, 1, 1, 1, 1, 1, 1, 1] : (tensor<2x4x5x4x4xf32>, tensor<4x3x3x3x3xf32>) -> tensor<2x3x5x8x8xf32>
// CHECK-NOT: parallax.pad
// SIM-LABEL: func.func @volumes
// SIM: parallax.library_call @parallax_rt_conv3d_f32(
// SIM: parallax.library_call @parallax_rt_conv3d_filter_grad_f32(
// SIM: parallax.library_call @parallax_rt_conv3d_input_grad_f32(
func.func @volumes(%x: tensor<2x3x5x8x8xf32>, %w: tensor<4x3x3x3x3xf32>, %b: tensor<4xf32>,
                   %dy: tensor<2x4x5x4x4xf32>)
    -> (tensor<2x4x5x4x4xf32>, tensor<4x3x3x3x3xf32>, tensor<2x3x5x8x8xf32>) {
  %y = parallax.conv %x, %w, %b strides = [1, 2, 2] pads = [1, 1, 1, 1, 1, 1] dilations = [1, 1, 1] groups = 1
      : tensor<2x3x5x8x8xf32>, tensor<4x3x3x3x3xf32>, tensor<4xf32>
  %p = parallax.pad constant %x low = [0, 0, 1, 1, 1] high = [0, 0, 1, 1, 1] value = 0.0 : tensor<2x3x5x8x8xf32>
  %dw = parallax.conv_filter_grad %p, %dy kernel = [3, 3, 3] strides = [1, 2, 2] dilations = [1, 1, 1]
      : tensor<2x3x7x10x10xf32>, tensor<2x4x5x4x4xf32>
  %dx = parallax.conv_input_grad %dy, %w input_spatial = [5, 8, 8] strides = [1, 2, 2] pads = [1, 1, 1, 1, 1, 1] dilations = [1, 1, 1]
      : tensor<2x4x5x4x4xf32>, tensor<4x3x3x3x3xf32>
  return %y, %dw, %dx : tensor<2x4x5x4x4xf32>, tensor<4x3x3x3x3xf32>, tensor<2x3x5x8x8xf32>
}

// -----

// What cuDNN's geometry cannot express stays for the linalg lowering: f64,
// and trailing pads that change the output (here a leading pad of 0 and a
// trailing pad of 2: 6 columns, where 0 at both ends gives 4).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: parallax.conv
// CHECK-NOT: library_call
func.func @left_alone(%x2: tensor<1x1x4x4xf64>, %w2: tensor<1x1x3x3xf64>,
                      %x3: tensor<1x1x6x6xf32>, %w3: tensor<1x1x3x3xf32>)
    -> (tensor<1x1x2x2xf64>, tensor<1x1x4x6xf32>) {
  %b = parallax.conv %x2, %w2 strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1
      : tensor<1x1x4x4xf64>, tensor<1x1x3x3xf64>
  %c = parallax.conv %x3, %w3 strides = [1, 1] pads = [0, 0, 0, 2] dilations = [1, 1] groups = 1
      : tensor<1x1x6x6xf32>, tensor<1x1x3x3xf32>
  return %b, %c : tensor<1x1x2x2xf64>, tensor<1x1x4x6xf32>
}
