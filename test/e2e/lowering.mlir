// RUN: parallax-opt %s --parallax-lower-to-llvm | %run_main | FileCheck %s

// Numerical checks of the compute-op lowering, compiled to native code
// through linalg, bufferization and LLVM and run with mlir-runner.

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI64(memref<*xi64>)

func.func @show(%m: memref<*xf32>) {
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %a = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %w = arith.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  %col = arith.constant dense<[[100.0], [200.0]]> : tensor<2x1xf32>

  // Broadcast add, relu, matmul.
  // CHECK: {{\[}}[44, 55],
  // CHECK-NEXT: [50, 61]]
  %s = parallax.add %a, %b : tensor<2x3xf32>, tensor<3xf32>
  %r = parallax.relu %s : tensor<2x3xf32>
  %m = parallax.matmul %r, %w : tensor<2x3xf32>, tensor<3x2xf32>
  %m_b = bufferization.to_buffer %m read_only : tensor<2x2xf32> to memref<2x2xf32>
  %m_u = memref.cast %m_b : memref<2x2xf32> to memref<*xf32>
  call @show(%m_u) : (memref<*xf32>) -> ()

  // Gemm: 2 * w^T @ a^T + col.
  // CHECK: {{\[}}[108, 120],
  // CHECK-NEXT: [210, 222]]
  %g = parallax.gemm %w, %a, %col transpose_a transpose_b alpha = 2.0 : tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x1xf32>
  %g_b = bufferization.to_buffer %g read_only : tensor<2x2xf32> to memref<2x2xf32>
  %g_u = memref.cast %g_b : memref<2x2xf32> to memref<*xf32>
  call @show(%g_u) : (memref<*xf32>) -> ()

  // Softmax along rows.
  // CHECK: {{\[}}[0.0900306, 0.244728, 0.665241],
  // CHECK-NEXT: [0.0900306, 0.244728, 0.665241]]
  %sm = parallax.softmax %a axis = 1 : tensor<2x3xf32>
  %sm_b = bufferization.to_buffer %sm read_only : tensor<2x3xf32> to memref<2x3xf32>
  %sm_u = memref.cast %sm_b : memref<2x3xf32> to memref<*xf32>
  call @show(%sm_u) : (memref<*xf32>) -> ()

  // Log-softmax: log of the above.
  // CHECK: {{\[}}[-2.40761, -1.40761, -0.407606],
  %lsm = parallax.log_softmax %a axis = 1 : tensor<2x3xf32>
  %lsm_b = bufferization.to_buffer %lsm read_only : tensor<2x3xf32> to memref<2x3xf32>
  %lsm_u = memref.cast %lsm_b : memref<2x3xf32> to memref<*xf32>
  call @show(%lsm_u) : (memref<*xf32>) -> ()

  // Reductions keep or drop the reduced dimensions.
  // CHECK: {{\[}}[2],
  // CHECK-NEXT: [5]]
  %mean = parallax.reduce mean %a axes = [1] keepdims : tensor<2x3xf32>
  %mean_b = bufferization.to_buffer %mean read_only : tensor<2x1xf32> to memref<2x1xf32>
  %mean_u = memref.cast %mean_b : memref<2x1xf32> to memref<*xf32>
  call @show(%mean_u) : (memref<*xf32>) -> ()
  // CHECK: [4, 5, 6]
  %max = parallax.reduce max %a axes = [0] : tensor<2x3xf32>
  %max_b = bufferization.to_buffer %max read_only : tensor<3xf32> to memref<3xf32>
  %max_u = memref.cast %max_b : memref<3xf32> to memref<*xf32>
  call @show(%max_u) : (memref<*xf32>) -> ()

  // Integer min and max start from the extremes of i64 exactly (the
  // largest i64 is not a double: min once started at the smallest).
  // CHECK: [-3, 9223372036854775807]
  // CHECK: [7, -9223372036854775808]
  %iv = arith.constant dense<[[5, 9223372036854775807], [-3, 9223372036854775807]]> : tensor<2x2xi64>
  %imin = parallax.reduce min %iv axes = [0] : tensor<2x2xi64>
  %imin_b = bufferization.to_buffer %imin read_only : tensor<2xi64> to memref<2xi64>
  %imin_u = memref.cast %imin_b : memref<2xi64> to memref<*xi64>
  call @printMemrefI64(%imin_u) : (memref<*xi64>) -> ()
  %jv = arith.constant dense<[[7, -9223372036854775808], [-3, -9223372036854775808]]> : tensor<2x2xi64>
  %imax = parallax.reduce max %jv axes = [0] : tensor<2x2xi64>
  %imax_b = bufferization.to_buffer %imax read_only : tensor<2xi64> to memref<2xi64>
  %imax_u = memref.cast %imax_b : memref<2xi64> to memref<*xi64>
  call @printMemrefI64(%imax_u) : (memref<*xi64>) -> ()

  // Gather with a negative index (counted from the end).
  // CHECK: {{\[}}[4, 5, 6],
  // CHECK-NEXT: [4, 5, 6],
  // CHECK-NEXT: [1, 2, 3]]
  %ids = arith.constant dense<[1, -1, 0]> : tensor<3xi64>
  %ga = parallax.gather %a[%ids] axis = 0 : tensor<2x3xf32>, tensor<3xi64>
  %ga_b = bufferization.to_buffer %ga read_only : tensor<3x3xf32> to memref<3x3xf32>
  %ga_u = memref.cast %ga_b : memref<3x3xf32> to memref<*xf32>
  call @show(%ga_u) : (memref<*xf32>) -> ()

  // Reversed, strided slice.
  // CHECK: {{\[}}[6, 4],
  // CHECK-NEXT: [3, 1]]
  %sl = parallax.slice %a offsets = [1, 2] sizes = [2, 2] strides = [-1, -2] : tensor<2x3xf32>
  %sl_b = bufferization.to_buffer %sl read_only : tensor<2x2xf32> to memref<2x2xf32>
  %sl_u = memref.cast %sl_b : memref<2x2xf32> to memref<*xf32>
  call @show(%sl_u) : (memref<*xf32>) -> ()

  // Transpose, concat, reshape.
  // CHECK: {{\[}}[1, 4, 1, 2, 0, 0],
  // CHECK-NEXT: [5, 3, 3, 4, 0, 0]]
  %t = parallax.transpose %a permutation = [1, 0] : tensor<2x3xf32>
  %flat = parallax.reshape %t : tensor<3x2xf32> -> tensor<2x3xf32>
  %zeros = arith.constant dense<0.0> : tensor<2x1xf32>
  %left = parallax.slice %flat offsets = [0, 0] sizes = [2, 2] strides = [1, 1] : tensor<2x3xf32>
  %rows = parallax.reshape %a : tensor<2x3xf32> -> tensor<3x2xf32>
  %right = parallax.slice %rows offsets = [0, 0] sizes = [2, 2] strides = [1, 1] : tensor<3x2xf32>
  %c = parallax.concat %left, %right, %zeros, %zeros axis = 1 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  %c_b = bufferization.to_buffer %c read_only : tensor<2x6xf32> to memref<2x6xf32>
  %c_u = memref.cast %c_b : memref<2x6xf32> to memref<*xf32>
  call @show(%c_u) : (memref<*xf32>) -> ()

  // Unary functions, comparisons and where, casts, clip.
  // CHECK: [0.731059, 0.761594, 0.842701, 2, 1, -1, 3, 0.5]
  %x = arith.constant dense<[1.0, 1.0, 1.0, 4.0, 1.5, -1.5, 3.7, 2.0]> : tensor<8xf32>
  %sig = parallax.sigmoid %x : tensor<8xf32>
  %tanh = parallax.tanh %x : tensor<8xf32>
  %erf = parallax.erf %x : tensor<8xf32>
  %sqrt = parallax.sqrt %x : tensor<8xf32>
  %floor = parallax.floor %x : tensor<8xf32>
  %i = parallax.cast %x : tensor<8xf32> -> tensor<8xi32>
  %f = parallax.cast %i : tensor<8xi32> -> tensor<8xf32>
  %rec = parallax.reciprocal %x : tensor<8xf32>
  // Pick one result per position to print them together.
  %sel = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %k0 = arith.constant dense<0> : tensor<i64>
  %k1 = arith.constant dense<1> : tensor<i64>
  %k2 = arith.constant dense<2> : tensor<i64>
  %k3 = arith.constant dense<3> : tensor<i64>
  %k4 = arith.constant dense<4> : tensor<i64>
  %k5 = arith.constant dense<5> : tensor<i64>
  %k6 = arith.constant dense<6> : tensor<i64>
  %e0 = parallax.equal %sel, %k0 : tensor<8xi64>, tensor<i64>
  %e1 = parallax.equal %sel, %k1 : tensor<8xi64>, tensor<i64>
  %e2 = parallax.equal %sel, %k2 : tensor<8xi64>, tensor<i64>
  %e3 = parallax.equal %sel, %k3 : tensor<8xi64>, tensor<i64>
  %e4 = parallax.less_equal %sel, %k4 : tensor<8xi64>, tensor<i64>
  %e5 = parallax.equal %sel, %k5 : tensor<8xi64>, tensor<i64>
  %e6 = parallax.equal %sel, %k6 : tensor<8xi64>, tensor<i64>
  %v6 = parallax.where %e6, %f, %rec : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>
  %v5 = parallax.where %e5, %f, %v6 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>
  %v4 = parallax.where %e4, %floor, %v5 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>
  %v3 = parallax.where %e3, %sqrt, %v4 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>
  %v2 = parallax.where %e2, %erf, %v3 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>
  %v1 = parallax.where %e1, %tanh, %v2 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>
  %v0 = parallax.where %e0, %sig, %v1 : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>
  %v_b = bufferization.to_buffer %v0 read_only : tensor<8xf32> to memref<8xf32>
  %v_u = memref.cast %v_b : memref<8xf32> to memref<*xf32>
  call @show(%v_u) : (memref<*xf32>) -> ()

  // CHECK: [0, 0.5, 1, 1]
  %y = arith.constant dense<[-1.0, 0.5, 1.0, 7.0]> : tensor<4xf32>
  %clip = parallax.clip %y {min = 0.0 : f64, max = 1.0 : f64} : tensor<4xf32>
  %clip_b = bufferization.to_buffer %clip read_only : tensor<4xf32> to memref<4xf32>
  %clip_u = memref.cast %clip_b : memref<4xf32> to memref<*xf32>
  call @show(%clip_u) : (memref<*xf32>) -> ()
  return
}
