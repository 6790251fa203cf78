// RUN: parallax-opt %s --split-input-file --parallax-vectorize-transposes | FileCheck %s

// A matrix's rows to columns: loops over 8x8 tiles, 8 row loads of the
// input, joined into one 64-element vector, one shuffle into its
// transpose, and 8 row stores of the output.
// CHECK-LABEL: func.func @matrix(
// CHECK-SAME: %[[IN:[^:]*]]: memref<16x24xf32>, %[[OUT:[^:]*]]: memref<24x16xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C24]] step %[[C8]]
// CHECK: scf.for %[[J:.*]] = %[[C0]] to %[[C16]] step %[[C8]]
// CHECK: %[[R0:.*]] = vector.load %[[IN]][%[[J]], %[[I]]] : memref<16x24xf32>, vector<8xf32>
// CHECK-COUNT-7: vector.load %[[IN]]
// CHECK: %[[P:.*]] = vector.shuffle %[[R0]], %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK-COUNT-6: vector.shuffle
// CHECK: %[[T:.*]] = vector.shuffle %[[ALL:.*]], %[[ALL]] [0, 8, 16, 24, 32, 40, 48, 56, 1, 9,
// CHECK-SAME: 55, 63] : vector<64xf32>, vector<64xf32>
// CHECK: %[[ROW0:.*]] = vector.shuffle %[[T]], %[[T]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<64xf32>, vector<64xf32>
// CHECK: vector.store %[[ROW0]], %[[OUT]][%[[I]], %[[J]]] : memref<24x16xf32>, vector<8xf32>
// CHECK-COUNT-7: vector.store
// CHECK-NOT: linalg.transpose
func.func @matrix(%in: memref<16x24xf32>, %out: memref<24x16xf32>) {
  linalg.transpose ins(%in : memref<16x24xf32>) outs(%out : memref<24x16xf32>) permutation = [1, 0]
  return
}

// -----

// NCHW to NHWC: the channels (the output's innermost) and W (the input's
// innermost) step by tiles; N and H by one. Input rows are the W rows of
// 8 channels in turn.
// CHECK-LABEL: func.func @nchw_to_nhwc(
// CHECK-SAME: %[[IN:[^:]*]]: memref<2x16x3x8xf32>, %[[OUT:[^:]*]]: memref<2x3x8x16xf32>)
// CHECK: scf.for %[[N:[^ ]*]] =
// CHECK: scf.for %[[H:[^ ]*]] =
// CHECK: scf.for %[[W:[^ ]*]] =
// CHECK: scf.for %[[C:[^ ]*]] =
// CHECK: vector.load %[[IN]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK: %[[C1:.*]] = arith.addi %[[C]], %{{.*}} : index
// CHECK: vector.load %[[IN]][%[[N]], %[[C1]], %[[H]], %[[W]]]
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[N]], %[[H]], %[[W]], %[[C]]]
// CHECK: %[[W1:.*]] = arith.addi %[[W]], %{{.*}} : index
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[N]], %[[H]], %[[W1]], %[[C]]]
func.func @nchw_to_nhwc(%in: memref<2x16x3x8xf32>, %out: memref<2x3x8x16xf32>) {
  linalg.transpose ins(%in : memref<2x16x3x8xf32>) outs(%out : memref<2x3x8x16xf32>) permutation = [0, 2, 3, 1]
  return
}

// -----

// 12 is not a multiple of 8: the whole tiles first, then a column of
// partial tiles at the output's columns 8..11: four input rows (the other
// four zeros), eight output rows stored through a mask of four lanes.
// CHECK-LABEL: func.func @partial(
// CHECK-SAME: %[[IN:[^:]*]]: memref<12x16xf32>, %[[OUT:[^:]*]]: memref<16x12xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-DAG: %[[MASK:.*]] = arith.constant dense<[true, true, true, true, false, false, false, false]> : vector<8xi1>
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C16]] step %[[C8]]
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C8]] step %[[C8]]
// CHECK-COUNT-8: vector.load
// CHECK-COUNT-8: vector.store
// CHECK: scf.for %[[R:.*]] = %[[C0]] to %[[C16]] step %[[C8]]
// CHECK: %[[ROW0:.*]] = vector.load %[[IN]][%[[C8]], %[[R]]]
// CHECK-COUNT-3: vector.load %[[IN]]
// CHECK-NOT: vector.load
// CHECK: vector.shuffle %{{.*}}, %[[ZEROS]]
// CHECK: vector.maskedstore %[[OUT]][%[[R]], %[[C8]]], %[[MASK]]
// CHECK-COUNT-7: vector.maskedstore
// CHECK-NOT: linalg.transpose
func.func @partial(%in: memref<12x16xf32>, %out: memref<16x12xf32>) {
  linalg.transpose ins(%in : memref<12x16xf32>) outs(%out : memref<16x12xf32>) permutation = [1, 0]
  return
}

// -----

// Left to convert-linalg-to-loops: an exchanged dimension shorter than a
// tile, a transpose that keeps the innermost dimension (its rows
// are copied whole), 64-bit elements, a strided innermost dimension, and
// tensors.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: vector.
// CHECK-COUNT-5: linalg.transpose
// CHECK-NOT: vector.
func.func @left_alone(%a: memref<4x16xf32>, %b: memref<16x4xf32>,
                      %c: memref<4x8x16xf32>, %d: memref<8x4x16xf32>,
                      %e: memref<8x8xf64>, %f: memref<8x8xf64>,
                      %g: memref<8x8xf32, strided<[16, 2]>>, %h: memref<8x8xf32>,
                      %t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  linalg.transpose ins(%a : memref<4x16xf32>) outs(%b : memref<16x4xf32>) permutation = [1, 0]
  linalg.transpose ins(%c : memref<4x8x16xf32>) outs(%d : memref<8x4x16xf32>) permutation = [1, 0, 2]
  linalg.transpose ins(%e : memref<8x8xf64>) outs(%f : memref<8x8xf64>) permutation = [1, 0]
  linalg.transpose ins(%g : memref<8x8xf32, strided<[16, 2]>>) outs(%h : memref<8x8xf32>) permutation = [1, 0]
  %empty = tensor.empty() : tensor<8x8xf32>
  %r = linalg.transpose ins(%t : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) permutation = [1, 0]
  return %r : tensor<8x8xf32>
}
