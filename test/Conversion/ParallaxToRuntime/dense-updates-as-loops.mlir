// RUN: parallax-opt %s --convert-parallax-variables=dense-updates-as-loops | FileCheck %s

// GPU targets: a dense update is one linalg.generic writing the variable
// and its state in place (a kernel once mapped), with the runtime's rules;
// a row-sparse (lazy) update stays a runtime call.
parallax.variable trainable @w : tensor<4xf32> = dense<0.5>
parallax.variable state @w.sum : tensor<4xf32> = dense<0.0>
parallax.variable trainable @a : tensor<2x3xf32> = dense<0.5>
parallax.variable state @a.exp_avg : tensor<2x3xf32> = dense<0.0>
parallax.variable state @a.exp_avg_sq : tensor<2x3xf32> = dense<0.0>
parallax.variable trainable @emb : tensor<10x4xf32> = dense<0.5>

// CHECK-LABEL: func.func @step
// Adagrad: lr / (1 + (t - 1) * lr_decay) from the runtime's step number.
// CHECK-DAG: %[[W:.*]] = memref.get_global @w : memref<4xf32>
// CHECK-DAG: %[[SUM:.*]] = memref.get_global @w.sum : memref<4xf32>
// CHECK: %[[T:.*]] = call @parallax_rt_current_step() : () -> i64
// CHECK: %[[TF:.*]] = arith.sitofp %[[T]] : i64 to f32
// CHECK: arith.subf %[[TF]]
// CHECK: %[[G:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: linalg.generic {{.*}} ins(%[[G]] : memref<4xf32>) outs(%[[W]], %[[SUM]] : memref<4xf32>, memref<4xf32>)
// CHECK: math.sqrt
// CHECK: linalg.yield
// Adam: bias corrections 1 - beta^t, two state buffers.
// CHECK: call @parallax_rt_current_step()
// CHECK: math.powf
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>)
// CHECK: linalg.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32
// The sparse update: the runtime's lazy rows.
// CHECK: call @parallax_rt_update_sgd_sparse_f32
func.func @step(%g: tensor<4xf32>, %h: tensor<2x3xf32>, %ids: tensor<3xi64>, %rows: tensor<3x4xf32>) {
  parallax.update @w, %g optimizer = <adagrad, lr = 1.000000e-01, lr_decay = 1.000000e-02> state = [@w.sum] : tensor<4xf32>
  parallax.update @a, %h optimizer = <adam, lr = 1.000000e-03> state = [@a.exp_avg, @a.exp_avg_sq] : tensor<2x3xf32>
  %sparse = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  parallax.update @emb, %sparse optimizer = <sgd, lr = 1.000000e-01> : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  return
}
