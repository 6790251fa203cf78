// RUN: parallax-opt %s --split-input-file --convert-parallax-variables | FileCheck %s

// Parameter-server variables: partitions are spread over the 4 servers by
// size (the largest first, from the least loaded server on: @emb on servers
// 0 and 1, @small then on 2 and 3), the optimizer state
// lives with its variable's partitions; a pull of rows fills a fresh buffer,
// a whole pull refreshes the global it then views, and a push calls the
// runtime with the shards, the variable, its state and the gradient.
// A queued pull keeps the table and the result buffer until
// pull_rows_complete: both are retained.
// CHECK-DAG: func.func private @parallax_rt_pull_rows_request_f32(!llvm.ptr, i64, i64, memref<*xf32> {parallax.retained}, memref<*xi64>, memref<*xf32> {parallax.retained})
module attributes {parallax.world = #parallax.world<workers = 4>} {
  parallax.variable trainable @emb : tensor<100x8xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable state @emb.sum : tensor<100x8xf32> = dense<0.0>
  parallax.variable trainable @small : tensor<10x2xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @w : tensor<8xf32> = dense<0.5> {distribution = #parallax.distribution<allreduce, partitions = 1>}
  // CHECK: memref.global "private" @emb : memref<100x8xf32> = dense<5.000000e-01> {alignment = 64 : i64, parallax.shards = array<i64: 2, 0>, parallax.variable = "trainable"}
  // CHECK: memref.global "private" @emb.sum : memref<100x8xf32> = dense<0.000000e+00> {alignment = 64 : i64, parallax.shards = array<i64: 2, 0>, parallax.variable = "state"}
  // CHECK: memref.global "private" @small : memref<10x2xf32> = dense<5.000000e-01> {alignment = 64 : i64, parallax.shards = array<i64: 2, 2>, parallax.variable = "trainable"}
  // CHECK: memref.global "private" @w : memref<8xf32> = dense<5.000000e-01> {alignment = 64 : i64, parallax.variable = "trainable"}

  // CHECK-LABEL: func.func @train_step
  func.func @train_step(%ids: tensor<6xi64>, %rows: tensor<6x8xf32>, %g: tensor<10x2xf32>) -> (tensor<6x8xf32>, tensor<10x2xf32>) {
    // CHECK: %[[P:.*]] = arith.constant 2 : i64
    // CHECK: %[[S:.*]] = arith.constant 0 : i64
    // CHECK: %[[EMB:.*]] = memref.get_global @emb : memref<100x8xf32>
    // CHECK: %[[EMBU:.*]] = memref.cast %[[EMB]]
    // CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<6x8xf32>
    // CHECK: %[[IDS:.*]] = bufferization.to_buffer %arg0 read_only
    // CHECK: %[[IDSU:.*]] = memref.cast %[[IDS]]
    // CHECK: %[[OUTU:.*]] = memref.cast %[[OUT]]
    // CHECK: call @parallax_rt_pull_rows_request_f32(%{{.*}}, %[[P]], %[[S]], %[[EMBU]], %[[IDSU]], %[[OUTU]])
    // The request is completed before the next op that is not a buffer or
    // constant (the whole pull), and the view follows the completion.
    // CHECK: %[[SMALL:.*]] = memref.get_global @small
    // CHECK-NEXT: memref.cast %[[SMALL]]
    // CHECK-NEXT: call @parallax_rt_pull_rows_complete() : () -> ()
    // CHECK-NEXT: %[[PULLED:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
    // CHECK-NEXT: call @parallax_rt_pull_f32
    %pulled = parallax.pull @emb[%ids : tensor<6xi64>] : tensor<6x8xf32>
    // CHECK: %[[WHOLE:.*]] = bufferization.to_tensor %[[SMALL]] restrict
    %whole = parallax.pull @small : tensor<10x2xf32>
    // CHECK: call @parallax_rt_push_adagrad_sparse_f32({{.*}}) : (!llvm.ptr, i64, i64, memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xf32>, !llvm.ptr) -> ()
    // CHECK-NOT: call @parallax_rt_push_send
    %sparse = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<100x8xf32>, rows = 6>
    parallax.push @emb, %sparse optimizer = <adagrad, lr = 1.000000e-01> state = [@emb.sum] : !parallax.row_sparse<tensor<100x8xf32>, rows = 6>
    // The step's last push, sparse or dense, sends the queued pushes.
    // CHECK: call @parallax_rt_push_sgd_f32({{.*}}) : (!llvm.ptr, i64, i64, memref<*xf32>, memref<*xf32>, !llvm.ptr) -> ()
    // CHECK-NEXT: call @parallax_rt_push_send() : () -> ()
    parallax.push @small, %g optimizer = <sgd, lr = 1.000000e-01> : tensor<10x2xf32>
    // CHECK: return %[[PULLED]], %[[WHOLE]]
    return %pulled, %whole : tensor<6x8xf32>, tensor<10x2xf32>
  }
}

// -----

// Pulls of rows that follow each other are one run: requests for both,
// then one completion before the first use, then the views.
module attributes {parallax.world = #parallax.world<workers = 2>} {
  parallax.variable trainable @a : tensor<100x8xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @b : tensor<50x4xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  // CHECK-LABEL: func.func @run
  func.func @run(%ia: tensor<6xi64>, %ib: tensor<3xi64>) -> (tensor<6x8xf32>, tensor<3x4xf32>) {
    // CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<6x8xf32>
    // CHECK: call @parallax_rt_pull_rows_request_f32
    // CHECK-NOT: call
    // CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x4xf32>
    // CHECK-NOT: call
    // CHECK: call @parallax_rt_pull_rows_request_f32
    // CHECK-NEXT: call @parallax_rt_pull_rows_complete() : () -> ()
    // CHECK-NEXT: %[[TA:.*]] = bufferization.to_tensor %[[A]] restrict writable
    // CHECK-NEXT: %[[TB:.*]] = bufferization.to_tensor %[[B]] restrict writable
    // CHECK-NEXT: arith.addf %[[TA]], %[[TA]]
    %a = parallax.pull @a[%ia : tensor<6xi64>] : tensor<6x8xf32>
    %b = parallax.pull @b[%ib : tensor<3xi64>] : tensor<3x4xf32>
    %x = arith.addf %a, %a : tensor<6x8xf32>
    return %x, %b : tensor<6x8xf32>, tensor<3x4xf32>
  }
}

// -----

// One send, after the last push of the block, sparse or dense: the
// pushes of every variable go in one exchange.
module attributes {parallax.world = #parallax.world<workers = 2>} {
  parallax.variable trainable @a : tensor<100x8xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @b : tensor<50x4xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @c : tensor<10x2xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  // CHECK-LABEL: func.func @two_tables
  // CHECK: call @parallax_rt_push_sgd_sparse_f32
  // CHECK-NOT: call @parallax_rt_push_send
  // CHECK: call @parallax_rt_push_sgd_f32
  // CHECK-NOT: call @parallax_rt_push_send
  // CHECK: call @parallax_rt_push_sgd_sparse_f32
  // CHECK-NEXT: call @parallax_rt_push_send() : () -> ()
  // CHECK-NOT: call @parallax_rt_push_send
  // CHECK: return
  func.func @two_tables(%ia: tensor<6xi64>, %ra: tensor<6x8xf32>, %ib: tensor<3xi64>, %rb: tensor<3x4xf32>, %gc: tensor<10x2xf32>) {
    %sa = parallax.row_sparse.pack %ia, %ra : !parallax.row_sparse<tensor<100x8xf32>, rows = 6>
    parallax.push @a, %sa optimizer = <sgd, lr = 1.000000e-01> : !parallax.row_sparse<tensor<100x8xf32>, rows = 6>
    parallax.push @c, %gc optimizer = <sgd, lr = 1.000000e-01> : tensor<10x2xf32>
    %sb = parallax.row_sparse.pack %ib, %rb : !parallax.row_sparse<tensor<50x4xf32>, rows = 3>
    parallax.push @b, %sb optimizer = <sgd, lr = 1.000000e-01> : !parallax.row_sparse<tensor<50x4xf32>, rows = 3>
    return
  }
}
