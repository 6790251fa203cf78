// RUN: parallax-opt %s | FileCheck %s
// Round trip through the custom form, then through the generic form.
// RUN: parallax-opt %s | parallax-opt | FileCheck %s
// RUN: parallax-opt %s --mlir-print-op-generic | parallax-opt | FileCheck %s

module attributes {parallax.world = #parallax.world<workers = 4>} {

// CHECK-LABEL: parallax.variable trainable @fc.weight : tensor<4x8xf32> = dense<5.000000e-01>{{$}}
parallax.variable trainable @fc.weight : tensor<4x8xf32> = dense<0.5>
// CHECK: parallax.variable trainable @fc.bias : tensor<8xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> {distribution = #parallax.distribution<allreduce, partitions = 1>}
parallax.variable trainable @fc.bias : tensor<8xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> {distribution = #parallax.distribution<allreduce, partitions = 1>}
// A variable imported without its data (--plan-only) has no initial value.
// CHECK: parallax.variable trainable @emb : tensor<1000x64xf32> {distribution = #parallax.distribution<ps, partitions = 4>}{{$}}
parallax.variable trainable @emb : tensor<1000x64xf32> {distribution = #parallax.distribution<ps, partitions = 4>}
// CHECK: parallax.variable trainable @tied : tensor<100x16xf32> {distribution = #parallax.distribution<allgather, partitions = 1>}
parallax.variable trainable @tied : tensor<100x16xf32> {distribution = #parallax.distribution<allgather, partitions = 1>}
// Frozen constants may be integers.
// CHECK: parallax.variable @vocab_ids : tensor<3xi64> = dense<[4, 5, 6]>{{$}}
parallax.variable @vocab_ids : tensor<3xi64> = dense<[4, 5, 6]>
// Large values are stored as resource blobs, not text.
// CHECK: parallax.variable trainable @blob : tensor<2xf32> = dense_resource<blob_weights>{{$}}
parallax.variable trainable @blob : tensor<2xf32> = dense_resource<blob_weights>

// BatchNorm's running statistics: assigned by the step itself.
// CHECK: parallax.variable statistics @bn.running_mean : tensor<8xf32> = dense<0.000000e+00>{{$}}
parallax.variable statistics @bn.running_mean : tensor<8xf32> = dense<0.0>

// CHECK-LABEL: func.func @variables
func.func @variables(%update: tensor<4x8xf32>, %stat: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[W:.*]] = parallax.read @fc.weight : tensor<4x8xf32>
  %w = parallax.read @fc.weight : tensor<4x8xf32>
  // CHECK: parallax.assign @fc.weight, %{{.*}} : tensor<4x8xf32>
  parallax.assign @fc.weight, %update : tensor<4x8xf32>
  // CHECK: parallax.assign @bn.running_mean, %{{.*}} : tensor<8xf32>
  parallax.assign @bn.running_mean, %stat : tensor<8xf32>
  return %w : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @random_uniform
func.func @random_uniform() -> tensor<4x16xf32> {
  // CHECK: parallax.random_uniform seed = 7 salt = 0 stream = 3 : tensor<4x16xf32>
  %u = parallax.random_uniform seed = 7 salt = 0 stream = 3 : tensor<4x16xf32>
  return %u : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @batch_sum
func.func @batch_sum(%s: tensor<8xf32>, %n: tensor<1xf32>) -> tensor<8xf32> {
  // CHECK: %{{.*}}:2 = parallax.batch_sum %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<1xf32>
  %t:2 = parallax.batch_sum %s, %n : tensor<8xf32>, tensor<1xf32>
  return %t#0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @row_sparse
func.func @row_sparse(%ids: tensor<32xi64>, %rows: tensor<32x64xf32>) -> tensor<1000x64xf32> {
  // CHECK: %[[G:.*]] = parallax.row_sparse.pack %{{.*}}, %{{.*}} : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  %g = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  // CHECK: parallax.row_sparse.unpack %[[G]] : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  %i, %v = parallax.row_sparse.unpack %g : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  // CHECK: parallax.row_sparse.to_dense %[[G]] : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  %d = parallax.row_sparse.to_dense %g : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  return %d : tensor<1000x64xf32>
}

// CHECK-LABEL: func.func @dense_collectives
func.func @dense_collectives(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<3xi32>) {
  // CHECK: parallax.allreduce mean %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
  %ra, %rb = parallax.allreduce mean %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: parallax.allreduce mean %{{.*}}, %{{.*}} for ["w", "b"] : tensor<4x8xf32>, tensor<8xf32>
  %na, %nb = parallax.allreduce mean %a, %b for ["w", "b"] : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: parallax.allreduce sum %{{.*}} : tensor<3xi32>
  %s = parallax.allreduce sum %c : tensor<3xi32>
  // CHECK: parallax.allreduce max %{{.*}} : tensor<3xi32>
  %mx = parallax.allreduce max %c : tensor<3xi32>
  // CHECK: parallax.allreduce min %{{.*}} : tensor<3xi32>
  %mn = parallax.allreduce min %c : tensor<3xi32>
  // CHECK: %[[H:.*]] = parallax.allreduce_start mean %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>
  %h = parallax.allreduce_start mean %a, %b : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: parallax.allreduce_wait %[[H]] : tensor<4x8xf32>, tensor<8xf32>
  %wa, %wb = parallax.allreduce_wait %h : tensor<4x8xf32>, tensor<8xf32>
  // CHECK: %[[HN:.*]] = parallax.allreduce_start sum %{{.*}} for ["w"] : tensor<4x8xf32>
  %hn = parallax.allreduce_start sum %a for ["w"] : tensor<4x8xf32>
  %wn = parallax.allreduce_wait %hn : tensor<4x8xf32>
  // CHECK: parallax.allgather %{{.*}} : tensor<8xf32> -> tensor<32xf32>
  %all = parallax.allgather %b : tensor<8xf32> -> tensor<32xf32>
  // CHECK: parallax.allgather %{{.*}} for "emb" : tensor<8xf32> -> tensor<32xf32>
  %named = parallax.allgather %b for "emb" : tensor<8xf32> -> tensor<32xf32>
  // CHECK: parallax.allgather %{{.*}} : tensor<4x8xf32> -> tensor<?x8xf32>
  %dyn = parallax.allgather %a : tensor<4x8xf32> -> tensor<?x8xf32>
  // CHECK: parallax.broadcast %{{.*}} root 3 : tensor<4x8xf32>
  %bc = parallax.broadcast %a root 3 : tensor<4x8xf32>
  // CHECK: parallax.workers : i64
  %n = parallax.workers : i64
  return
}

// CHECK-LABEL: func.func @parameter_server
func.func @parameter_server(%ids: tensor<32xi64>, %rows: tensor<32x64xf32>, %dense: tensor<1000x64xf32>) -> tensor<32x64xf32> {
  // CHECK: parallax.pull @emb[%{{.*}} : tensor<32xi64>] : tensor<32x64xf32>
  %pulled = parallax.pull @emb[%ids : tensor<32xi64>] : tensor<32x64xf32>
  // CHECK: parallax.pull @emb : tensor<1000x64xf32>
  %whole = parallax.pull @emb : tensor<1000x64xf32>
  %g = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  // CHECK: parallax.push @emb, %{{.*}} : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  parallax.push @emb, %g : !parallax.row_sparse<tensor<1000x64xf32>, rows = 32>
  // CHECK: parallax.push @emb, %{{.*}} : tensor<1000x64xf32>
  parallax.push @emb, %dense : tensor<1000x64xf32>
  // Variables without a decision yet accept push and pull.
  // CHECK: parallax.pull @fc.weight : tensor<4x8xf32>
  %w = parallax.pull @fc.weight : tensor<4x8xf32>
  return %pulled : tensor<32x64xf32>
}

// The handle's type carries the reduced types.
// CHECK: func.func private @takes_handle(!parallax.allreduce_handle<tensor<4x8xf32>, tensor<8xf32>>)
func.func private @takes_handle(!parallax.allreduce_handle<tensor<4x8xf32>, tensor<8xf32>>)

}

{-#
  dialect_resources: {
    builtin: {
      blob_weights: "0x040000000000803F00000040"
    }
  }
#-}

// CHECK-LABEL: func.func @library_call
// CHECK: parallax.library_call @convolve(%arg0, %arg1) outs(%arg2) scalars = [1, 1, 0, 0, 1, 1, 1] : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
func.func private @convolve(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64)
func.func @library_call(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %init: tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32> {
  %y = parallax.library_call @convolve(%x, %w) outs(%init) scalars = [1, 1, 0, 0, 1, 1, 1]
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}
