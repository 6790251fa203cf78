// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg | FileCheck %s

// A class label outside [0, C) that is not the ignore_index ends the
// program (PyTorch raises); it is no longer clamped into range.
// CHECK-LABEL: func.func @label_check
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<4xi64>)
// CHECK: %[[LABEL:.*]] = arith.index_cast %[[IN:.*]] : i64 to index
// CHECK: %[[OUTSIDE:.*]] = arith.cmpi uge, %[[LABEL]], %c8 : index
// CHECK: %[[KEPT:.*]] = arith.cmpi ne, %[[IN]], %c-100_i64 : i64
// CHECK: %[[BAD:.*]] = arith.andi %[[OUTSIDE]], %[[KEPT]] : i1
// CHECK: scf.if %[[BAD]] {
// CHECK:   func.call @parallax_rt_index_out_of_range(%{{.*}}, %[[IN]], %c0_i64, %c8_i64)
func.func @label_check(%x: tensor<4x8xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  %0 = parallax.softmax_cross_entropy mean %x, %l {ignore_index = -100 : i64} : tensor<4x8xf32>, tensor<4xi64> loc("ce")
  return %0 : tensor<f32>
}

// -----

// Negative log-likelihood reads log p[label] with the label's weight; the
// weighted mean divides by the sum of the weights of the labels read.
// CHECK-LABEL: func.func @nll_weighted_mean
// CHECK: %[[L:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<4xi64>)
// CHECK: tensor.extract %arg2
// CHECK: tensor.extract %arg0
// CHECK: arith.mulf
// CHECK: arith.negf
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<4xi64>)
// CHECK-NOT: parallax_rt_index_out_of_range
// CHECK: tensor.extract %arg2
// CHECK: arith.divf
func.func @nll_weighted_mean(%logp: tensor<4x8xf32>, %l: tensor<4xi64>, %w: tensor<8xf32>) -> tensor<f32> {
  %0 = parallax.nll_loss mean %logp, %l, %w : tensor<4x8xf32>, tensor<4xi64>, tensor<8xf32>
  return %0 : tensor<f32>
}

// -----

// Without a reduction the per-example losses are the result.
// CHECK-LABEL: func.func @nll_none
// CHECK: %[[L:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x3xf32>)
// CHECK-NEXT: ^bb0
// CHECK: return %[[L]]
func.func @nll_none(%logp: tensor<4x8x3xf32>, %l: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %0 = parallax.nll_loss none %logp, %l : tensor<4x8x3xf32>, tensor<4x3xi64>
  return %0 : tensor<4x3xf32>
}
