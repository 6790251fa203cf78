// RUN: parallax-opt %s --split-input-file --parallax-collapse-loop-dims --canonicalize | FileCheck %s

// An elementwise op with a per-channel operand: the channel operand's unit
// dimensions go, then n stays apart (the channel sits between n and the
// pixels) and h, w merge into one loop of 256.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @bias_add
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<64x8x16x16xf32> into tensor<64x8x256xf32>
// CHECK-DAG: %[[B:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1, 2]] : tensor<8x1x1xf32> into tensor<8xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[B]] : tensor<64x8x256xf32>, tensor<8xf32>)
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0], [1], [2, 3]] output_shape [64, 8, 16, 16]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch4 = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @bias_add(%x: tensor<64x8x16x16xf32>, %b: tensor<8x1x1xf32>) -> tensor<64x8x16x16xf32> {
  %e = tensor.empty() : tensor<64x8x16x16xf32>
  %r = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : tensor<64x8x16x16xf32>, tensor<8x1x1xf32>) outs(%e : tensor<64x8x16x16xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<64x8x16x16xf32>
  return %r : tensor<64x8x16x16xf32>
}

// -----

// A per-channel sum over (n, h, w): the two pixel loops become one
// reduction loop of 256; the parallel channel loop between n and h keeps
// n apart.
// CHECK-LABEL: func.func @channel_sum
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<4x8x16x16xf32> into tensor<4x8x256xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]} ins(%{{.*}} : tensor<4x8x256xf32>) outs(%{{.*}} : tensor<8xf32>)
#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @channel_sum(%x: tensor<4x8x16x16xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : tensor<4x8x16x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Left alone: a convolution window (not a projected permutation) ...
// CHECK-LABEL: func.func @window
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
#win = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
#col = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5, d2, d3)>
func.func @window(%x: tensor<2x3x6x6xf32>) -> tensor<2x3x3x3x4x4xf32> {
  %e = tensor.empty() : tensor<2x3x3x3x4x4xf32>
  %r = linalg.generic {indexing_maps = [#win, #col], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x6x6xf32>) outs(%e : tensor<2x3x3x3x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x3x3x4x4xf32>
  return %r : tensor<2x3x3x3x4x4xf32>
}

// -----

// ... and a body that reads its loop indices.
// CHECK-LABEL: func.func @indexed
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK: linalg.index 1
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @indexed(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// ... and an op reading strided slices (pooling windows): collapsing them
// would copy each view into a contiguous buffer.
// CHECK-LABEL: func.func @slices
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @slices(%x: tensor<8x8xf32>) -> tensor<4x4xf32> {
  %a = tensor.extract_slice %x[0, 0] [4, 4] [2, 2] : tensor<8x8xf32> to tensor<4x4xf32>
  %b = tensor.extract_slice %x[0, 1] [4, 4] [2, 2] : tensor<8x8xf32> to tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %m = arith.maximumf %u, %v : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// The im2col of a 3x3 stride-2 convolution with a 1x1 output (ResNet-18's
// last blocks on 32x32 images): the output's unit loops oh, ow sit inside
// the input's window indices (2 * oh + kh), so they stay. Dropping them
// would leave kh alone indexing the 4-high input, an invalid generic.
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>
// CHECK-LABEL: func.func @window_of_unit_output
// CHECK: linalg.generic {indexing_maps = [#[[WIN]], #{{.*}}], {{.*}} ins(%arg0 : tensor<32x256x4x4xf32>) outs(%{{.*}} : tensor<32x1x1x256x3x3xf32>)
#win = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
func.func @window_of_unit_output(%x: tensor<32x256x4x4xf32>) -> tensor<32x1x1x256x3x3xf32> {
  %e = tensor.empty() : tensor<32x1x1x256x3x3xf32>
  %r = linalg.generic {indexing_maps = [#win, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<32x256x4x4xf32>) outs(%e : tensor<32x1x1x256x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32x1x1x256x3x3xf32>
  return %r : tensor<32x1x1x256x3x3xf32>
}
