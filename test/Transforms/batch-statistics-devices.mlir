// RUN: parallax-opt %s --split-input-file --parallax-autodiff --parallax-sparsity-analysis=workers=2 --parallax-distribute=workers=2 | FileCheck %s
// RUN: not parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis=workers=2 --parallax-distribute="workers=2 local-batch-statistics" 2>&1 | FileCheck %s --check-prefix=LOCAL
// RUN: not parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis --parallax-distribute="workers-at-run-time" 2>&1 | FileCheck %s --check-prefix=RUNTIME
// RUN: not parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis --parallax-distribute=workers=1 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: parallax-opt %s --convert-parallax-to-linalg -verify-diagnostics

// A batch sum of one value per channel and device (a training-mode
// BatchNorm at batch 1 on 1x1 maps) needs the sums of two devices: with
// synchronised statistics on 2 workers it becomes an allreduce; on one
// worker, with each worker's own statistics, for a number of workers
// known only at run time, or lowered on one device, it is an error.
parallax.variable trainable @w : tensor<4x2xf32> = dense<0.5>
func.func @forward(%x: tensor<1x4xf32>) -> tensor<f32> {
  %w = parallax.read @w : tensor<4x2xf32>
  %h = parallax.matmul %x, %w : tensor<1x4xf32>, tensor<4x2xf32>
  %count = arith.constant dense<1.0> : tensor<1xf32>
  %s = parallax.reduce sum %h axes = [0] : tensor<1x2xf32>
  // expected-error @+1 {{training-mode batch statistics with one value per channel need the sums of at least 2 devices: train with a larger batch, or on that many workers (--workers N)}}
  %t:2 = parallax.batch_sum %s, %count {min_devices = 2 : i64} : tensor<2xf32>, tensor<1xf32>
  %mean = parallax.div %t#0, %t#1 : tensor<2xf32>, tensor<1xf32>
  %c = parallax.sub %h, %mean : tensor<1x2xf32>, tensor<2xf32>
  %sq = parallax.mul %c, %c : tensor<1x2xf32>, tensor<1x2xf32>
  %l = parallax.reduce mean %sq axes = [0, 1] : tensor<1x2xf32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @train_step
// CHECK: parallax.allreduce sum %{{.*}}, %{{.*}} for ["batch_statistics", "batch_statistics"] : tensor<2xf32>, tensor<1xf32>
// CHECK-NOT: parallax.batch_sum

// LOCAL: error: training-mode batch statistics with one value per channel on each worker need the sums of at least 2 workers, not each worker's own (local batch statistics)
// RUNTIME: error: training-mode batch statistics with one value per channel on each worker need the sums of at least 2 workers: the number of workers is not known until the program runs (compile with --workers N)
// ONE: error: training-mode batch statistics with one value per channel on each worker need the sums of at least 2 workers, not 1
