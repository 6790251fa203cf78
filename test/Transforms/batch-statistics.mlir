// RUN: parallax-opt %s --parallax-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=2 --parallax-distribute=workers=2 | FileCheck %s --check-prefix=GLOBAL
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=2 --parallax-distribute="workers=2 local-batch-statistics" | FileCheck %s --check-prefix=LOCAL
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis --parallax-distribute="workers-at-run-time" | FileCheck %s --check-prefix=GLOBAL
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=1 --parallax-distribute=workers=1 | FileCheck %s --check-prefix=ONE

// The shape of a training-mode BatchNorm's import: per-channel sums and an
// example count summed over the batch, the running mean assigned.
parallax.variable trainable @w : tensor<4x2xf32> = dense<0.5>
parallax.variable statistics @mean : tensor<2xf32> = dense<0.0>
func.func @forward(%x: tensor<4x4xf32>) -> tensor<f32> {
  %w = parallax.read @w : tensor<4x2xf32>
  %m = parallax.read @mean : tensor<2xf32>
  %h = parallax.matmul %x, %w : tensor<4x4xf32>, tensor<4x2xf32>
  %count = arith.constant dense<4.0> : tensor<1xf32>
  %s = parallax.reduce sum %h axes = [0] : tensor<4x2xf32>
  %t:2 = parallax.batch_sum %s, %count : tensor<2xf32>, tensor<1xf32>
  %mean = parallax.div %t#0, %t#1 : tensor<2xf32>, tensor<1xf32>
  parallax.assign @mean, %mean : tensor<2xf32>
  %c = parallax.sub %h, %mean : tensor<4x2xf32>, tensor<2xf32>
  %sq = parallax.mul %c, %c : tensor<4x2xf32>, tensor<4x2xf32>
  %l = parallax.reduce mean %sq axes = [0, 1] : tensor<4x2xf32>
  return %l : tensor<f32>
}

// The gradient of a batch sum is the batch sum of the gradient: only the
// sums' (the count is a constant and needs none). The assignment moves
// after the backward pass and the gradient's application.
// GRAD-LABEL: func.func @train_step
// GRAD: %[[T:.*]]:2 = parallax.batch_sum %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<1xf32>
// GRAD: %[[MEAN:.*]] = parallax.div %[[T]]#0, %[[T]]#1
// GRAD-NOT: parallax.assign
// GRAD: %[[DT:.*]] = parallax.batch_sum %{{.*}} : tensor<2xf32>
// GRAD: parallax.apply_gradient @w
// GRAD-NEXT: parallax.assign @mean, %[[MEAN]] : tensor<2xf32>
// GRAD-NEXT: return

// Distributed: each batch sum is an allreduce sum (synchronised
// statistics), forward and backward; statistics variables get no
// distribution.
// GLOBAL: parallax.variable statistics @mean : tensor<2xf32> = dense<0.000000e+00>{{$}}
// GLOBAL-LABEL: func.func @train_step
// GLOBAL: %[[T:.*]]:2 = parallax.allreduce sum %{{.*}}, %{{.*}} for ["batch_statistics", "batch_statistics"] : tensor<2xf32>, tensor<1xf32>
// GLOBAL: parallax.allreduce sum %{{.*}} for ["batch_statistics"] : tensor<2xf32>
// GLOBAL: parallax.allreduce mean %{{.*}} for ["w"]
// GLOBAL-NOT: parallax.batch_sum

// Local statistics: each worker's own sums, nothing sent for them.
// LOCAL-LABEL: func.func @train_step
// LOCAL-NOT: parallax.batch_sum
// LOCAL-NOT: parallax.allreduce sum
// LOCAL: parallax.allreduce mean %{{.*}} for ["w"]

// One worker: its own sums and its own gradient, no collective at all.
// ONE-LABEL: func.func @train_step
// ONE-NOT: parallax.batch_sum
// ONE-NOT: parallax.allreduce
// ONE: parallax.apply_gradient @w
