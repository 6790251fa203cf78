// RUN: parallax-opt %s --parallax-lower-to-llvm | %run_main | FileCheck %s

// Numerical checks of the lowering of convolution, pooling, padding,
// tiling, normalisation and losses against PyTorch 1.13 (values computed
// with torch.nn.functional, printed to 6 significant digits).

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]], [[17.0, 18.0, 19.0, 20.0], [21.0, 22.0, 23.0, 24.0], [25.0, 26.0, 27.0, 28.0], [29.0, 30.0, 31.0, 32.0]]]]> : tensor<1x2x4x4xf32>
  %y = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %sc = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [2.0, 0.0, -1.0, 0.5], [0.0, 0.0, 0.0, 0.0]]> : tensor<3x4xf32>

  // Convolution with bias, stride 2, padding 1 (PyTorch conv2d).
  // CHECK: [8, 16, 10.5, 14.5, 44.5, 34.5, 15, 45, 32.5, 17, 23, 3, 38, 60, 19, 12, 28, 15]
  scf.execute_region {
    %w = arith.constant dense<[[[[1.0, 0.0], [0.0, -1.0]], [[0.5, 0.5], [0.5, 0.5]]], [[[1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 1.0]]]]> : tensor<2x2x2x2xf32>
    %b = arith.constant dense<[0.5, -1.0]> : tensor<2xf32>
    %r = parallax.conv %x, %w, %b strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>
    %flat = parallax.reshape %r : tensor<1x2x3x3xf32> -> tensor<18xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<18xf32> to memref<18xf32>
    %any = memref.cast %buf : memref<18xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Grouped, dilated convolution.
  // CHECK: [78, 88, 118, 128, 10, 10, 10, 10]
  scf.execute_region {
    %w = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[-1.0, 0.0], [0.0, 1.0]]]]> : tensor<2x1x2x2xf32>
    %r = parallax.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [2, 2] groups = 2 : tensor<1x2x4x4xf32>, tensor<2x1x2x2xf32>
    %flat = parallax.reshape %r : tensor<1x2x2x2xf32> -> tensor<8xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<8xf32> to memref<8xf32>
    %any = memref.cast %buf : memref<8xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // The filter gradient of a stride-2 convolution (conv_filter_grad, as
  // autodiff writes it; lowered as per-image products of the forward's
  // patches), as [M, C, K...]: PyTorch's conv2d(x^T, dy^T, dilation=2)^T.
  // CHECK: [24.5, 27, 34.5, 37, 64.5, 67, 74.5, 77, 12, 14, 20, 22, 44, 46, 52, 54, 12.75, 12.5, 11.75, 11.5, 8.75, 8.5, 7.75, 7.5]
  scf.execute_region {
    %dy = arith.constant dense<[[[[1.0, -1.0], [0.5, 2.0]], [[0.0, 1.0], [1.0, 0.0]], [[-2.0, 0.5], [0.25, 1.0]]]]> : tensor<1x3x2x2xf32>
    %r = parallax.conv_filter_grad %x, %dy kernel = [2, 2] strides = [2, 2] dilations = [1, 1] : tensor<1x2x4x4xf32>, tensor<1x3x2x2xf32>
    %flat = parallax.reshape %r : tensor<3x2x2x2xf32> -> tensor<24xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<24xf32> to memref<24xf32>
    %any = memref.cast %buf : memref<24xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // The same gradient as a plain convolution of the transposed input with
  // the transposed dy (the general convolution lowering).
  // CHECK: [24.5, 27, 34.5, 37, 12, 14, 20, 22, 12.75, 12.5, 11.75, 11.5, 64.5, 67, 74.5, 77, 44, 46, 52, 54, 8.75, 8.5, 7.75, 7.5]
  scf.execute_region {
    %dy = arith.constant dense<[[[[1.0, -1.0], [0.5, 2.0]], [[0.0, 1.0], [1.0, 0.0]], [[-2.0, 0.5], [0.25, 1.0]]]]> : tensor<1x3x2x2xf32>
    %xt = parallax.transpose %x permutation = [1, 0, 2, 3] : tensor<1x2x4x4xf32>
    %dyt = parallax.transpose %dy permutation = [1, 0, 2, 3] : tensor<1x3x2x2xf32>
    %r = parallax.conv %xt, %dyt strides = [1, 1] pads = [0, 0, 0, 0] dilations = [2, 2] groups = 1 : tensor<2x1x4x4xf32>, tensor<3x1x2x2xf32>
    %flat = parallax.reshape %r : tensor<2x3x2x2xf32> -> tensor<24xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<24xf32> to memref<24xf32>
    %any = memref.cast %buf : memref<24xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // The same for a dilation-2 convolution: the gradient's convolution has
  // stride 2. PyTorch's conv2d(x^T, dy^T, stride=2).
  // CHECK: [13.5, 18.5, 33.5, 38.5, 7, 11, 23, 27, 6.25, 5.75, 4.25, 3.75, 53.5, 58.5, 73.5, 78.5, 39, 43, 55, 59, 2.25, 1.75, 0.25, -0.25]
  scf.execute_region {
    %dy = arith.constant dense<[[[[1.0, -1.0], [0.5, 2.0]], [[0.0, 1.0], [1.0, 0.0]], [[-2.0, 0.5], [0.25, 1.0]]]]> : tensor<1x3x2x2xf32>
    %xt = parallax.transpose %x permutation = [1, 0, 2, 3] : tensor<1x2x4x4xf32>
    %dyt = parallax.transpose %dy permutation = [1, 0, 2, 3] : tensor<1x3x2x2xf32>
    %r = parallax.conv %xt, %dyt strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<2x1x4x4xf32>, tensor<3x1x2x2xf32>
    %flat = parallax.reshape %r : tensor<2x3x2x2xf32> -> tensor<24xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<24xf32> to memref<24xf32>
    %any = memref.cast %buf : memref<24xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Max pooling with padding and ceil_mode.
  // CHECK: [6, 8, 8, 14, 16, 16, 14, 16, 16, 22, 24, 24, 30, 32, 32, 30, 32, 32]
  scf.execute_region {
    %r = parallax.pool max %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] ceil_mode : tensor<1x2x4x4xf32>
    %flat = parallax.reshape %r : tensor<1x2x3x3xf32> -> tensor<18xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<18xf32> to memref<18xf32>
    %any = memref.cast %buf : memref<18xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Average pooling, padding excluded from the count.
  // CHECK: [3.5, 5, 9.5, 11, 19.5, 21, 25.5, 27]
  scf.execute_region {
    %r = parallax.pool average %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] : tensor<1x2x4x4xf32>
    %flat = parallax.reshape %r : tensor<1x2x2x2xf32> -> tensor<8xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<8xf32> to memref<8xf32>
    %any = memref.cast %buf : memref<8xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Average pooling, padding included.
  // CHECK: [1.55556, 3.33333, 6.33333, 11, 8.66667, 14, 17, 27]
  scf.execute_region {
    %r = parallax.pool average %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] count_include_pad : tensor<1x2x4x4xf32>
    %flat = parallax.reshape %r : tensor<1x2x2x2xf32> -> tensor<8xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<8xf32> to memref<8xf32>
    %any = memref.cast %buf : memref<8xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Batch normalisation (inference form).
  // CHECK: [0.1, 1.1, 2.4, 2.5666{{[67]}}]
  scf.execute_region {
    %s = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %bb = arith.constant dense<[4.0, 9.0]> : tensor<2xf32>
    %m = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
    %v = arith.constant dense<[0.1, -0.1]> : tensor<2xf32>
    %r = parallax.batch_norm %x, %m, %v, %s, %bb epsilon = 1.0e-5 : tensor<1x2x4x4xf32>, tensor<2xf32>
    %r2 = parallax.slice %r offsets = [0, 0, 0, 0] sizes = [1, 2, 1, 2] strides = [1, 1, 1, 1] : tensor<1x2x4x4xf32>
    %flat = parallax.reshape %r2 : tensor<1x2x1x2xf32> -> tensor<4xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<4xf32> to memref<4xf32>
    %any = memref.cast %buf : memref<4xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Reflect padding.
  // CHECK: [6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5]
  scf.execute_region {
    %r = parallax.pad reflect %y low = [1, 2] high = [0, 1] : tensor<2x3xf32>
    %flat = parallax.reshape %r : tensor<3x6xf32> -> tensor<18xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<18xf32> to memref<18xf32>
    %any = memref.cast %buf : memref<18xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Edge padding.
  // CHECK: [1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6]
  scf.execute_region {
    %r = parallax.pad edge %y low = [0, 2] high = [0, 1] : tensor<2x3xf32>
    %flat = parallax.reshape %r : tensor<2x6xf32> -> tensor<12xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<12xf32> to memref<12xf32>
    %any = memref.cast %buf : memref<12xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Tile.
  // CHECK: [1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]
  scf.execute_region {
    %r = parallax.tile %y repeats = [2, 2] : tensor<2x3xf32>
    %flat = parallax.reshape %r : tensor<4x6xf32> -> tensor<24xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<24xf32> to memref<24xf32>
    %any = memref.cast %buf : memref<24xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Layer normalisation over the last dimension.
  // CHECK: [-1.22474, 0.5, 3.17421, -1.22474, 0.5, 3.17421]
  scf.execute_region {
    %g = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %bias = arith.constant dense<[0.0, 0.5, -0.5]> : tensor<3xf32>
    %r = parallax.layer_norm %y, %g, %bias axis = 1 epsilon = 1.0e-5 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
    %flat = parallax.reshape %r : tensor<2x3xf32> -> tensor<6xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<6xf32> to memref<6xf32>
    %any = memref.cast %buf : memref<6xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Expand.
  // CHECK: [1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2]
  scf.execute_region {
    %c = arith.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
    %r = parallax.expand %c : tensor<2x1xf32> -> tensor<2x2x3xf32>
    %flat = parallax.reshape %r : tensor<2x2x3xf32> -> tensor<12xf32>
    %buf = bufferization.to_buffer %flat read_only : tensor<12xf32> to memref<12xf32>
    %any = memref.cast %buf : memref<12xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Cross-entropy (mean), with class weights, and sum ignoring class 0.
  // CHECK: [0.72294{{[45]}}, 0.838938, 1.82648, -2]
  scf.execute_region {
    %l = arith.constant dense<[3, 0, 1]> : tensor<3xi64>
    %wt = arith.constant dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4xf32>
    %c0 = parallax.softmax_cross_entropy mean %sc, %l : tensor<3x4xf32>, tensor<3xi64>
    %c1 = parallax.softmax_cross_entropy mean %sc, %l, %wt : tensor<3x4xf32>, tensor<3xi64>, tensor<4xf32>
    %c2 = parallax.softmax_cross_entropy sum %sc, %l {ignore_index = 0 : i64} : tensor<3x4xf32>, tensor<3xi64>
    %c3 = parallax.nll_loss mean %sc, %l : tensor<3x4xf32>, tensor<3xi64>
    %r0 = parallax.reshape %c0 : tensor<f32> -> tensor<1xf32>
    %r1 = parallax.reshape %c1 : tensor<f32> -> tensor<1xf32>
    %r2 = parallax.reshape %c2 : tensor<f32> -> tensor<1xf32>
    %r3 = parallax.reshape %c3 : tensor<f32> -> tensor<1xf32>
    %r = parallax.concat %r0, %r1, %r2, %r3 axis = 0 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
    %buf = bufferization.to_buffer %r read_only : tensor<4xf32> to memref<4xf32>
    %any = memref.cast %buf : memref<4xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }

  // Per-example cross-entropy.
  // CHECK: [0.44019, 0.34235, 1.38629]
  scf.execute_region {
    %l = arith.constant dense<[3, 0, 1]> : tensor<3xi64>
    %r = parallax.softmax_cross_entropy none %sc, %l : tensor<3x4xf32>, tensor<3xi64>
    %buf = bufferization.to_buffer %r read_only : tensor<3xf32> to memref<3xf32>
    %any = memref.cast %buf : memref<3xf32> to memref<*xf32>
    func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
    scf.yield
  }
  return
}
