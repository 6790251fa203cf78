// RUN: parallax-opt %s --split-input-file --parallax-group-pulls | FileCheck %s

// A pull whose ids are ready at the start joins the first pull, above the
// compute between them; pulls keep their order.
module {
  parallax.variable trainable @a : tensor<100x8xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @b : tensor<50x4xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  // CHECK-LABEL: func.func @lookups
  // CHECK-NEXT: %[[A:.*]] = parallax.pull @a[%arg0
  // CHECK-NEXT: %[[B:.*]] = parallax.pull @b[%arg1
  // CHECK-NEXT: %[[X:.*]] = arith.addf %[[A]], %[[A]]
  // CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[B]], %[[B]]
  func.func @lookups(%ia: tensor<6xi64>, %ib: tensor<6xi64>) -> (tensor<6x8xf32>, tensor<6x4xf32>) {
    %a = parallax.pull @a[%ia : tensor<6xi64>] : tensor<6x8xf32>
    %x = arith.addf %a, %a : tensor<6x8xf32>
    %b = parallax.pull @b[%ib : tensor<6xi64>] : tensor<6x4xf32>
    %y = arith.mulf %b, %b : tensor<6x4xf32>
    return %x, %y : tensor<6x8xf32>, tensor<6x4xf32>
  }
}

// -----

// The pure ops computing a pull's ids move before the run's first pull;
// no pull moves above an op that may write memory or communicate (a
// push), and one computed by such an op starts a new run after it.
module {
  parallax.variable trainable @a : tensor<100x8xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @b : tensor<50x4xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @c : tensor<4xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 1>}
  parallax.variable @n : tensor<6xi64> = dense<1>
  // CHECK-LABEL: func.func @barriers
  // CHECK-NEXT: %[[IDS:.*]] = arith.addi %arg0, %arg0
  // CHECK-NEXT: %[[A:.*]] = parallax.pull @a[%arg0
  // CHECK-NEXT: %[[B:.*]] = parallax.pull @b[%[[IDS]]
  // CHECK-NEXT: arith.addf %[[A]], %[[A]]
  // CHECK-NEXT: parallax.push @c
  // CHECK-NEXT: parallax.pull @a[%arg0
  // CHECK-NEXT: arith.mulf
  // CHECK-NEXT: %[[N:.*]] = parallax.read @n
  // CHECK-NEXT: parallax.pull @b[%[[N]]
  func.func @barriers(%ia: tensor<6xi64>, %g: tensor<4xf32>, %f: tensor<4xf32>) -> (tensor<6x8xf32>, tensor<6x4xf32>, tensor<6x8xf32>, tensor<6x4xf32>) {
    %a = parallax.pull @a[%ia : tensor<6xi64>] : tensor<6x8xf32>
    %x = arith.addf %a, %a : tensor<6x8xf32>
    %ids = arith.addi %ia, %ia : tensor<6xi64>
    %b = parallax.pull @b[%ids : tensor<6xi64>] : tensor<6x4xf32>
    parallax.push @c, %g optimizer = <sgd, lr = 1.000000e-01> : tensor<4xf32>
    %y = arith.mulf %f, %f : tensor<4xf32>
    %again = parallax.pull @a[%ia : tensor<6xi64>] : tensor<6x8xf32>
    %n = parallax.read @n : tensor<6xi64>
    %b2 = parallax.pull @b[%n : tensor<6xi64>] : tensor<6x4xf32>
    return %x, %b, %again, %b2 : tensor<6x8xf32>, tensor<6x4xf32>, tensor<6x8xf32>, tensor<6x4xf32>
  }
}

// -----

// Pulls of whole variables stay where they are; pulls inside a region are
// grouped within their block.
module {
  parallax.variable trainable @a : tensor<100x8xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @w : tensor<4x4xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 1>}
  // CHECK-LABEL: func.func @whole_and_nested
  // CHECK-NEXT: arith.constant
  // CHECK-NEXT: parallax.pull @w :
  // CHECK-NEXT: scf.if
  // CHECK-NEXT: parallax.pull @a[%arg0
  // CHECK-NEXT: parallax.pull @a[%arg0
  // CHECK-NEXT: arith.addf
  func.func @whole_and_nested(%ia: tensor<6xi64>, %c: i1) -> (tensor<4x4xf32>, tensor<6x8xf32>) {
    %zero = arith.constant dense<0.0> : tensor<6x8xf32>
    %w = parallax.pull @w : tensor<4x4xf32>
    %r = scf.if %c -> tensor<6x8xf32> {
      %a = parallax.pull @a[%ia : tensor<6xi64>] : tensor<6x8xf32>
      %s = arith.addf %a, %zero : tensor<6x8xf32>
      %a2 = parallax.pull @a[%ia : tensor<6xi64>] : tensor<6x8xf32>
      %t = arith.addf %s, %a2 : tensor<6x8xf32>
      scf.yield %t : tensor<6x8xf32>
    } else {
      scf.yield %zero : tensor<6x8xf32>
    }
    return %w, %r : tensor<4x4xf32>, tensor<6x8xf32>
  }
}
