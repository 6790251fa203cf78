// RUN: parallax-opt %s --split-input-file --parallax-async-allreduce | FileCheck %s

// The wait sinks to the first use; independent compute overlaps.
// CHECK-LABEL: func.func @overlap
// CHECK-NEXT: %[[H:.*]] = parallax.allreduce_start mean %{{.*}} : tensor<4xf32>
// CHECK-NEXT: %[[X:.*]] = arith.mulf
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[X]], %[[X]]
// CHECK-NEXT: %[[R:.*]] = parallax.allreduce_wait %[[H]] : tensor<4xf32>
// CHECK-NEXT: arith.subf %[[R]], %[[Y]]
func.func @overlap(%g: tensor<4xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = parallax.allreduce mean %g : tensor<4xf32>
  %x = arith.mulf %a, %a : tensor<4xf32>
  %y = arith.addf %x, %x : tensor<4xf32>
  %z = arith.subf %r, %y : tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// Consecutive reductions all start before the first wait; waits complete in
// the order the reductions were issued.
// CHECK-LABEL: func.func @pipeline
// CHECK-NEXT: %[[H0:.*]] = parallax.allreduce_start mean %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<8xf32>
// CHECK-NEXT: %[[H1:.*]] = parallax.allreduce_start sum
// CHECK-NEXT: %[[R0:.*]]:2 = parallax.allreduce_wait %[[H0]] : tensor<4xf32>, tensor<8xf32>
// CHECK-NEXT: %[[R1:.*]] = parallax.allreduce_wait %[[H1]] : tensor<4xf32>
// CHECK-NEXT: return %[[R0]]#0, %[[R0]]#1, %[[R1]]
func.func @pipeline(%a: tensor<4xf32>, %b: tensor<8xf32>, %c: tensor<4xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) {
  %ra, %rb = parallax.allreduce mean %a, %b : tensor<4xf32>, tensor<8xf32>
  %rc = parallax.allreduce sum %c : tensor<4xf32>
  return %ra, %rb, %rc : tensor<4xf32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// Other Parallax collectives overlap with the reduction; a call (unknown
// effects) does not.
// CHECK-LABEL: func.func @collectives_and_calls
// CHECK-NEXT: %[[H:.*]] = parallax.allreduce_start
// CHECK-NEXT: parallax.broadcast
// CHECK-NEXT: parallax.push
// CHECK-NEXT: parallax.allreduce_wait %[[H]]
// CHECK-NEXT: call @opaque()
parallax.variable trainable @w : tensor<4xf32>
func.func private @opaque()
func.func @collectives_and_calls(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = parallax.allreduce mean %a : tensor<4xf32>
  %b = parallax.broadcast %a root 0 : tensor<4xf32>
  parallax.push @w, %a : tensor<4xf32>
  func.call @opaque() : () -> ()
  return %r, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// An unused result is still reduced (every worker must take part), and
// waited for before the block ends. A use inside a region waits before the
// region op.
// CHECK-LABEL: func.func @unused_and_nested
// CHECK-NEXT: %[[H0:.*]] = parallax.allreduce_start sum
// CHECK-NEXT: %[[H1:.*]] = parallax.allreduce_start sum
// CHECK-NEXT: parallax.allreduce_wait %[[H0]]
// CHECK-NEXT: %[[R:.*]] = parallax.allreduce_wait %[[H1]]
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.addf %[[R]], %[[R]]
func.func @unused_and_nested(%a: tensor<4xf32>, %c: i1) {
  %unused = parallax.allreduce sum %a : tensor<4xf32>
  %r = parallax.allreduce sum %a : tensor<4xf32>
  scf.if %c {
    %x = arith.addf %r, %r : tensor<4xf32>
  }
  return
}
