// RUN: parallax-opt %s | FileCheck %s
// RUN: parallax-opt %s | parallax-opt | FileCheck %s
// RUN: parallax-opt %s --mlir-print-op-generic | parallax-opt | FileCheck %s

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<2x3xi32>, %b: tensor<2x3xi1>) {
  // CHECK: parallax.neg %{{.*}} : tensor<2x3xf32>
  %0 = parallax.neg %x : tensor<2x3xf32>
  // CHECK: parallax.abs %{{.*}} : tensor<2x3xi32>
  %1 = parallax.abs %i : tensor<2x3xi32>
  // CHECK: parallax.sign
  %2 = parallax.sign %x : tensor<2x3xf32>
  // CHECK: parallax.relu
  %3 = parallax.relu %x : tensor<2x3xf32>
  // CHECK: parallax.exp
  %4 = parallax.exp %x : tensor<2x3xf32>
  // CHECK: parallax.log
  %5 = parallax.log %x : tensor<2x3xf32>
  // CHECK: parallax.sqrt
  %6 = parallax.sqrt %x : tensor<2x3xf32>
  // CHECK: parallax.reciprocal
  %7 = parallax.reciprocal %x : tensor<2x3xf32>
  // CHECK: parallax.sigmoid
  %8 = parallax.sigmoid %x : tensor<2x3xf32>
  // CHECK: parallax.tanh
  %9 = parallax.tanh %x : tensor<2x3xf32>
  // CHECK: parallax.erf
  %10 = parallax.erf %x : tensor<2x3xf32>
  // CHECK: parallax.floor
  %11 = parallax.floor %x : tensor<2x3xf32>
  // CHECK: parallax.ceil
  %12 = parallax.ceil %x : tensor<2x3xf32>
  // CHECK: parallax.sin
  %13 = parallax.sin %x : tensor<2x3xf32>
  // CHECK: parallax.cos
  %14 = parallax.cos %x : tensor<2x3xf32>
  // CHECK: parallax.not %{{.*}} : tensor<2x3xi1>
  %15 = parallax.not %b : tensor<2x3xi1>
  // CHECK: parallax.add %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>
  %16 = parallax.add %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.sub
  %17 = parallax.sub %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.mul
  %18 = parallax.mul %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.div
  %19 = parallax.div %i, %i : tensor<2x3xi32>, tensor<2x3xi32>
  // CHECK: parallax.pow
  %20 = parallax.pow %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.max
  %21 = parallax.max %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.min
  %22 = parallax.min %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.and
  %23 = parallax.and %b, %b : tensor<2x3xi1>, tensor<2x3xi1>
  // CHECK: parallax.or
  %24 = parallax.or %b, %b : tensor<2x3xi1>, tensor<2x3xi1>
  // CHECK: parallax.xor
  %25 = parallax.xor %b, %b : tensor<2x3xi1>, tensor<2x3xi1>
  // CHECK: %[[EQ:.*]] = parallax.equal %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>
  %26 = parallax.equal %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.less
  %27 = parallax.less %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.less_equal
  %28 = parallax.less_equal %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.greater
  %29 = parallax.greater %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.greater_equal
  %30 = parallax.greater_equal %x, %y : tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.where %[[EQ]], %{{.*}}, %{{.*}} : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>
  %31 = parallax.where %26, %x, %y : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>
  // CHECK: parallax.cast %{{.*}} : tensor<2x3xf32> -> tensor<2x3xi32>
  %32 = parallax.cast %x : tensor<2x3xf32> -> tensor<2x3xi32>
  // CHECK: parallax.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<2x3xf32>
  %33 = parallax.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x3xf32>
  // The inferred result types are used.
  // CHECK: parallax.add %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>
  %34 = parallax.add %16, %31 : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @structural
func.func @structural(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>, %m: tensor<4x8xf32>, %t: tensor<10x4xf32>, %ids: tensor<5xi64>) {
  // CHECK: parallax.matmul %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<8x3xf32>
  %0 = parallax.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x3xf32>
  // CHECK: parallax.gemm %{{.*}}, %{{.*}} transpose_a alpha = 2.000000e+00 : tensor<8x3xf32>, tensor<8x3xf32>
  %1 = parallax.gemm %b, %b transpose_a alpha = 2.0 : tensor<8x3xf32>, tensor<8x3xf32>
  // CHECK: parallax.gather %{{.*}}[%{{.*}}] axis = 0 : tensor<10x4xf32>, tensor<5xi64>
  %2 = parallax.gather %t[%ids] axis = 0 : tensor<10x4xf32>, tensor<5xi64>
  // CHECK: parallax.reshape %{{.*}} : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %3 = parallax.reshape %a : tensor<2x4x8xf32> -> tensor<8x8xf32>
  // CHECK: parallax.expand %{{.*}} : tensor<4x8xf32> -> tensor<3x4x8xf32>
  %4 = parallax.expand %m : tensor<4x8xf32> -> tensor<3x4x8xf32>
  // CHECK: parallax.transpose %{{.*}} permutation = [2, 0, 1] : tensor<2x4x8xf32>
  %5 = parallax.transpose %a permutation = [2, 0, 1] : tensor<2x4x8xf32>
  // CHECK: parallax.concat %{{.*}}, %{{.*}} axis = 0 : tensor<4x8xf32>, tensor<4x8xf32>
  %6 = parallax.concat %m, %m axis = 0 : tensor<4x8xf32>, tensor<4x8xf32>
  // CHECK: parallax.slice %{{.*}} offsets = [3, 1] sizes = [2, 3] strides = [-1, 1] : tensor<4x8xf32>
  %7 = parallax.slice %m offsets = [3, 1] sizes = [2, 3] strides = [-1, 1] : tensor<4x8xf32>
  // CHECK: parallax.tile %{{.*}} repeats = [1, 2] : tensor<4x8xf32>
  %8 = parallax.tile %m repeats = [1, 2] : tensor<4x8xf32>
  // CHECK: parallax.pad reflect %{{.*}} low = [1, 0] high = [2, 0] : tensor<4x8xf32>
  %9 = parallax.pad reflect %m low = [1, 0] high = [2, 0] : tensor<4x8xf32>
  // CHECK: parallax.pad constant %{{.*}} low = [0, 0] high = [0, 1] value = 2.500000e+00 : tensor<4x8xf32>
  %10 = parallax.pad constant %m low = [0, 0] high = [0, 1] value = 2.5 : tensor<4x8xf32>
  // CHECK: parallax.reduce sum %{{.*}} axes = [0, 2] keepdims : tensor<2x4x8xf32>
  %11 = parallax.reduce sum %a axes = [0, 2] keepdims : tensor<2x4x8xf32>
  // CHECK: parallax.reduce prod %{{.*}} axes = [1] : tensor<2x4x8xf32>
  %12 = parallax.reduce prod %a axes = [1] : tensor<2x4x8xf32>
  // CHECK: parallax.softmax %{{.*}} axis = 1 : tensor<4x8xf32>
  %13 = parallax.softmax %m axis = 1 : tensor<4x8xf32>
  // CHECK: parallax.log_softmax %{{.*}} axis = 0 : tensor<4x8xf32>
  %14 = parallax.log_softmax %m axis = 0 : tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @nn
func.func @nn(%x: tensor<2x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %bias: tensor<6xf32>, %c: tensor<3xf32>, %s: tensor<2x5x8xf32>, %g: tensor<8xf32>, %scores: tensor<4x10xf32>, %labels: tensor<4xi64>, %cw: tensor<10xf32>) {
  // CHECK: parallax.conv %{{.*}}, %{{.*}}, %{{.*}} strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>
  %0 = parallax.conv %x, %w, %bias strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>
  // CHECK: parallax.conv_input_grad %{{.*}}, %{{.*}} input_spatial = [8, 8] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] : tensor<2x6x4x4xf32>, tensor<6x3x3x3xf32>
  %dx = parallax.conv_input_grad %0, %w input_spatial = [8, 8] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] : tensor<2x6x4x4xf32>, tensor<6x3x3x3xf32>
  // CHECK: parallax.pool average %{{.*}} kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] ceil_mode count_include_pad : tensor<2x3x8x8xf32>
  %1 = parallax.pool average %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] ceil_mode count_include_pad : tensor<2x3x8x8xf32>
  // CHECK: parallax.max_pool_grad %{{.*}}, %{{.*}}, %{{.*}} kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] ceil_mode : tensor<2x3x8x8xf32>, tensor<2x3x5x5xf32>
  %mp = parallax.pool max %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] ceil_mode : tensor<2x3x8x8xf32>
  %dmp = parallax.max_pool_grad %x, %mp, %mp kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] ceil_mode : tensor<2x3x8x8xf32>, tensor<2x3x5x5xf32>
  // CHECK: parallax.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} epsilon = 9.99999974E-6 : tensor<2x3x8x8xf32>, tensor<3xf32>
  %2 = parallax.batch_norm %x, %c, %c, %c, %c epsilon = 1.0e-5 : tensor<2x3x8x8xf32>, tensor<3xf32>
  // CHECK: parallax.layer_norm %{{.*}}, %{{.*}} axis = 2 epsilon = 9.99999974E-6 : tensor<2x5x8xf32>, tensor<8xf32>
  %3 = parallax.layer_norm %s, %g axis = 2 epsilon = 1.0e-5 : tensor<2x5x8xf32>, tensor<8xf32>
  // CHECK: parallax.softmax_cross_entropy mean %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = -100 : i64} : tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>
  %4 = parallax.softmax_cross_entropy mean %scores, %labels, %cw {ignore_index = -100 : i64} : tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>
  // CHECK: %[[NLL:.*]] = parallax.nll_loss none %{{.*}}, %{{.*}} : tensor<4x10xf32>, tensor<4xi64>
  %5 = parallax.nll_loss none %scores, %labels : tensor<4x10xf32>, tensor<4xi64>
  // CHECK: parallax.neg %[[NLL]] : tensor<4xf32>
  %6 = parallax.neg %5 : tensor<4xf32>
  return
}

// CHECK-LABEL: func.func @segments
func.func @segments(%rows: tensor<6x2x4xf32>, %bounds: tensor<4xi32>, %dy: tensor<3x2x4xf32>) {
  // CHECK: parallax.segment_reduce max %{{.*}} bounds %{{.*}} : tensor<6x2x4xf32>, tensor<4xi32>
  %0 = parallax.segment_reduce max %rows bounds %bounds : tensor<6x2x4xf32>, tensor<4xi32>
  // CHECK: parallax.segment_reduce_grad mean %{{.*}}, %{{.*}} bounds %{{.*}} : tensor<3x2x4xf32>, tensor<6x2x4xf32>, tensor<4xi32>
  %1 = parallax.segment_reduce_grad mean %dy, %rows bounds %bounds : tensor<3x2x4xf32>, tensor<6x2x4xf32>, tensor<4xi32>
  return
}
