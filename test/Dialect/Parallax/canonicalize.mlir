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

// Data movement that changes nothing folds away; two transposes that undo
// each other too.
// CHECK-LABEL: func.func @identity_data_movement
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identity_data_movement(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %t = parallax.transpose %x permutation = [0, 1] : tensor<4x8xf32>
  %a = parallax.transpose %x permutation = [1, 0] : tensor<4x8xf32>
  %b = parallax.transpose %a permutation = [1, 0] : tensor<8x4xf32>
  %e = parallax.expand %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %s = parallax.slice %x offsets = [0, 0] sizes = [4, 8] strides = [1, 1] : tensor<4x8xf32>
  %r = parallax.tile %x repeats = [1, 1] : tensor<4x8xf32>
  %p = parallax.pad constant %x low = [0, 0] high = [0, 0] : tensor<4x8xf32>
  %c = parallax.cast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %t, %b, %e, %s, %r, %p, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// Constants fold in the element type's own precision: 0.1 + 0.2 in f16 is
// the f16 sum (0.2998), not the double sum rounded to f16 (0.3000); a
// splat broadcasts.
// CHECK-LABEL: func.func @constant_arithmetic
// CHECK-DAG: %[[SUM:.*]] = arith.constant dense<2.998050e-01> : tensor<4xf16>
// CHECK-DAG: %[[HALF:.*]] = arith.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[INT:.*]] = arith.constant dense<-3> : tensor<2xi64>
// CHECK: return %[[SUM]], %[[HALF]], %[[INT]]
func.func @constant_arithmetic() -> (tensor<4xf16>, tensor<4xf32>, tensor<2xi64>) {
  %a = arith.constant dense<0.1> : tensor<4xf16>
  %b = arith.constant dense<0.2> : tensor<f16>
  %sum = parallax.add %a, %b : tensor<4xf16>, tensor<f16>
  %v = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %half = parallax.div %v, %two : tensor<4xf32>, tensor<4xf32>
  %seven = arith.constant dense<-7> : tensor<2xi64>
  %i2 = arith.constant dense<2> : tensor<2xi64>
  %q = parallax.div %seven, %i2 : tensor<2xi64>, tensor<2xi64>
  return %sum, %half, %q : tensor<4xf16>, tensor<4xf32>, tensor<2xi64>
}

// Data movement of constants folds (the sparsity profiler evaluates row
// ids this way): a reshape keeps the row-major order, a slice with a
// negative stride reverses, a concatenation along axis 1 interleaves the
// rows, casts truncate floats toward zero, sign-extend integers and map
// bools to 0/1 (and anything to a bool as x != 0).
// CHECK-LABEL: func.func @constant_data_movement
// CHECK-DAG: %[[R:.*]] = arith.constant dense<{{\[}}[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi64>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<{{\[}}[5, 4], [2, 1]]> : tensor<2x2xi64>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<{{\[}}[0, 1, 2, 7], [3, 4, 5, 8]]> : tensor<2x4xi64>
// CHECK-DAG: %[[F:.*]] = arith.constant dense<[-1, 2, 0, -300]> : tensor<4xi32>
// CHECK-DAG: %[[E:.*]] = arith.constant dense<[-1, 127, 0, 1]> : tensor<4xi64>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[1, 0, 1, 1]> : tensor<4xi64>
// CHECK-DAG: %[[T:.*]] = arith.constant dense<[true, true, false, true]> : tensor<4xi1>
// CHECK-DAG: %[[G:.*]] = arith.constant dense<[-1.000000e+00, 1.270000e+02, 0.000000e+00, 1.000000e+00]> : tensor<4xf32>
// A gather at constant indices (-1 counts from the end) picks columns.
// CHECK-DAG: %[[COLS:.*]] = arith.constant dense<{{\[}}[1, 2], [4, 5]]> : tensor<2x2xi64>
// CHECK: return %[[R]], %[[S]], %[[C]], %[[F]], %[[E]], %[[B]], %[[T]], %[[G]], %[[COLS]]
func.func @constant_data_movement() -> (tensor<2x3xi64>, tensor<2x2xi64>, tensor<2x4xi64>, tensor<4xi32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi1>, tensor<4xf32>, tensor<2x2xi64>) {
  %flat = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
  %r = parallax.reshape %flat : tensor<6xi64> -> tensor<2x3xi64>
  %s = parallax.slice %r offsets = [1, 2] sizes = [2, 2] strides = [-1, -1] : tensor<2x3xi64>
  %col = arith.constant dense<[[7], [8]]> : tensor<2x1xi64>
  %c = parallax.concat %r, %col axis = 1 : tensor<2x3xi64>, tensor<2x1xi64>
  %fl = arith.constant dense<[-1.9, 2.5, 0.3, -300.7]> : tensor<4xf32>
  %f = parallax.cast %fl : tensor<4xf32> -> tensor<4xi32>
  %i8 = arith.constant dense<[-1, 127, 0, 1]> : tensor<4xi8>
  %e = parallax.cast %i8 : tensor<4xi8> -> tensor<4xi64>
  %bools = arith.constant dense<[true, false, true, true]> : tensor<4xi1>
  %b = parallax.cast %bools : tensor<4xi1> -> tensor<4xi64>
  %t = parallax.cast %i8 : tensor<4xi8> -> tensor<4xi1>
  %g = parallax.cast %i8 : tensor<4xi8> -> tensor<4xf32>
  %one = arith.constant dense<[1, -1]> : tensor<2xi64>
  %cols = parallax.gather %r[%one] axis = 1 : tensor<2x3xi64>, tensor<2xi64>
  return %r, %s, %c, %f, %e, %b, %t, %g, %cols : tensor<2x3xi64>, tensor<2x2xi64>, tensor<2x4xi64>, tensor<4xi32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi1>, tensor<4xf32>, tensor<2x2xi64>
}

// x * 1, x / 1, x - 0.0 and x + -0.0 are x; x + 0.0 is not (it turns
// -0.0 into +0.0), nor is an integer division by zero folded.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>)
// CHECK: %[[PLUS:.*]] = parallax.add %[[X]]
// CHECK: %[[BYZERO:.*]] = parallax.div
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[PLUS]], %[[BYZERO]]
func.func @identities(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %negzero = arith.constant dense<-0.0> : tensor<f32>
  %m = parallax.mul %x, %one : tensor<4xf32>, tensor<f32>
  %d = parallax.div %x, %one : tensor<4xf32>, tensor<f32>
  %s = parallax.sub %x, %zero : tensor<4xf32>, tensor<f32>
  %n = parallax.add %x, %negzero : tensor<4xf32>, tensor<f32>
  %p = parallax.add %x, %zero : tensor<4xf32>, tensor<f32>
  %izero = arith.constant dense<0> : tensor<4xi64>
  %q = parallax.div %i, %izero : tensor<4xi64>, tensor<4xi64>
  return %m, %d, %s, %n, %p, %q : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>
}

// Non-splat constants broadcast as numpy does: a row against a column.
// Comparisons are IEEE (NaN compares false), integers signed; max and min
// propagate NaN as arith.maximumf and PyTorch do.
// CHECK-LABEL: func.func @constant_broadcast_and_compare
// CHECK-DAG: %[[OUTER:.*]] = arith.constant dense<{{\[}}[11, 12, 13], [21, 22, 23]]> : tensor<2x3xi64>
// CHECK-DAG: %[[LT:.*]] = arith.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[LE:.*]] = arith.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[GE:.*]] = arith.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: %[[SGT:.*]] = arith.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[MAX:.*]] = arith.constant dense<[1.000000e+00, 3.000000e+00, 0x7FC00000]> : tensor<3xf32>
// CHECK-DAG: %[[MIN:.*]] = arith.constant dense<[-5, -1, 2]> : tensor<3xi64>
// CHECK-DAG: %[[EXP:.*]] = arith.constant dense<{{\[}}[1, 2, 3], [1, 2, 3]]> : tensor<2x3xi64>
// CHECK: return %[[OUTER]], %[[LT]], %[[LE]], %[[GE]], %[[SGT]], %[[MAX]], %[[MIN]], %[[EXP]]
func.func @constant_broadcast_and_compare() -> (tensor<2x3xi64>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xf32>, tensor<3xi64>, tensor<2x3xi64>) {
  %row = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
  %col = arith.constant dense<[[10], [20]]> : tensor<2x1xi64>
  %outer = parallax.add %col, %row : tensor<2x1xi64>, tensor<3xi64>
  %x = arith.constant dense<[1.0, 2.0, 0x7FC00000]> : tensor<3xf32>
  %y = arith.constant dense<[1.0, 3.0, 1.0]> : tensor<3xf32>
  %lt = parallax.less %x, %y : tensor<3xf32>, tensor<3xf32>
  %le = parallax.less_equal %x, %y : tensor<3xf32>, tensor<3xf32>
  %ge = parallax.greater_equal %x, %y : tensor<3xf32>, tensor<3xf32>
  %i = arith.constant dense<[-5, -1, 2]> : tensor<3xi64>
  %zero = arith.constant dense<0> : tensor<i64>
  %sgt = parallax.greater %i, %zero : tensor<3xi64>, tensor<i64>
  %max = parallax.max %x, %y : tensor<3xf32>, tensor<3xf32>
  %min = parallax.min %i, %row : tensor<3xi64>, tensor<3xi64>
  %exp = parallax.expand %row : tensor<3xi64> -> tensor<2x3xi64>
  return %outer, %lt, %le, %ge, %sgt, %max, %min, %exp : tensor<2x3xi64>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xf32>, tensor<3xi64>, tensor<2x3xi64>
}

// Selects, unary ops and booleans of constants fold; a constant condition
// picks a side whole; not(not(b)) is b. Equality of booleans compares 0
// and 1.
// CHECK-LABEL: func.func @constant_select_and_unary
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>, %[[P:.*]]: tensor<3xi1>)
// CHECK-DAG: %[[W:.*]] = arith.constant dense<[1.000000e+00, -1.000000e+04, 1.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[ABS:.*]] = arith.constant dense<[5, 1, 2]> : tensor<3xi64>
// CHECK-DAG: %[[NEG:.*]] = arith.constant dense<[5, 1, -2]> : tensor<3xi64>
// CHECK-DAG: %[[NOT:.*]] = arith.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[EQ:.*]] = arith.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK: return %[[W]], %[[A]], %[[B]], %[[ABS]], %[[NEG]], %[[NOT]], %[[P]], %[[EQ]]
func.func @constant_select_and_unary(%a: tensor<3xf32>, %b: tensor<3xf32>, %p: tensor<3xi1>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %mask = arith.constant dense<[false, true, false]> : tensor<3xi1>
  %pad = arith.constant dense<-10000.0> : tensor<f32>
  %ones = arith.constant dense<1.0> : tensor<3xf32>
  %w = parallax.where %mask, %pad, %ones : tensor<3xi1>, tensor<f32>, tensor<3xf32>
  %yes = arith.constant dense<true> : tensor<i1>
  %no = arith.constant dense<false> : tensor<i1>
  %t = parallax.where %yes, %a, %b : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  %f = parallax.where %no, %a, %b : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  %i = arith.constant dense<[-5, -1, 2]> : tensor<3xi64>
  %abs = parallax.abs %i : tensor<3xi64>
  %neg = parallax.neg %i : tensor<3xi64>
  %not = parallax.not %mask : tensor<3xi1>
  %nn1 = parallax.not %p : tensor<3xi1>
  %nn = parallax.not %nn1 : tensor<3xi1>
  %bools = arith.constant dense<[true, true, false]> : tensor<3xi1>
  %eq = parallax.equal %bools, %not : tensor<3xi1>, tensor<3xi1>
  return %w, %t, %f, %abs, %neg, %not, %nn, %eq : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}
