// RUN: parallax-opt %s --split-input-file --parallax-local-when-alone | FileCheck %s

// A program whose world is read at run time: with one worker, the run of
// two pulls is a gather of each table's read, the push of a row-sparse
// gradient a lazy update by the same rule with the same state, the pull of
// a whole variable its read; with several, the pulls (still one run) and
// the pushes as they were. A push without an optimizer is left alone.
module attributes {parallax.world = #parallax.world<workers = 0>} {
  parallax.variable trainable @a : tensor<100x8xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable trainable @b : tensor<50x4xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  parallax.variable state @a.sum : tensor<100x8xf32> = dense<0.0>
  parallax.variable trainable @c : tensor<4xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 1>}
  // CHECK-LABEL: func.func @step
  // CHECK: %[[N:.*]] = parallax.workers : i64
  // CHECK: %[[ALONE:.*]] = arith.cmpi eq, %[[N]], %c1_i64
  // CHECK: %[[ROWS:.*]]:2 = scf.if %[[ALONE]] -> (tensor<6x8xf32>, tensor<6x4xf32>) {
  // CHECK-NEXT: %[[TA:.*]] = parallax.read @a : tensor<100x8xf32>
  // CHECK-NEXT: %[[RA:.*]] = parallax.gather %[[TA]][%arg0] axis = 0
  // CHECK-NEXT: %[[TB:.*]] = parallax.read @b : tensor<50x4xf32>
  // CHECK-NEXT: %[[RB:.*]] = parallax.gather %[[TB]][%arg1] axis = 0
  // CHECK-NEXT: scf.yield %[[RA]], %[[RB]]
  // CHECK-NEXT: } else {
  // CHECK-NEXT: %[[PA:.*]] = parallax.pull @a[%arg0
  // CHECK-NEXT: %[[PB:.*]] = parallax.pull @b[%arg1
  // CHECK-NEXT: scf.yield %[[PA]], %[[PB]]
  // CHECK: %[[G:.*]] = parallax.row_sparse.pack %arg0, %[[ROWS]]#0
  // CHECK: scf.if %[[ALONE]] {
  // CHECK-NEXT: parallax.update @a, %[[G]] optimizer = <adagrad, lr = 1.000000e-01> state = [@a.sum]
  // CHECK-NEXT: } else {
  // CHECK-NEXT: parallax.push @a, %[[G]] optimizer = <adagrad, lr = 1.000000e-01> state = [@a.sum]
  // CHECK-NEXT: }
  // CHECK-NEXT: parallax.push @c, %arg2 :
  // CHECK-NEXT: %[[C:.*]] = scf.if %[[ALONE]] -> (tensor<4xf32>) {
  // CHECK-NEXT: %[[TC:.*]] = parallax.read @c : tensor<4xf32>
  // CHECK-NEXT: scf.yield %[[TC]]
  // CHECK-NEXT: } else {
  // CHECK-NEXT: %[[PC:.*]] = parallax.pull @c : tensor<4xf32>
  // CHECK-NEXT: scf.yield %[[PC]]
  // CHECK: return %[[ROWS]]#1, %[[C]]
  func.func @step(%ia: tensor<6xi64>, %ib: tensor<6xi64>, %gc: tensor<4xf32>) -> (tensor<6x4xf32>, tensor<4xf32>) {
    %a = parallax.pull @a[%ia : tensor<6xi64>] : tensor<6x8xf32>
    %b = parallax.pull @b[%ib : tensor<6xi64>] : tensor<6x4xf32>
    %g = parallax.row_sparse.pack %ia, %a : !parallax.row_sparse<tensor<100x8xf32>, rows = 6>
    parallax.push @a, %g optimizer = <adagrad, lr = 1.000000e-01> state = [@a.sum] : !parallax.row_sparse<tensor<100x8xf32>, rows = 6>
    parallax.push @c, %gc : tensor<4xf32>
    %c = parallax.pull @c : tensor<4xf32>
    return %b, %c : tensor<6x4xf32>, tensor<4xf32>
  }
}

// -----

// A program planned for a number of workers is left as it is: it never
// runs alone (or, planned for one, has no parameter servers).
module attributes {parallax.world = #parallax.world<workers = 2>} {
  parallax.variable trainable @a : tensor<100x8xf32> = dense<0.5> {distribution = #parallax.distribution<ps, partitions = 2>}
  // CHECK-LABEL: func.func @planned
  // CHECK-NOT: parallax.workers
  // CHECK-NOT: scf.if
  // CHECK: parallax.pull @a
  func.func @planned(%ia: tensor<6xi64>) -> tensor<6x8xf32> {
    %a = parallax.pull @a[%ia : tensor<6xi64>] : tensor<6x8xf32>
    return %a : tensor<6x8xf32>
  }
}
