// RUN: parallax-opt %s --split-input-file --parallax-gpu-split-reductions | FileCheck %s

// A loss's row sums over a 100,000-word vocabulary for 32 tokens: 32
// threads of 100,000 additions each become 32 x 1000 threads of 100
// (thread kk of a row sums elements k * 1000 + kk), then 32 threads
// combining 1000 partials.
// CHECK-LABEL: func.func @row_sums
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [32, 100, 1000]
// CHECK: %[[PARTIALS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : tensor<32x100x1000xf32>) outs(%{{.*}} : tensor<32x1000xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIALS]] : tensor<32x1000xf32>) outs(%{{.*}} : tensor<32xf32>)
func.func @row_sums(%x: tensor<32x100000xf32>, %init: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x100000xf32>) outs(%init : tensor<32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// Softmax's row maximum: the same split, with maximumf's neutral -inf.
// CHECK-LABEL: func.func @row_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.fill
// CHECK-COUNT-2: arith.maximumf
func.func @row_max(%x: tensor<8x65536xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x65536xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Short reductions, and reductions over many outputs, stay one kernel.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
func.func @left_alone(%short: tensor<4x1000xf32>, %wide: tensor<65536x8192xf32>,
                      %i: tensor<4xf32>, %j: tensor<65536xf32>) -> (tensor<4xf32>, tensor<65536xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%short : tensor<4x1000xf32>) outs(%i : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%wide : tensor<65536x8192xf32>) outs(%j : tensor<65536xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<65536xf32>
  return %r, %w : tensor<4xf32>, tensor<65536xf32>
}
