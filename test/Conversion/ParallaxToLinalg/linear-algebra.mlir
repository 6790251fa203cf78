// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg | FileCheck %s

// Batched matmul with broadcast batch dimensions: the operands are
// broadcast, batch dimensions collapsed into linalg.batch_matmul, and the
// result expanded back.
// CHECK-LABEL: func.func @batched
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<6x4x8xf32>, tensor<6x8x5xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2, 3]] output_shape [2, 3, 4, 5] : tensor<120xf32> into tensor<2x3x4x5xf32>
func.func @batched(%a: tensor<2x1x4x8xf32>, %b: tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = parallax.matmul %a, %b : tensor<2x1x4x8xf32>, tensor<3x8x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----
// 2-D matmul is linalg.matmul on a zero-filled accumulator.
// CHECK-LABEL: func.func @plain
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x3xf32>) outs(%[[ACC]] : tensor<4x3xf32>)
func.func @plain(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = parallax.matmul %a, %b : tensor<4x8xf32>, tensor<8x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----
// A matrix shared by a batch (a linear layer on a sequence): one
// linalg.matmul over all the batch's rows, the matrix never copied.
// CHECK-LABEL: func.func @shared_matrix
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.matmul ins(%{{.*}}, %arg1 : tensor<8x8xf32>, tensor<8x3xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: return %{{.*}} : tensor<2x4x3xf32>
func.func @shared_matrix(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>) -> tensor<2x4x3xf32> {
  %0 = parallax.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// Gemm transposes its operands as asked, multiplies, and computes
// alpha * y + beta * c in one loop nest.
// CHECK-LABEL: func.func @gemm
// CHECK: linalg.transpose ins(%arg0 : tensor<8x4xf32>) outs(%{{.*}} : tensor<4x8xf32>) permutation = [1, 0]
// CHECK: linalg.transpose ins(%arg1 : tensor<3x8xf32>) outs(%{{.*}} : tensor<8x3xf32>) permutation = [1, 0]
// CHECK: %[[Y:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %arg2 : tensor<4x3xf32>, tensor<3xf32>)
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @gemm(%a: tensor<8x4xf32>, %b: tensor<3x8xf32>, %c: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = parallax.gemm %a, %b, %c transpose_a transpose_b alpha = 2.0 beta = 0.5 : tensor<8x4xf32>, tensor<3x8xf32>, tensor<3xf32>
  return %0 : tensor<4x3xf32>
}
