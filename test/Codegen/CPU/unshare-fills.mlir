// RUN: parallax-opt %s --parallax-unshare-fills | FileCheck %s

// One zero (CSE merged the fills) starts two products and is read by a
// third op: each product gets its own empty tensor and fill, right before
// it, so bufferization fills their buffers in place instead of copying the
// shared zero; the reader keeps the original.
// CHECK-LABEL: func.func @shared_zero
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x3xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[F1]] : tensor<4x3xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<4x3xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg2 : {{.*}}) outs(%[[F2]] : tensor<4x3xf32>)
// CHECK: linalg.add ins(%[[ZERO]], %{{.*}} : {{.*}})
func.func @shared_zero(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %c: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x3xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%filled : tensor<4x3xf32>) -> tensor<4x3xf32>
  %q = linalg.matmul ins(%a, %c : tensor<4x8xf32>, tensor<8x3xf32>) outs(%filled : tensor<4x3xf32>) -> tensor<4x3xf32>
  %out = tensor.empty() : tensor<4x3xf32>
  %r = linalg.add ins(%filled, %q : tensor<4x3xf32>, tensor<4x3xf32>) outs(%out : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %p, %r : tensor<4x3xf32>, tensor<4x3xf32>
}

// A fill used once, and fills on buffers, stay as they are; a shared fill
// whose every use is an init is replaced by its clones.
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-1: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg0 : memref<2xf32>)
// CHECK-COUNT-2: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3xf32>)
// CHECK-NOT: linalg.fill
func.func @untouched(%m: memref<2xf32>, %x: tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %once = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  linalg.fill ins(%zero : f32) outs(%m : memref<2xf32>)
  %e3 = tensor.empty() : tensor<3xf32>
  %shared = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %s1 = linalg.add ins(%x, %x : tensor<3xf32>, tensor<3xf32>) outs(%shared : tensor<3xf32>) -> tensor<3xf32>
  %s2 = linalg.mul ins(%x, %x : tensor<3xf32>, tensor<3xf32>) outs(%shared : tensor<3xf32>) -> tensor<3xf32>
  return %once, %s1, %s2 : tensor<2xf32>, tensor<3xf32>, tensor<3xf32>
}

// An op that adds into one strided part of a fill (col2im, a max-pool
// gradient's residue class) reads the part with an extract_slice and
// writes it back with an insert_slice of the same part: the insert keeps
// the fill, so that bufferization updates the part in place (a fill of
// its own for the insert would be a second fill and a copy of the part).
// A product that CSE gave the same zero still gets its own fill.
// CHECK-LABEL: func.func @slice_update
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: %[[PART:.*]] = tensor.extract_slice %[[ZERO]][0, 1] [4, 2] [1, 2]
// CHECK: %[[SUM:.*]] = linalg.add ins(%arg0, %[[PART]] : {{.*}}) outs(%[[PART]] : tensor<4x2xf32>)
// CHECK: tensor.insert_slice %[[SUM]] into %[[ZERO]][0, 1] [4, 2] [1, 2]
// CHECK: %[[OWN:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: linalg.matmul ins(%arg1, %arg1 : {{.*}}) outs(%[[OWN]] : tensor<4x4xf32>)
func.func @slice_update(%x: tensor<4x2xf32>, %m: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %part = tensor.extract_slice %filled[0, 1] [4, 2] [1, 2] : tensor<4x4xf32> to tensor<4x2xf32>
  %sum = linalg.add ins(%x, %part : tensor<4x2xf32>, tensor<4x2xf32>) outs(%part : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = tensor.insert_slice %sum into %filled[0, 1] [4, 2] [1, 2] : tensor<4x2xf32> into tensor<4x4xf32>
  %p = linalg.matmul ins(%m, %m : tensor<4x4xf32>, tensor<4x4xf32>) outs(%filled : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r, %p : tensor<4x4xf32>, tensor<4x4xf32>
}
