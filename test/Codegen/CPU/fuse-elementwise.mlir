// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg --parallax-fuse-elementwise --canonicalize | FileCheck %s

// Elementwise chains fuse into one loop nest, as upstream fusion does.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: math.exp
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: return
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = parallax.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = parallax.relu %0 : tensor<4x8xf32>
  %2 = parallax.exp %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// --parallax-fuse-elementwise keeps a matmul whose operand is produced by
// a transpose a linalg.matmul (for BLAS), while still fusing the
// elementwise chain after it.
// CHECK-LABEL: func.func @keep_matmul
// CHECK: linalg.transpose
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
func.func @keep_matmul(%a: tensor<8x4xf32>, %b: tensor<8x3xf32>, %c: tensor<3xf32>) -> tensor<4x3xf32> {
  %t = parallax.transpose %a permutation = [1, 0] : tensor<8x4xf32>
  %m = parallax.matmul %t, %b : tensor<4x8xf32>, tensor<8x3xf32>
  %s = parallax.add %m, %c : tensor<4x3xf32>, tensor<3xf32>
  %r = parallax.relu %s : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}


// -----

// A producer with two users is not fused into either.
// CHECK-LABEL: func.func @two_users
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E]]
// CHECK: linalg.generic {{.*}} ins(%[[E]]
func.func @two_users(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = parallax.exp %a : tensor<4xf32>
  %x = parallax.neg %e : tensor<4xf32>
  %y = parallax.log %e : tensor<4xf32>
  return %x, %y : tensor<4xf32>, tensor<4xf32>
}

// -----

// A convolution's input gradient flips its filter spatially and then
// swaps its channels: the transpose reads the flip's input directly, one
// copy where there were two.
// CHECK-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 4 + d2, d1, -d3 + 2, -d4 + 2)>
// CHECK-DAG: #[[WRITE:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @flip_then_swap
// CHECK-SAME: (%[[W:.*]]: tensor<4x6x3x3xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[COPY:.*]] = linalg.generic {indexing_maps = [#[[READ]], #[[WRITE]]]
// CHECK-SAME: ins(%[[W]] : tensor<4x6x3x3xf32>) outs(%{{.*}} : tensor<1x6x4x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: return %[[COPY]]
#flip = affine_map<(d0, d1, d2, d3) -> (d0, d1, -d2 + 2, -d3 + 2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @flip_then_swap(%w: tensor<4x6x3x3xf32>) -> tensor<1x6x4x3x3xf32> {
  %e0 = tensor.empty() : tensor<4x6x3x3xf32>
  %flipped = linalg.generic {indexing_maps = [#flip, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<4x6x3x3xf32>) outs(%e0 : tensor<4x6x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x6x3x3xf32>
  %grouped = tensor.expand_shape %flipped [[0, 1], [2], [3], [4]] output_shape [1, 4, 6, 3, 3] : tensor<4x6x3x3xf32> into tensor<1x4x6x3x3xf32>
  %e1 = tensor.empty() : tensor<1x6x4x3x3xf32>
  %swapped = linalg.transpose ins(%grouped : tensor<1x4x6x3x3xf32>) outs(%e1 : tensor<1x6x4x3x3xf32>) permutation = [0, 2, 1, 3, 4]
  return %swapped : tensor<1x6x4x3x3xf32>
}

// -----

// A copy whose result is used elsewhere too stays: folding it would copy
// twice.
// CHECK-LABEL: func.func @copy_used_twice
// CHECK: linalg.generic
// CHECK: linalg.transpose
#flip2 = affine_map<(d0, d1) -> (d0, -d1 + 2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @copy_used_twice(%w: tensor<4x3xf32>) -> (tensor<3x4xf32>, tensor<4x3xf32>) {
  %e0 = tensor.empty() : tensor<4x3xf32>
  %flipped = linalg.generic {indexing_maps = [#flip2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<4x3xf32>) outs(%e0 : tensor<4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%flipped : tensor<4x3xf32>) outs(%e1 : tensor<3x4xf32>) permutation = [1, 0]
  return %t, %flipped : tensor<3x4xf32>, tensor<4x3xf32>
}

// -----

// Without an expand_shape between them, a reversal and a transpose of the
// same matrix fold too.
// CHECK-DAG: #[[READ2:.*]] = affine_map<(d0, d1) -> (-d1 + 3, d0)>
// CHECK-LABEL: func.func @reverse_then_transpose
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[READ2]],
// CHECK-SAME: ins(%{{.*}} : tensor<4x3xf32>) outs(%{{.*}} : tensor<3x4xf32>)
#rev = affine_map<(d0, d1) -> (-d0 + 3, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @reverse_then_transpose(%w: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %e0 = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<4x3xf32>) outs(%e0 : tensor<4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%r : tensor<4x3xf32>) outs(%e1 : tensor<3x4xf32>) permutation = [1, 0]
  return %t : tensor<3x4xf32>
}

// -----

// A producer that adds into its output (a convolution input gradient's
// col2im) stays apart from a consumer that reads each of its elements at
// several points (a global pooling's gradient broadcast over the pixels):
// fused, the kept output would be added to once per pixel.
// CHECK-LABEL: func.func @accumulate_then_broadcast
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK: arith.mulf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#bc = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @accumulate_then_broadcast(%x: tensor<2x3xf32>, %acc: tensor<2x3xf32>) -> tensor<2x3x4xf32> {
  %sum = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%acc : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3x4xf32>
  %b = linalg.generic {indexing_maps = [#bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : tensor<2x3xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x3x4xf32>
  return %b : tensor<2x3x4xf32>
}

// -----

// Read at each element once, the same producer fuses.
// CHECK-LABEL: func.func @accumulate_then_elementwise
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @accumulate_then_elementwise(%x: tensor<2x3xf32>, %acc: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %sum = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%acc : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}
