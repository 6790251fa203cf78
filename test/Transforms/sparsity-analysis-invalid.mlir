// RUN: parallax-opt %s --split-input-file --parallax-sparsity-analysis --verify-diagnostics

// expected-error @+1 {{no variable has a gradient: the loss depends on no trainable variable, so there is nothing to train (or --parallax-autodiff has not run)}}
module {
  parallax.variable trainable @w : tensor<4xf32> = dense<0.5>
}

// -----

// expected-error @+1 {{alpha must lie in (0, 1], got 2}}
parallax.variable trainable @w : tensor<4xf32> {sparsity = #parallax.sparsity<sparse, alpha = 2.0, rows = 4>}

// -----

// expected-error @+1 {{a dense gradient has alpha 1, got 5.000000e-01}}
parallax.variable trainable @w : tensor<4xf32> {sparsity = #parallax.sparsity<dense, alpha = 0.5, rows = 4>}

// -----

// expected-error @+1 {{worker_rows must lie in [1, rows = 4], got 5}}
parallax.variable trainable @w : tensor<4xf32> {sparsity = #parallax.sparsity<sparse, alpha = 1.0, rows = 4, worker_rows = 5>}

// -----

// expected-error @+1 {{worker_rows is for sparse gradients}}
parallax.variable trainable @w : tensor<4xf32> {sparsity = #parallax.sparsity<dense, alpha = 1.0, rows = 4, worker_rows = 2>}
