// Row ids that an op computes which does not fold on constants (here a
// tile of the ids) cannot be measured: the error names the op.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.zeros((8, 2), dtype=np.int64))"
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis="workers=2 profile-data=%t" --verify-diagnostics

parallax.variable trainable @emb : tensor<20x4xf32> = dense<0.5>
func.func @forward(%x: tensor<2x2xi64> {parallax.name = "x"}) -> (tensor<f32> {parallax.name = "loss"}) {
  %e = parallax.read @emb : tensor<20x4xf32>
  // expected-error @+1 {{cannot compute row ids from the profile data through 'parallax.tile': it does not fold on constants (reshape, cast, slice, concat, gather, elementwise arithmetic and constants do)}}
  %ids = parallax.tile %x repeats = [2, 1] : tensor<2x2xi64>
  %rows = parallax.gather %e[%ids] axis = 0 : tensor<20x4xf32>, tensor<4x2xi64>
  %l = parallax.reduce sum %rows axes = [0, 1, 2] : tensor<4x2x4xf32>
  return %l : tensor<f32>
}
