// The reference run of wide_deep, written by export.py: PyTorch's
// inputs as constants and its loss.
// EXPECTED-LOSS: 0.467831612
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %in0 = arith.constant dense<[[775, 68, 10], [700, 12, 80], [218, 277, 48], [632, 145, 21]]> : tensor<4x3xi64>
  %in1 = arith.constant dense<[[-1.12560165, -0.316998094, -1.09246826, -0.0851942971], [-0.0933482349, 0.687050223, -0.838315368, 0.00089182175], [-0.750426829, 0.185407981, 0.621138334, 0.638181567], [-0.246000946, 2.30251646, -1.88168919, -0.0497270226]]> : tensor<4x4xf32>
  %in2 = arith.constant dense<[[0.0], [0.0], [1.0], [0.0]]> : tensor<4x1xf32>
  %loss = func.call @forward(%in0, %in1, %in2) : (tensor<4x3xi64>, tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<f32>
  %flat = parallax.reshape %loss : tensor<f32> -> tensor<1xf32>
  %buffer = bufferization.to_buffer %flat read_only : tensor<1xf32> to memref<1xf32>
  %any = memref.cast %buffer : memref<1xf32> to memref<*xf32>
  func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
  return
}
