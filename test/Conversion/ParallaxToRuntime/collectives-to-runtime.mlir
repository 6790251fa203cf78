// RUN: parallax-opt %s --split-input-file --convert-parallax-collectives --verify-diagnostics | FileCheck %s

// An asynchronous bucket: each gradient is added (copied) to bucket 0 with
// a fresh result buffer and named after the variable of its `for` list; the
// handle is the bucket number and the buffers, so the wait yields views of
// them. A synchronous allreduce is bucket 1, an allgather and a broadcast
// fill fresh buffers. Traffic is counted under the names of the `for`
// lists, or the collective's own name.
// The result buffer is filled at the wait: the declaration marks it
// retained, so it is not freed right after the add.
// CHECK-DAG: func.func private @parallax_rt_allreduce_add_f32(i64, !llvm.ptr, memref<*xf32>, memref<*xf32> {parallax.retained})
// CHECK-DAG: llvm.mlir.global internal constant @[[W:.*]]("w\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[BIAS:.*]]("bias\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[EMB:.*]]("emb\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[ALLREDUCE:.*]]("allreduce\00")
// CHECK-LABEL: func.func @step
func.func @step(%a: tensor<8x4xf32>, %b: tensor<4xf32>, %ids: tensor<3xi64>, %c: tensor<2xf32>) -> (tensor<12xi64>, tensor<2xf32>, tensor<2xf32>) {
  // CHECK: %[[BUCKET:.*]] = arith.constant 0 : i64
  // CHECK: %[[RA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xf32>
  // CHECK: %[[NW:.*]] = llvm.mlir.addressof @[[W]]
  // CHECK: call @parallax_rt_allreduce_add_f32(%[[BUCKET]], %[[NW]], %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  // CHECK: %[[RB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  // CHECK: %[[NB:.*]] = llvm.mlir.addressof @[[BIAS]]
  // CHECK: call @parallax_rt_allreduce_add_f32(%[[BUCKET]], %[[NB]]
  // CHECK: %[[MEAN:.*]] = arith.constant 1 : i32
  // CHECK: call @parallax_rt_allreduce_start(%[[BUCKET]], %[[MEAN]])
  %h = parallax.allreduce_start mean %a, %b for ["w", "bias"] : tensor<8x4xf32>, tensor<4xf32>
  // CHECK: %[[NE:.*]] = llvm.mlir.addressof @[[EMB]]
  // CHECK: call @parallax_rt_allgather_i64(%[[NE]]
  %all = parallax.allgather %ids for "emb" : tensor<3xi64> -> tensor<12xi64>
  // CHECK: call @parallax_rt_allreduce_wait(%[[BUCKET]])
  // CHECK: %[[A:.*]] = bufferization.to_tensor %[[RA]] restrict writable
  // CHECK: %[[B:.*]] = bufferization.to_tensor %[[RB]] restrict writable
  %r:2 = parallax.allreduce_wait %h : tensor<8x4xf32>, tensor<4xf32>
  // CHECK: parallax.update @w, %[[A]]
  parallax.update @w, %r#0 optimizer = <sgd, lr = 1.000000e-01> : tensor<8x4xf32>
  parallax.update @bias, %r#1 optimizer = <sgd, lr = 1.000000e-01> : tensor<4xf32>
  // CHECK: %[[SYNC:.*]] = arith.constant 1 : i64
  // CHECK: %[[NS:.*]] = llvm.mlir.addressof @[[ALLREDUCE]]
  // CHECK: call @parallax_rt_allreduce_add_f32(%[[SYNC]], %[[NS]]
  // CHECK: %[[SUM:.*]] = arith.constant 0 : i32
  // CHECK: call @parallax_rt_allreduce_start(%[[SYNC]], %[[SUM]])
  // CHECK: call @parallax_rt_allreduce_wait
  %s = parallax.allreduce sum %c : tensor<2xf32>
  // CHECK: %[[ROOT:.*]] = arith.constant 0 : i64
  // CHECK: call @parallax_rt_broadcast_f32(%{{.*}}, %{{.*}}, %[[ROOT]])
  %w0 = parallax.broadcast %c root 0 : tensor<2xf32>
  // The number of workers of the run: a runtime call.
  // CHECK: %[[N:.*]] = call @parallax_rt_workers() : () -> i64
  // CHECK: arith.cmpi eq, %[[N]]
  %n = parallax.workers : i64
  %one = arith.constant 1 : i64
  %alone = arith.cmpi eq, %n, %one : i64
  // CHECK-NOT: parallax.allreduce
  // CHECK-NOT: parallax.allgather
  // CHECK-NOT: parallax.broadcast
  // CHECK-NOT: parallax.workers
  return %all, %s, %w0 : tensor<12xi64>, tensor<2xf32>, tensor<2xf32>
}
parallax.variable trainable @w : tensor<8x4xf32> = dense<0.5>
parallax.variable trainable @bias : tensor<4xf32> = dense<0.5>

// -----

func.func @f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{the runtime reduces f32 tensors only, input 0 is 'tensor<4xf64>'}}
  %r = parallax.allreduce mean %a : tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

func.func @dynamic(%a: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{the runtime gathers statically shaped tensors of f32, f64, f16 or integers only, not 'tensor<?xf32>'}}
  %r = parallax.allgather %a : tensor<4xf32> -> tensor<?xf32>
  return %r : tensor<?xf32>
}
