// RUN: parallax-opt %s --split-input-file --convert-parallax-variables --verify-diagnostics

parallax.variable trainable @w : tensor<4xf64> = dense<0.5>
func.func @train_step(%g: tensor<4xf64>) {
  // expected-error @+1 {{the runtime updates f32 variables only, 'w' is 'f64'}}
  parallax.update @w, %g optimizer = <sgd, lr = 1.000000e-01> : tensor<4xf64>
  return
}

// -----

parallax.variable trainable @emb : tensor<10x2xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
func.func @train_step(%g: tensor<10x2xf32>) {
  // expected-error @+1 {{the push of 'emb' names no optimizer (run --parallax-optimizer first)}}
  parallax.push @emb, %g : tensor<10x2xf32>
  return
}

// -----

parallax.variable trainable @w : tensor<10x2xf32> = dense<0.5>
func.func @train_step() -> tensor<10x2xf32> {
  // expected-error @+1 {{'w' is not placed on parameter servers (#parallax.distribution<ps, ...>)}}
  %w = parallax.pull @w : tensor<10x2xf32>
  return %w : tensor<10x2xf32>
}
