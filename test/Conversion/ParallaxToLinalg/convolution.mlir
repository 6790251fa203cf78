// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg | FileCheck %s

// A pooling window of at most 16 elements is unrolled into the loop body:
// the input read once per window position, combined elementwise; no
// reduction loop and no initial fill. With strides of 2 or more the
// operands are the input itself through one map per position (one base
// pointer in the kernel); a stride-1 window (output smaller than the
// input) reads one strided slice per position instead.
// CHECK-DAG: #[[P00:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2, d3 * 2)>
// CHECK-DAG: #[[P01:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2, d3 * 2 + 1)>
// CHECK-DAG: #[[P10:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + 1, d3 * 2)>
// CHECK-DAG: #[[P11:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + 1, d3 * 2 + 1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_pool_small_window
// CHECK-NOT: linalg.fill
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic {indexing_maps = [#[[P00]], #[[P01]], #[[P10]], #[[P11]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg0, %arg0, %arg0 : {{.*}}) outs(%{{.*}} : tensor<2x3x4x4xf32>)
// CHECK: ^bb0(%[[VA:.*]]: f32, %[[VB:.*]]: f32, %[[VC:.*]]: f32, %[[VD:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[AB:.*]] = arith.maximumf %[[VA]], %[[VB]]
// CHECK: %[[ABC:.*]] = arith.maximumf %[[AB]], %[[VC]]
// CHECK: %[[ABCD:.*]] = arith.maximumf %[[ABC]], %[[VD]]
// CHECK: linalg.yield %[[ABCD]]
// CHECK-LABEL: func.func @max_pool_stride_one
// CHECK: tensor.extract_slice %arg0[0, 0, 1, 1] [1, 1, 7, 7] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}}) outs(%{{.*}} : tensor<1x1x7x7xf32>)
func.func @max_pool_small_window(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %0 = parallax.pool max %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] : tensor<2x3x8x8xf32>
  return %0 : tensor<2x3x4x4xf32>
}
func.func @max_pool_stride_one(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x7x7xf32> {
  %0 = parallax.pool max %x kernel = [2, 2] strides = [1, 1] pads = [0, 0, 0, 0] : tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x7x7xf32>
}

// -----
// A larger window keeps its reduction loops over a shape-only kernel
// operand, starting from a filled result (-inf for max, 0 for sums).
// CHECK-LABEL: func.func @average_pool_large_window
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x8x8xf32>, tensor<5x5xf32>) outs(%[[INIT]] : tensor<1x1x4x4xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @average_pool_large_window(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32> {
  %0 = parallax.pool average %x kernel = [5, 5] strides = [1, 1] pads = [0, 0, 0, 0] count_include_pad : tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Average pooling without count_include_pad divides by the same window
// sum over padded ones; ceil_mode pads the end for the last window.
// CHECK-LABEL: func.func @average_pool_exclude_pad
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: %[[ONES:.*]] = linalg.fill
// CHECK: tensor.pad %[[ONES]] low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.divf
func.func @average_pool_exclude_pad(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x4x4xf32> {
  %0 = parallax.pool average %x kernel = [2, 2] strides = [2, 2] pads = [1, 1, 1, 1] ceil_mode : tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x4x4xf32>
}
// -----

// An ungrouped f32 convolution whose output is at least as wide as its
// kernel: channel-major patches of the padded input [C*K, N*O] (the
// images inside), one product with the filter [M, C*K] as it is (no copy
// per image), transposed from M x N x O to N x M x O, then the bias.
// CHECK-LABEL: func.func @conv_channel_major
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[PAD]] : tensor<2x3x10x10xf32>) outs(%{{.*}} : tensor<3x3x3x2x8x8xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x27xf32>, tensor<27x128xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<16x2x8x8xf32>) outs(%{{.*}} : tensor<2x16x8x8xf32>) permutation = [1, 0, 2, 3]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x16x8x8xf32>, tensor<16x1x1xf32>)
// CHECK: arith.addf
func.func @conv_channel_major(%x: tensor<2x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<2x16x8x8xf32> {
  %0 = parallax.conv %x, %w, %b strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>
  return %0 : tensor<2x16x8x8xf32>
}

// -----

// A kernel wider than the output: pixel-major patches [N*O, C*K] times the
// filter as [C*K, M], transposed back to N x M x O.
// CHECK-LABEL: func.func @conv_pixel_major
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x2x3x5x5xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x75xf32>, tensor<75x4xf32>)
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
func.func @conv_pixel_major(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x5x5xf32>) -> tensor<1x4x2x2xf32> {
  %0 = parallax.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<1x3x6x6xf32>, tensor<4x3x5x5xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// A grouped (here depthwise) convolution is one linalg.generic; the input
// channel of output feature f is group(f) * C/g + c.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-LABEL: func.func @conv_depthwise
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @conv_depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = parallax.conv %x, %w strides = [2, 2] pads = [1, 1, 0, 0] dilations = [1, 1] groups = 4 : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// The filter gradient reuses the forward's patch layout of the padded
// input, [C*K, N*O]: one product of dy as [M, N*O] with the patches read
// transposed, no per-image products to sum.
// CHECK-LABEL: func.func @filter_gradient
// CHECK: %[[PATCHES:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x3x6x6xf32>) outs(%{{.*}} : tensor<3x3x3x2x4x4xf32>)
// CHECK: %[[COLUMNS:.*]] = tensor.expand_shape {{.*}} into tensor<27x32xf32>
// CHECK: %[[PT:.*]] = linalg.transpose ins(%[[COLUMNS]] : tensor<27x32xf32>) outs(%{{.*}} : tensor<32x27xf32>) permutation = [1, 0]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x4x16xf32>) outs(%{{.*}} : tensor<4x2x16xf32>) permutation = [1, 0, 2]
// CHECK: %[[DY:.*]] = tensor.expand_shape {{.*}} into tensor<4x32xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[DW:.*]] = linalg.matmul ins(%[[DY]], %[[PT]] : tensor<4x32xf32>, tensor<32x27xf32>) outs(%{{.*}} : tensor<4x27xf32>)
// CHECK: tensor.expand_shape {{.*}} : tensor<108xf32> into tensor<4x3x3x3xf32>
func.func @filter_gradient(%x: tensor<2x3x6x6xf32>, %dy: tensor<2x4x4x4xf32>) -> tensor<4x3x3x3xf32> {
  %0 = parallax.conv_filter_grad %x, %dy kernel = [3, 3] strides = [1, 1] dilations = [1, 1] : tensor<2x3x6x6xf32>, tensor<2x4x4x4xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

// Strides and dilations of the forward convolution place the patches.
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4 * 2 + d1 * 2, d5 * 2 + d2 * 2)>
// CHECK-LABEL: func.func @filter_gradient_strided
// CHECK: linalg.generic {indexing_maps = [#[[P]], #{{.*}}], {{.*}} ins(%arg0 : tensor<1x2x9x9xf32>)
func.func @filter_gradient_strided(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x3x3x3xf32>) -> tensor<3x2x3x3xf32> {
  %0 = parallax.conv_filter_grad %x, %dy kernel = [3, 3] strides = [2, 2] dilations = [2, 2] : tensor<1x2x9x9xf32>, tensor<1x3x3x3xf32>
  return %0 : tensor<3x2x3x3xf32>
}

// -----

// A grouped filter gradient is one loop nest over every group: filter f
// of group f / (M/G) reads that group's input channels.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, (d0 floordiv 2) * 3 + d1, d5 * 2 + d2, d6 * 2 + d3)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>
// CHECK-DAG: #[[DW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @filter_gradient_grouped
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[DY]], #[[DW]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<2x6x9x9xf32>, tensor<2x4x4x4xf32>) outs(%{{.*}} : tensor<4x3x3x3xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @filter_gradient_grouped(%x: tensor<2x6x9x9xf32>, %dy: tensor<2x4x4x4xf32>) -> tensor<4x3x3x3xf32> {
  %0 = parallax.conv_filter_grad %x, %dy kernel = [3, 3] strides = [2, 2] dilations = [1, 1] groups = 2 : tensor<2x6x9x9xf32>, tensor<2x4x4x4xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

// The input gradient of an ungrouped convolution (col2im): the filter read
// transposed, [C*K, M], times dy as [M, N*O] (the filter gradient's
// transpose of dy, merged by CSE), then each kernel position's columns
// added into the strided window of the input gradient they came from.
// With stride 2 and a leading pad of 1, kernel position (0, 0) reaches the
// input from output (1, 1) on, at input (1, 1) with step 2.
// CHECK-DAG: #[[TAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0, d0, d2, d3)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @input_gradient_strided
// CHECK: %[[WT:.*]] = linalg.transpose ins(%{{.*}} : tensor<4x27xf32>) outs(%{{.*}} : tensor<27x4xf32>) permutation = [1, 0]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x4x9xf32>) outs(%{{.*}} : tensor<4x2x9xf32>) permutation = [1, 0, 2]
// CHECK: %[[DY:.*]] = tensor.expand_shape {{.*}} into tensor<4x18xf32>
// CHECK: %[[COLS:.*]] = linalg.matmul ins(%[[WT]], %[[DY]] : tensor<27x4xf32>, tensor<4x18xf32>) outs(%{{.*}} : tensor<27x18xf32>)
// CHECK: %[[TAPS:.*]] = tensor.expand_shape {{.*}} into tensor<3x3x3x2x3x3xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<2x3x6x6xf32>
// CHECK: %[[PART:.*]] = tensor.extract_slice %[[TAPS]][0, 0, 0, 0, 1, 1] [3, 1, 1, 2, 2, 2] [1, 1, 1, 1, 1, 1]
// CHECK: %[[WINDOW:.*]] = tensor.extract_slice %[[ZERO]][0, 0, 1, 1] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[TAP]], #[[ID]]], {{.*}} ins(%[[PART]] : tensor<3x1x1x2x2x2xf32>) outs(%[[WINDOW]] : tensor<2x3x2x2xf32>)
// CHECK: arith.addf
// CHECK: tensor.insert_slice %[[SUM]] into %[[ZERO]][0, 0, 1, 1] [2, 3, 2, 2] [1, 1, 2, 2]
// CHECK-COUNT-8: tensor.insert_slice
// CHECK-NOT: tensor.insert_slice
// CHECK: return
func.func @input_gradient_strided(%dy: tensor<2x4x3x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x3x6x6xf32> {
  %0 = parallax.conv_input_grad %dy, %w input_spatial = [6, 6] strides = [2, 2] pads = [1, 1, 0, 0] dilations = [1, 1] : tensor<2x4x3x3xf32>, tensor<4x3x3x3xf32>
  return %0 : tensor<2x3x6x6xf32>
}

// -----

// Kernel positions that only ever meet the padding add nothing: a 3x3
// filter over a 1x1 input padded by 1 has one position, its centre, that
// reaches the input.
// CHECK-LABEL: func.func @input_gradient_one_pixel
// CHECK: linalg.matmul
// CHECK: tensor.extract_slice %{{.*}}[0, 1, 1, 0, 0, 0] [5, 1, 1, 2, 1, 1]
// CHECK-COUNT-1: tensor.insert_slice
// CHECK-NOT: tensor.insert_slice
func.func @input_gradient_one_pixel(%dy: tensor<2x4x1x1xf32>, %w: tensor<4x5x3x3xf32>) -> tensor<2x5x1x1xf32> {
  %0 = parallax.conv_input_grad %dy, %w input_spatial = [1, 1] strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] : tensor<2x4x1x1xf32>, tensor<4x5x3x3xf32>
  return %0 : tensor<2x5x1x1xf32>
}

// -----

// A max pooling's gradient: one kernel over the output counts each
// window's maxima through the forward's maps over the -inf-padded input
// and divides dy by the count; then one kernel per residue class of the
// input positions (mod the stride, per dimension) adds the shares of the
// windows whose maximum the element is. For a 3x3 window of stride 2 and
// pads of 1 over 8x8: the even rows and columns of the padded input
// (odd ones of the input) get window elements 0 and 2 along each axis,
// four in all; the odd ones one. Y and the shares are padded with one
// window of zeros after the last, where element 2 of an 8th window would
// be. Every class reads and writes its strided part of a zero-filled dX.
// (Three channels: NCHW throughout.)
// CHECK-DAG: #[[W00:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2, d3 * 2)>
// CHECK-DAG: #[[W22:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + 2, d3 * 2 + 2)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_pool_grad
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>, %[[Y:.*]]: tensor<2x3x4x4xf32>, %[[DY:.*]]: tensor<2x3x4x4xf32>)
// CHECK: %[[PADDED:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[SHARES:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[W00]], {{.*}}, #[[W22]], #[[ID]]], {{.*}} ins(%[[Y]], %[[DY]], %[[PADDED]], %[[PADDED]], %[[PADDED]], %[[PADDED]], %[[PADDED]], %[[PADDED]], %[[PADDED]], %[[PADDED]], %[[PADDED]] : {{.*}})
// CHECK-COUNT-9: arith.cmpf oeq
// CHECK: arith.divf
// CHECK: %[[PY:.*]] = tensor.pad %[[Y]] low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: %[[PS:.*]] = tensor.pad %[[SHARES]] low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: %[[ZEROS:.*]] = linalg.fill
// The class of input rows and columns 1, 3, 5, 7: windows 1..4 at
// element 0 and windows 0..3 at element 2, along each axis.
// CHECK: %[[XA:.*]] = tensor.extract_slice %[[X]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[PY]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[PS]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[PY]][0, 0, 1, 0]
// CHECK: tensor.extract_slice %[[PY]][0, 0, 0, 1]
// CHECK: tensor.extract_slice %[[PY]][0, 0, 0, 0]
// CHECK: %[[DXA:.*]] = tensor.extract_slice %[[ZEROS]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: linalg.generic {{.*}} ins(%[[XA]], {{.*}}) outs(%[[DXA]] : tensor<2x3x4x4xf32>)
// CHECK: ^bb0(%[[XV:[^:]*]]: f32, %[[Y0:[^:]*]]: f32, %[[S0:[^:]*]]: f32, {{.*}}, %[[OUT:[^:]*]]: f32):
// CHECK: %[[HIT:.*]] = arith.cmpf oeq, %[[XV]], %[[Y0]]
// CHECK: %[[ADD:.*]] = arith.addf %[[OUT]], %[[S0]]
// CHECK: arith.select %[[HIT]], %[[ADD]], %[[OUT]]
// CHECK-COUNT-3: arith.select
// CHECK: %[[R1:.*]] = tensor.insert_slice %{{.*}} into %[[ZEROS]][0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[X]][0, 0, 1, 0] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: tensor.insert_slice %{{.*}} into %[[R1]][0, 0, 1, 0] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 1] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: %[[LAST:.*]] = tensor.insert_slice %{{.*}}[0, 0, 0, 0] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[LAST]]
func.func @max_pool_grad(%x: tensor<2x3x8x8xf32>, %y: tensor<2x3x4x4xf32>, %dy: tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32> {
  %dx = parallax.max_pool_grad %x, %y, %dy kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
  return %dx : tensor<2x3x8x8xf32>
}

// -----

// With 16 channels or more, the same passes run over NHWC copies of X, Y
// and dY (the channels innermost: every operand a run along the
// channels), and dX is transposed back.
// CHECK-DAG: #[[CW00:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2, d2 * 2, d3)>
// CHECK-DAG: #[[CW22:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2 + 2, d2 * 2 + 2, d3)>
// CHECK-DAG: #[[CID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_pool_grad_channels_last
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x8x8xf32>, %[[Y:.*]]: tensor<2x16x4x4xf32>, %[[DY:.*]]: tensor<2x16x4x4xf32>)
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<2x16x8x8xf32>) outs(%{{.*}} : tensor<2x8x8x16xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[YT:.*]] = linalg.transpose ins(%[[Y]] : {{.*}}) permutation = [0, 2, 3, 1]
// CHECK: %[[DYT:.*]] = linalg.transpose ins(%[[DY]] : {{.*}}) permutation = [0, 2, 3, 1]
// CHECK: %[[PADDED:.*]] = tensor.pad %[[XT]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: %[[SHARES:.*]] = linalg.generic {indexing_maps = [#[[CID]], #[[CID]], #[[CW00]], {{.*}}, #[[CW22]], #[[CID]]], {{.*}} ins(%[[YT]], %[[DYT]], %[[PADDED]],
// CHECK-SAME: outs(%{{.*}} : tensor<2x4x4x16xf32>)
// CHECK: %[[PY:.*]] = tensor.pad %[[YT]] low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: %[[PS:.*]] = tensor.pad %[[SHARES]] low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}}) outs(%{{.*}} : tensor<2x8x8x16xf32>)
// CHECK: %[[XA:.*]] = tensor.extract_slice %[[XT]][0, 1, 1, 0] [2, 4, 4, 16] [1, 2, 2, 1]
// CHECK: tensor.extract_slice %[[PY]][0, 1, 1, 0] [2, 4, 4, 16] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[PS]][0, 1, 1, 0] [2, 4, 4, 16] [1, 1, 1, 1]
// CHECK: %[[DXA:.*]] = tensor.extract_slice %[[ZEROS]][0, 1, 1, 0] [2, 4, 4, 16] [1, 2, 2, 1]
// CHECK: linalg.generic {{.*}} ins(%[[XA]], {{.*}}) outs(%[[DXA]] : tensor<2x4x4x16xf32>)
// CHECK-COUNT-4: arith.cmpf oeq
// CHECK: %[[R1:.*]] = tensor.insert_slice %{{.*}} into %[[ZEROS]][0, 1, 1, 0] [2, 4, 4, 16] [1, 2, 2, 1]
// CHECK: tensor.insert_slice %{{.*}} into %[[R1]][0, 1, 0, 0] [2, 4, 4, 16] [1, 2, 2, 1]
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 1, 0] [2, 4, 4, 16] [1, 2, 2, 1]
// CHECK: %[[LAST:.*]] = tensor.insert_slice %{{.*}}[0, 0, 0, 0] [2, 4, 4, 16] [1, 2, 2, 1]
// CHECK: %[[DX:.*]] = linalg.transpose ins(%[[LAST]] : tensor<2x8x8x16xf32>) outs(%{{.*}} : tensor<2x16x8x8xf32>) permutation = [0, 3, 1, 2]
// CHECK: return %[[DX]]
func.func @max_pool_grad_channels_last(%x: tensor<2x16x8x8xf32>, %y: tensor<2x16x4x4xf32>, %dy: tensor<2x16x4x4xf32>) -> tensor<2x16x8x8xf32> {
  %dx = parallax.max_pool_grad %x, %y, %dy kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] : tensor<2x16x8x8xf32>, tensor<2x16x4x4xf32>
  return %dx : tensor<2x16x8x8xf32>
}

// -----

// A stride longer than the window (2 of 3 positions): positions no window
// reaches (every third row and column) are left at 0, and positions a
// window reaches get one element each. A window of more than 16 elements
// counts its maxima in a reduction loop, then divides.
// CHECK-LABEL: func.func @max_pool_grad_gapped
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-NOT: reduction
// CHECK: linalg.fill
// CHECK-COUNT-2: tensor.insert_slice %{{.*}} [1, 1, 2] [1, 1, 3]
// CHECK-NOT: tensor.insert_slice
func.func @max_pool_grad_gapped(%x: tensor<1x1x6xf32>, %y: tensor<1x1x2xf32>, %dy: tensor<1x1x2xf32>) -> tensor<1x1x6xf32> {
  %dx = parallax.max_pool_grad %x, %y, %dy kernel = [2] strides = [3] pads = [0, 0] : tensor<1x1x6xf32>, tensor<1x1x2xf32>
  return %dx : tensor<1x1x6xf32>
}
// CHECK-LABEL: func.func @max_pool_grad_large_window
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @max_pool_grad_large_window(%x: tensor<1x1x8x8xf32>, %y: tensor<1x1x4x4xf32>, %dy: tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32> {
  %dx = parallax.max_pool_grad %x, %y, %dy kernel = [5, 5] strides = [1, 1] pads = [0, 0, 0, 0] : tensor<1x1x8x8xf32>, tensor<1x1x4x4xf32>
  return %dx : tensor<1x1x8x8xf32>
}
