// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg | FileCheck %s

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
// Batch normalisation computes m = scale / sqrt(var + eps) per channel,
// then (x - mean) * m + bias over the tensor: no square root or division
// per element, and no offset folded as bias - mean * m (which cancels
// where the mean is large against the spread).
// CHECK-LABEL: func.func @batch_norm
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%arg1, %arg4 : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.addf %{{.*}}, %[[EPS]]
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x4x4xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[MEAN:.*]]: f32, %[[MC:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[X]], %[[MEAN]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[C]], %[[MC]]
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[P]], %[[B]]
// CHECK-NEXT: linalg.yield %[[R]]
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %scale: tensor<3xf32>, %bias: tensor<3xf32>, %mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = parallax.batch_norm %x, %scale, %bias, %mean, %var epsilon = 1.0e-5 : tensor<2x3x4x4xf32>, tensor<3xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// The other reductions start from their identity: 1 for prod, the
// lowest and highest value for max and min (exactly: the largest i64 is
// not a double).
// CHECK-LABEL: func.func @reductions
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.mulf
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: arith.constant 9223372036854775807 : i64
// CHECK: arith.minsi
func.func @reductions(%a: tensor<4x8xf32>, %i: tensor<4x8xi64>) -> (tensor<4xf32>, tensor<8xf32>, tensor<i64>) {
  %0 = parallax.reduce prod %a axes = [1] : tensor<4x8xf32>
  %1 = parallax.reduce max %a axes = [0] : tensor<4x8xf32>
  %2 = parallax.reduce min %i axes = [0, 1] : tensor<4x8xi64>
  return %0, %1, %2 : tensor<4xf32>, tensor<8xf32>, tensor<i64>
}

// -----

// Softmax: the max, the exponentials of x - max in a pass of their own,
// their sum, then the division; log_softmax is x - max - log(sum).
// CHECK-LABEL: func.func @softmax
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: math.log
// CHECK-NEXT: arith.subf
// CHECK-NEXT: arith.subf
func.func @softmax(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = parallax.softmax %a axis = 1 : tensor<4x8xf32>
  %1 = parallax.log_softmax %a axis = 1 : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Layer normalisation: the mean, the centred values, the mean of their
// squares, then (x - mean) / sqrt(var + eps) * scale + bias in one loop.
// CHECK-LABEL: func.func @layer_norm
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %arg1, %arg2 : tensor<4x8xf32>, tensor<4x1xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK-NEXT: math.sqrt
// CHECK-NEXT: arith.divf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
func.func @layer_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = parallax.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-5 : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// On one device a batch sum is its inputs (--parallax-distribute rewrote a
// distributed step's).
// CHECK-LABEL: func.func @batch_sum
// CHECK-NOT: parallax.batch_sum
// CHECK: return %arg0, %arg1 : tensor<8xf32>, tensor<1xf32>
func.func @batch_sum(%s: tensor<8xf32>, %n: tensor<1xf32>) -> (tensor<8xf32>, tensor<1xf32>) {
  %t:2 = parallax.batch_sum %s, %n : tensor<8xf32>, tensor<1xf32>
  return %t#0, %t#1 : tensor<8xf32>, tensor<1xf32>
}

// -----
// A segment reduction: one parallel generic over bags and columns, each
// checking its bag's bounds (in [0, rows], not decreasing) and walking the
// bag's rows; an empty bag gives 0.
// CHECK-LABEL: func.func @segment_mean
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<3x4xf32>)
// CHECK: %[[START:.*]] = arith.index_cast
// CHECK: %[[END:.*]] = arith.index_cast
// CHECK: arith.cmpi ugt, %[[START]]
// CHECK: func.call @parallax_rt_index_out_of_range
// CHECK: arith.cmpi ugt, %[[END]]
// CHECK: arith.cmpi slt
// CHECK: scf.for %[[J:.*]] = %[[START]] to %[[END]]
// CHECK: tensor.extract %arg0[%[[J]],
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: arith.select
func.func @segment_mean(%rows: tensor<6x4xf32>, %bounds: tensor<4xi64>) -> tensor<3x4xf32> {
  %0 = parallax.segment_reduce mean %rows bounds %bounds : tensor<6x4xf32>, tensor<4xi64>
  return %0 : tensor<3x4xf32>
}

// -----
// Its gradient: each row's bag by a binary search over the bounds, then
// one parallel generic over rows and columns; for max, the first maximum
// of every bag's column, found once.
// CHECK-LABEL: func.func @segment_max_grad
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<6xindex>)
// CHECK: scf.while
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4xindex>)
// CHECK: scf.for
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<6x4xf32>)
// CHECK: arith.select
func.func @segment_max_grad(%dy: tensor<3x4xf32>, %rows: tensor<6x4xf32>, %bounds: tensor<4xi64>) -> tensor<6x4xf32> {
  %0 = parallax.segment_reduce_grad max %dy, %rows bounds %bounds : tensor<3x4xf32>, tensor<6x4xf32>, tensor<4xi64>
  return %0 : tensor<6x4xf32>
}
