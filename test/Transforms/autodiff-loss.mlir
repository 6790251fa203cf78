// RUN: not parallax-opt %s --split-input-file --parallax-autodiff=loss=score 2>&1 | FileCheck %s

// --loss picks an output by name; it must exist and be a scalar float.
// CHECK: error: no output named 'score'; the outputs are: 'loss' (tensor<f32>)
func.func @forward(%x: tensor<f32>) -> (tensor<f32> {parallax.name = "loss"}) {
  return %x : tensor<f32>
}

// -----

// CHECK: error: the loss 'score' must be a scalar float, got 'tensor<4xf32>'
func.func @forward(%x: tensor<4xf32>) -> (tensor<4xf32> {parallax.name = "score"}) {
  return %x : tensor<4xf32>
}
