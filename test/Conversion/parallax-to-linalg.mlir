// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg | FileCheck %s
// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg --linalg-fuse-elementwise-ops --canonicalize | FileCheck %s --check-prefix=FUSED
// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg --parallax-fuse-elementwise --canonicalize | FileCheck %s --check-prefixes=FUSED,KEEP

// Elementwise ops become linalg.generic with broadcasting in the indexing
// maps; a chain of them fuses into one loop nest.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NOT: parallax.
// FUSED-LABEL: func.func @chain
// FUSED: linalg.generic
// FUSED: arith.addf
// FUSED-NEXT: arith.maximumf
// FUSED-NEXT: math.exp
// FUSED-NEXT: linalg.yield
// FUSED-NEXT: } -> tensor<4x8xf32>
// FUSED-NEXT: return
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = parallax.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = parallax.relu %0 : tensor<4x8xf32>
  %2 = parallax.exp %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

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

// Reductions: a generic with reduction iterators, then the mean's divide.
// CHECK-LABEL: func.func @mean
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: tensor.expand_shape
func.func @mean(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = parallax.reduce mean %a axes = [1] keepdims : tensor<4x8xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// Gather reads the table with tensor.extract at the looked-up row.
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
// CHECK: arith.index_cast
// CHECK: arith.select
// CHECK: tensor.extract %arg0
func.func @gather(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %0 = parallax.gather %t[%i] axis = 0 : tensor<10x4xf32>, tensor<3xi64>
  return %0 : tensor<3x4xf32>
}


// -----

// --parallax-fuse-elementwise keeps a matmul whose operand is produced by
// a transpose a linalg.matmul (for BLAS), while still fusing the
// elementwise chain after it.
// KEEP-LABEL: func.func @keep_matmul
// KEEP: linalg.transpose
// KEEP: linalg.matmul
// KEEP: linalg.generic
// KEEP: arith.addf
// KEEP-NEXT: arith.maximumf
func.func @keep_matmul(%a: tensor<8x4xf32>, %b: tensor<8x3xf32>, %c: tensor<3xf32>) -> tensor<4x3xf32> {
  %t = parallax.transpose %a permutation = [1, 0] : tensor<8x4xf32>
  %m = parallax.matmul %t, %b : tensor<4x8xf32>, tensor<8x3xf32>
  %s = parallax.add %m, %c : tensor<4x3xf32>, tensor<3xf32>
  %r = parallax.relu %s : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
