// RUN: parallax-opt %s --split-input-file --parallax-autodiff --verify-diagnostics

// expected-error @+1 {{no scalar float output to use as the loss; the outputs are: 'logits' (tensor<2x3xf32>)}}
func.func @forward(%x: tensor<2x3xf32>) -> (tensor<2x3xf32> {parallax.name = "logits"}) {
  return %x : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{several scalar float outputs could be the loss ('a' (tensor<f32>), 'b' (tensor<f32>)): choose one with --loss}}
func.func @forward(%x: tensor<f32>) -> (tensor<f32> {parallax.name = "a"}, tensor<f32> {parallax.name = "b"}) {
  return %x, %x : tensor<f32>, tensor<f32>
}

// -----

// expected-error @+1 {{no function 'forward' to differentiate}}
module {}

// -----

parallax.variable trainable @w : tensor<3xf32> = dense<1.0>
func.func @forward() -> tensor<f32> {
  %w = parallax.read @w : tensor<3xf32>
  // expected-error @+1 {{no gradient rule for 'math.exp', which lies between a trainable variable and the loss}}
  %e = math.exp %w : tensor<3xf32>
  %l = parallax.reduce sum %e axes = [0] : tensor<3xf32>
  return %l : tensor<f32>
}

// -----

parallax.variable trainable @w : tensor<1x1x17x18xf32> = dense<1.0>
func.func @forward() -> tensor<f32> {
  %w = parallax.read @w : tensor<1x1x17x18xf32>
  // expected-error @+1 {{'parallax.pool' op has a gradient rule for overlapping or padded windows of at most 256 elements, got 289}}
  %p = parallax.pool max %w kernel = [17, 17] strides = [1, 1] pads = [0, 0, 0, 0] : tensor<1x1x17x18xf32>
  %l = parallax.reduce sum %p axes = [0, 1, 2, 3] : tensor<1x1x1x2xf32>
  return %l : tensor<f32>
}

// -----

// A trainable variable the loss does not depend on is reported, not an
// error: the step trains the others.
parallax.variable trainable @used : tensor<3xf32> = dense<1.0>
// expected-warning @+1 {{the loss does not depend on trainable variable 'unused': it will not be trained}}
parallax.variable trainable @unused : tensor<3xf32> = dense<1.0>
func.func @forward() -> tensor<f32> {
  %w = parallax.read @used : tensor<3xf32>
  %u = parallax.read @unused : tensor<3xf32>
  %l = parallax.reduce sum %w axes = [0] : tensor<3xf32>
  return %l : tensor<f32>
}
