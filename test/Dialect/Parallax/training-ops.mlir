// RUN: parallax-opt %s | FileCheck %s
// RUN: parallax-opt %s | parallax-opt | FileCheck %s
// RUN: parallax-opt %s --mlir-print-op-generic | parallax-opt | FileCheck %s

// The ops of a training step: gradients, optimizer updates and their
// state variables, and the one-hot indicator used by loss gradients.
// CHECK: parallax.variable trainable @emb : tensor<10x4xf32>
// CHECK: parallax.variable state @emb.exp_avg : tensor<10x4xf32>
// CHECK: parallax.variable state @emb.exp_avg_sq : tensor<10x4xf32>
parallax.variable trainable @emb : tensor<10x4xf32> = dense<0.5>
parallax.variable state @emb.exp_avg : tensor<10x4xf32> = dense<0.0>
parallax.variable state @emb.exp_avg_sq : tensor<10x4xf32> = dense<0.0>
parallax.variable trainable @b : tensor<4xf32> = dense<0.5>

// CHECK-LABEL: func.func @step
func.func @step(%ids: tensor<3xi64>, %rows: tensor<3x4xf32>, %g: tensor<4xf32>, %labels: tensor<2x5xi64>) -> tensor<2x7x5xf32> {
  %s = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  // CHECK: parallax.apply_gradient @b, %{{.*}} : tensor<4xf32>
  parallax.apply_gradient @b, %g : tensor<4xf32>
  // CHECK: parallax.apply_gradient @emb, %{{.*}} : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  parallax.apply_gradient @emb, %s : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  // CHECK: parallax.update @emb, %{{.*}} optimizer = <adam, lr = 1.000000e-03, beta2 = 0.97999999999999998, weight_decay = 1.000000e-02> state = [@emb.exp_avg, @emb.exp_avg_sq] : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  parallax.update @emb, %s optimizer = <adam, lr = 1.0e-3, beta2 = 0.98, weight_decay = 0.01> state = [@emb.exp_avg, @emb.exp_avg_sq] : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  // CHECK: parallax.update @b, %{{.*}} optimizer = <sgd, lr = 5.000000e-01> : tensor<4xf32>
  parallax.update @b, %g optimizer = <sgd, lr = 0.5> : tensor<4xf32>
  // CHECK: parallax.one_hot %{{.*}} axis = 1 : tensor<2x5xi64> -> tensor<2x7x5xf32>
  %h = parallax.one_hot %labels axis = 1 : tensor<2x5xi64> -> tensor<2x7x5xf32>
  return %h : tensor<2x7x5xf32>
}
