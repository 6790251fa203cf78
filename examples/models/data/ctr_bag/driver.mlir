// The reference run of ctr_bag, written by export.py: PyTorch's
// inputs as constants and its loss.
// EXPECTED-LOSS: 0.736965895
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %in0 = arith.constant dense<[[681, 993, 348], [654, 24, 173], [892, 291, 243], [768, 617, 444]]> : tensor<4x3xi64>
  %in1 = arith.constant dense<[[126, 212, 224, 312, 324], [118, 243, 325, 341, 223], [149, 275, 433, 171, 441], [413, 405, 335, 306, 208]]> : tensor<4x5xi64>
  %in2 = arith.constant dense<[[88, 37], [59, 91], [41, 28], [36, 36]]> : tensor<4x2xi64>
  %in3 = arith.constant dense<[[-0.961197197, 0.592875481, 1.57594395, -0.0994072556], [-0.272527993, 0.0253451467, -1.41012168, 0.972808242], [0.71133846, -1.73697484, -0.533404469, -0.405135393], [-0.366313189, -0.977389991, -0.642618179, 0.314052612]]> : tensor<4x4xf32>
  %in4 = arith.constant dense<[[0.0], [1.0], [1.0], [0.0]]> : tensor<4x1xf32>
  %loss = func.call @forward(%in0, %in1, %in2, %in3, %in4) : (tensor<4x3xi64>, tensor<4x5xi64>, tensor<4x2xi64>, tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<f32>
  %flat = parallax.reshape %loss : tensor<f32> -> tensor<1xf32>
  %buffer = bufferization.to_buffer %flat read_only : tensor<1xf32> to memref<1xf32>
  %any = memref.cast %buffer : memref<1xf32> to memref<*xf32>
  func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()
  return
}
