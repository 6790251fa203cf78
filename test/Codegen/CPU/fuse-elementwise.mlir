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
