// RUN: parallax-opt %s --canonicalize | FileCheck %s

// Unpacking a freshly packed row-sparse value yields its parts.
// CHECK-LABEL: func.func @unpack_of_pack
// CHECK-SAME: (%[[I:.*]]: tensor<4xi64>, %[[V:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[I]], %[[V]]
func.func @unpack_of_pack(%i: tensor<4xi64>, %v: tensor<4x8xf32>) -> (tensor<4xi64>, tensor<4x8xf32>) {
  %g = parallax.row_sparse.pack %i, %v : !parallax.row_sparse<tensor<100x8xf32>, rows = 4>
  %i2, %v2 = parallax.row_sparse.unpack %g : !parallax.row_sparse<tensor<100x8xf32>, rows = 4>
  return %i2, %v2 : tensor<4xi64>, tensor<4x8xf32>
}

// Collectives are never erased, even with unused results: every worker must
// take part. Pure row-sparse ops are.
// CHECK-LABEL: func.func @keep_collectives
// CHECK-NEXT: parallax.allreduce mean
// CHECK-NEXT: parallax.allgather
// CHECK-NEXT: parallax.broadcast
// CHECK-NEXT: return
func.func @keep_collectives(%a: tensor<4xf32>, %i: tensor<4xi64>, %v: tensor<4x8xf32>) {
  %g = parallax.row_sparse.pack %i, %v : !parallax.row_sparse<tensor<100x8xf32>, rows = 4>
  %d = parallax.row_sparse.to_dense %g : !parallax.row_sparse<tensor<100x8xf32>, rows = 4>
  %r = parallax.allreduce mean %a : tensor<4xf32>
  %all = parallax.allgather %a : tensor<4xf32> -> tensor<?xf32>
  %b = parallax.broadcast %a root 0 : tensor<4xf32>
  return
}
