// RUN: parallax-opt %s --split-input-file --parallax-fold-bias-into-products | FileCheck %s

// A fully connected layer: the product starts from the broadcast bias and
// the addition goes.
// CHECK-LABEL: func.func @dense
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: %[[BROADCAST:.*]] = linalg.generic {indexing_maps = [#[[$BIAS:.*]], #[[$ID:.*]]], iterator_types = ["parallel", "parallel"]} ins(%[[B]] : tensor<3xf32>) outs(%[[EMPTY]] : tensor<4x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x3xf32>) outs(%[[BROADCAST]] : tensor<4x3xf32>)
// CHECK-NOT: arith.addf
// CHECK: return %[[Y]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @dense(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %o = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %p : tensor<3xf32>, tensor<4x3xf32>) outs(%o : tensor<4x3xf32>) {
  ^bb0(%bi: f32, %pi: f32, %out: f32):
    %s = arith.addf %bi, %pi : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// A layer over a batch of sequences adds over the product's expand_shape:
// the broadcast is built in the expanded shape and collapsed.
// CHECK-LABEL: func.func @sequences
// CHECK: %[[BROADCAST:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x5x3xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[BROADCAST]] {{\[}}[0, 1], [2]] : tensor<2x5x3xf32> into tensor<10x3xf32>
// CHECK: %[[Y:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<10x8xf32>, tensor<8x3xf32>) outs(%[[FLAT]] : tensor<10x3xf32>)
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[Y]]
// CHECK-NOT: arith.addf
// CHECK: return %[[OUT]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias3 = affine_map<(d0, d1, d2) -> (d2)>
func.func @sequences(%x: tensor<10x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<2x5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<10x3xf32>) -> tensor<10x3xf32>
  %p = linalg.matmul ins(%x, %w : tensor<10x8xf32>, tensor<8x3xf32>) outs(%z : tensor<10x3xf32>) -> tensor<10x3xf32>
  %q = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 5, 3] : tensor<10x3xf32> into tensor<2x5x3xf32>
  %o = tensor.empty() : tensor<2x5x3xf32>
  %r = linalg.generic {indexing_maps = [#id3, #bias3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q, %b : tensor<2x5x3xf32>, tensor<3xf32>) outs(%o : tensor<2x5x3xf32>) {
  ^bb0(%pi: f32, %bi: f32, %out: f32):
    %s = arith.addf %pi, %bi : f32
    linalg.yield %s : f32
  } -> tensor<2x5x3xf32>
  return %r : tensor<2x5x3xf32>
}

// -----

// Left alone: a product whose result is used again (the addition cannot
// take its place), one started from ones, and a subtraction.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.fill
// CHECK: arith.addf
// CHECK: linalg.fill ins(%{{.*}} : f32)
// CHECK: arith.addf
// CHECK: linalg.fill
// CHECK: arith.subf
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @left_alone(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %o = tensor.empty() : tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<4x3xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p1 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z1 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r1 = linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %p1 : tensor<3xf32>, tensor<4x3xf32>) outs(%o : tensor<4x3xf32>) {
  ^bb0(%bi: f32, %pi: f32, %out: f32):
    %s = arith.addf %bi, %pi : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %z2 = linalg.fill ins(%one : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p2 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r2 = linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %p2 : tensor<3xf32>, tensor<4x3xf32>) outs(%o : tensor<4x3xf32>) {
  ^bb0(%bi: f32, %pi: f32, %out: f32):
    %s = arith.addf %bi, %pi : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %e3 = tensor.empty() : tensor<4x3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p3 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p3, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%o : tensor<4x3xf32>) {
  ^bb0(%pi: f32, %bi: f32, %out: f32):
    %s = arith.subf %pi, %bi : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r1, %p1, %r2, %r3 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// The bias may be computed after the product: the new product is built at
// the addition, where everything it reads is defined.
// CHECK-LABEL: func.func @bias_after
// CHECK: %[[NEG:.*]] = linalg.map { arith.negf }
// CHECK: %[[BROADCAST:.*]] = linalg.generic {{.*}} ins(%[[NEG]] : tensor<3xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[BROADCAST]] : tensor<4x3xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @bias_after(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %v = tensor.empty() : tensor<3xf32>
  %nb = linalg.map { arith.negf } ins(%b : tensor<3xf32>) outs(%v : tensor<3xf32>)
  %o = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%nb, %p : tensor<3xf32>, tensor<4x3xf32>) outs(%o : tensor<4x3xf32>) {
  ^bb0(%bi: f32, %pi: f32, %out: f32):
    %s = arith.addf %bi, %pi : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
