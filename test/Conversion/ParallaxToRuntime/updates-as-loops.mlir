// RUN: parallax-opt %s --convert-parallax-variables=updates-as-loops | FileCheck %s

// GPU targets: a dense update is one linalg.generic writing the variable
// and its state in place (a kernel once mapped), with the runtime's rules;
// a row-sparse (lazy) update sorts its ids on the host
// (parallax_rt_row_segments), then one scf.parallel over the distinct rows
// and their elements sums each row's gradient rows and updates it once.
parallax.variable trainable @w : tensor<4xf32> = dense<0.5>
parallax.variable state @w.sum : tensor<4xf32> = dense<0.0>
parallax.variable trainable @a : tensor<2x3xf32> = dense<0.5>
parallax.variable state @a.exp_avg : tensor<2x3xf32> = dense<0.0>
parallax.variable state @a.exp_avg_sq : tensor<2x3xf32> = dense<0.0>
parallax.variable trainable @emb : tensor<10x4xf32> = dense<0.5>
parallax.variable trainable @table : tensor<10x2x3xf32> = dense<0.5>
parallax.variable state @table.sum : tensor<10x2x3xf32> = dense<0.0>

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
// The sparse SGD update: no runtime update call.
// CHECK-NOT: parallax_rt_update
// CHECK-DAG: %[[EMB:.*]] = memref.get_global @emb : memref<10x4xf32>
// CHECK-DAG: %[[IDS:.*]] = bufferization.to_buffer %arg2 read_only : tensor<3xi64> to memref<3xi64>
// CHECK-DAG: %[[ROWS:.*]] = bufferization.to_buffer %arg3 read_only : tensor<3x4xf32> to memref<3x4xf32>
// CHECK-DAG: %[[ORDER:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3xi64>
// CHECK-DAG: %[[STARTS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xi64>
// CHECK-DAG: %[[TARGETS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3xi64>
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : i64
// CHECK-DAG: %[[IDS_U:.*]] = memref.cast %[[IDS]] : memref<3xi64> to memref<*xi64>
// CHECK-DAG: %[[ORDER_U:.*]] = memref.cast %[[ORDER]]
// CHECK-DAG: %[[STARTS_U:.*]] = memref.cast %[[STARTS]]
// CHECK-DAG: %[[TARGETS_U:.*]] = memref.cast %[[TARGETS]]
// CHECK: %[[COUNT:.*]] = call @parallax_rt_row_segments(%{{.*}}, %[[C10]], %[[IDS_U]], %[[ORDER_U]], %[[STARTS_U]], %[[TARGETS_U]])
// CHECK: %[[DISTINCT:.*]] = arith.index_cast %[[COUNT]] : i64 to index
// CHECK: scf.parallel (%[[SEG:.*]], %[[COL:.*]]) = (%{{.*}}, %{{.*}}) to (%[[DISTINCT]], %{{.*}})
// CHECK: %[[FIRST:.*]] = memref.load %[[STARTS]][%[[SEG]]]
// CHECK: memref.load %[[STARTS]][%{{.*}}]
// The first gradient row, then the others added in order.
// CHECK: memref.load %[[ORDER]][%{{.*}}]
// CHECK: %[[R0:.*]] = memref.load %[[ROWS]][%{{.*}}, %[[COL]]]
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[R0]]) -> (f32)
// CHECK:   memref.load %[[ORDER]]
// CHECK:   %[[R:.*]] = memref.load %[[ROWS]]
// CHECK:   arith.addf %[[ACC]], %[[R]]
// CHECK: %[[ROW:.*]] = memref.load %[[TARGETS]][%[[SEG]]]
// CHECK: %[[ROWI:.*]] = arith.index_cast %[[ROW]]
// CHECK: %[[W:.*]] = memref.load %[[EMB]][%[[ROWI]], %[[COL]]]
// CHECK: %[[NEW:.*]] = arith.subf %[[W]]
// CHECK: memref.store %[[NEW]], %[[EMB]][%[[ROWI]], %[[COL]]]
// A sparse Adagrad update of a 3-D table: the state is read and written
// at the same row, every trailing dimension a loop of its own.
// CHECK: call @parallax_rt_current_step()
// CHECK: call @parallax_rt_row_segments
// CHECK: scf.parallel (%{{.*}}, %[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: memref.load %{{.*}}[%[[T2:.*]], %[[I]], %[[J]]] : memref<10x2x3xf32>
// CHECK-NEXT: memref.load %{{.*}}[%[[T2]], %[[I]], %[[J]]] : memref<10x2x3xf32>
// CHECK: math.sqrt
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[T2]], %[[I]], %[[J]]] : memref<10x2x3xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[T2]], %[[I]], %[[J]]] : memref<10x2x3xf32>
func.func @step(%g: tensor<4xf32>, %h: tensor<2x3xf32>, %ids: tensor<3xi64>, %rows: tensor<3x4xf32>, %tids: tensor<5xi64>, %trows: tensor<5x2x3xf32>) {
  parallax.update @w, %g optimizer = <adagrad, lr = 1.000000e-01, lr_decay = 1.000000e-02> state = [@w.sum] : tensor<4xf32>
  parallax.update @a, %h optimizer = <adam, lr = 1.000000e-03> state = [@a.exp_avg, @a.exp_avg_sq] : tensor<2x3xf32>
  %sparse = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  parallax.update @emb, %sparse optimizer = <sgd, lr = 1.000000e-01> : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  %tsparse = parallax.row_sparse.pack %tids, %trows : !parallax.row_sparse<tensor<10x2x3xf32>, rows = 5>
  parallax.update @table, %tsparse optimizer = <adagrad, lr = 1.000000e-01> state = [@table.sum] : !parallax.row_sparse<tensor<10x2x3xf32>, rows = 5>
  return
}
