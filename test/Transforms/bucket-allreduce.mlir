// RUN: parallax-opt %s --split-input-file --parallax-bucket-allreduce | FileCheck %s
// RUN: parallax-opt %s --split-input-file --parallax-bucket-allreduce=bucket-bytes=1024 | FileCheck %s --check-prefix=SMALL

// All gradients fit one bucket: one allreduce, placed where the last one
// was, whose results replace the originals in order.
// CHECK-LABEL: func.func @merge
// CHECK-SAME: (%[[A:.*]]: tensor<16x16xf32>, %[[B:.*]]: tensor<16xf32>, %[[C:.*]]: tensor<64xf32>)
// CHECK-NEXT: %[[R:.*]]:3 = parallax.allreduce mean %[[A]], %[[B]], %[[C]] : tensor<16x16xf32>, tensor<16xf32>, tensor<64xf32>
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1, %[[R]]#2
// 1 KiB buckets: 1024 B alone; 64 B + 256 B together.
// SMALL-LABEL: func.func @merge
// SMALL-NEXT: parallax.allreduce mean %{{.*}} : tensor<16x16xf32>
// SMALL-NEXT: parallax.allreduce mean %{{.*}}, %{{.*}} : tensor<16xf32>, tensor<64xf32>
// SMALL-NEXT: return
func.func @merge(%a: tensor<16x16xf32>, %b: tensor<16xf32>, %c: tensor<64xf32>) -> (tensor<16x16xf32>, tensor<16xf32>, tensor<64xf32>) {
  %ra = parallax.allreduce mean %a : tensor<16x16xf32>
  %rb = parallax.allreduce mean %b : tensor<16xf32>
  %rc = parallax.allreduce mean %c : tensor<64xf32>
  return %ra, %rb, %rc : tensor<16x16xf32>, tensor<16xf32>, tensor<64xf32>
}

// -----

// A bucket names each input's variable where any of its allreduces does.
// CHECK-LABEL: func.func @names
// CHECK-NEXT: parallax.allreduce mean %{{.*}}, %{{.*}}, %{{.*}} for ["w", "allreduce", "b"] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @names(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %ra = parallax.allreduce mean %a for ["w"] : tensor<4xf32>
  %rb = parallax.allreduce mean %b : tensor<4xf32>
  %rc = parallax.allreduce mean %c for ["b"] : tensor<4xf32>
  return %ra, %rb, %rc : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Different reductions never share a bucket.
// CHECK-LABEL: func.func @kinds
// CHECK-NEXT: parallax.allreduce mean %{{.*}} : tensor<4xf32>
// CHECK-NEXT: parallax.allreduce sum %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: return
func.func @kinds(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %ra = parallax.allreduce mean %a : tensor<4xf32>
  %rb = parallax.allreduce sum %b : tensor<4xf32>
  %rc = parallax.allreduce sum %c : tensor<4xf32>
  return %ra, %rb, %rc : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A use of a pending result closes the bucket before the use; compute that
// does not use it stays inside.
// CHECK-LABEL: func.func @use_closes_bucket
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK-NEXT: %[[R:.*]]:2 = parallax.allreduce mean
// CHECK-NEXT: arith.mulf %[[R]]#0, %[[R]]#0
// CHECK-NEXT: parallax.allreduce mean
// CHECK-NEXT: return
func.func @use_closes_bucket(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %ra = parallax.allreduce mean %a : tensor<4xf32>
  %sum = arith.addf %a, %b : tensor<4xf32>
  %rb = parallax.allreduce mean %sum : tensor<4xf32>
  %sq = arith.mulf %ra, %ra : tensor<4xf32>
  %rc = parallax.allreduce mean %sq : tensor<4xf32>
  return %rb, %rc : tensor<4xf32>, tensor<4xf32>
}

// -----

// Other collectives and calls (unknown effects) end a run: the order of
// collectives is kept on every worker.
// CHECK-LABEL: func.func @barriers
// CHECK-NEXT: parallax.allreduce mean %{{.*}} : tensor<4xf32>
// CHECK-NEXT: parallax.broadcast
// CHECK-NEXT: parallax.allreduce mean %{{.*}} : tensor<4xf32>
// CHECK-NEXT: call @opaque()
// CHECK-NEXT: parallax.allreduce mean %{{.*}} : tensor<4xf32>
func.func private @opaque()
func.func @barriers(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r0 = parallax.allreduce mean %a : tensor<4xf32>
  %b = parallax.broadcast %a root 0 : tensor<4xf32>
  %r1 = parallax.allreduce mean %a : tensor<4xf32>
  func.call @opaque() : () -> ()
  %r2 = parallax.allreduce mean %a : tensor<4xf32>
  return %r0, %r1, %r2, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Nested blocks are bucketed on their own; the region op that holds a
// collective is a barrier for its parent block.
// CHECK-LABEL: func.func @nested
// CHECK-NEXT: parallax.allreduce mean %{{.*}} : tensor<4xf32>
// CHECK-NEXT: scf.if
// CHECK-NEXT: parallax.allreduce mean %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>
// CHECK: }
// CHECK-NEXT: parallax.allreduce mean %{{.*}} : tensor<4xf32>
func.func @nested(%a: tensor<4xf32>, %c: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %r0 = parallax.allreduce mean %a : tensor<4xf32>
  scf.if %c {
    %x = parallax.allreduce mean %a : tensor<4xf32>
    %y = parallax.allreduce mean %a : tensor<4xf32>
  }
  %r1 = parallax.allreduce mean %a : tensor<4xf32>
  return %r0, %r1 : tensor<4xf32>, tensor<4xf32>
}
