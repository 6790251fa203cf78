// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg | FileCheck %s

// Gather reads the table with tensor.extract at the looked-up row;
// negative indices count from the end, and any index outside [-10, 10)
// ends the program through the runtime, naming the node.
// CHECK: llvm.mlir.global internal constant @[[WHERE:__parallax_str_[0-9]+]]("node 'emb': gather index (dimension 0 of size 10)\00")
// CHECK: func.func private @parallax_rt_index_out_of_range(!llvm.ptr, i64, i64, i64) attributes {passthrough = ["noreturn", "cold"]}
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
// CHECK: %[[RAW:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : index
// CHECK-DAG: %[[NEG:.*]] = arith.cmpi slt, %[[RAW]]
// CHECK: %[[ROW:.*]] = arith.select %[[NEG]], %{{.*}}, %[[RAW]] : index
// CHECK: %[[BAD:.*]] = arith.cmpi uge, %[[ROW]], %[[C10]] : index
// CHECK: scf.if %[[BAD]] {
// CHECK:   %[[VALUE:.*]] = arith.index_cast %[[RAW]] : index to i64
// CHECK:   %[[TEXT:.*]] = llvm.mlir.addressof @[[WHERE]]
// CHECK:   func.call @parallax_rt_index_out_of_range(%[[TEXT]], %[[VALUE]], %c-10_i64, %c10_i64)
// CHECK: }
// CHECK: tensor.extract %arg0[%[[ROW]],
func.func @gather(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %0 = parallax.gather %t[%i] axis = 0 : tensor<10x4xf32>, tensor<3xi64> loc("emb")
  return %0 : tensor<3x4xf32>
}

// -----

// Transpose is linalg.transpose; reshape collapses to 1-D and expands.
// CHECK-LABEL: func.func @transpose_reshape
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0, 1]] : tensor<8x4xf32> into tensor<32xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1, 2]] output_shape [2, 4, 4] : tensor<32xf32> into tensor<2x4x4xf32>
func.func @transpose_reshape(%a: tensor<4x8xf32>) -> tensor<2x4x4xf32> {
  %0 = parallax.transpose %a permutation = [1, 0] : tensor<4x8xf32>
  %1 = parallax.reshape %0 : tensor<8x4xf32> -> tensor<2x4x4xf32>
  return %1 : tensor<2x4x4xf32>
}

// -----

// A slice is a strided tensor.extract_slice; a negative stride reads the
// same window from its last element and reverses it with a generic.
// CHECK-DAG: #[[REV:.*]] = affine_map<(d0, d1) -> (-d0 + 1, d1)>
// CHECK-LABEL: func.func @slices
// CHECK: tensor.extract_slice %arg0[1, 0] [2, 4] [2, 2] : tensor<6x8xf32> to tensor<2x4xf32>
// CHECK: %[[W:.*]] = tensor.extract_slice %arg0[1, 0] [2, 8] [3, 1] : tensor<6x8xf32> to tensor<2x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[REV]], #{{.*}}], {{.*}} ins(%[[W]] : tensor<2x8xf32>)
func.func @slices(%a: tensor<6x8xf32>) -> (tensor<2x4xf32>, tensor<2x8xf32>) {
  %0 = parallax.slice %a offsets = [1, 0] sizes = [2, 4] strides = [2, 2] : tensor<6x8xf32>
  %1 = parallax.slice %a offsets = [4, 0] sizes = [2, 8] strides = [-3, 1] : tensor<6x8xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x8xf32>
}

// -----

// Concat inserts each input at its offset along the axis.
// CHECK-LABEL: func.func @concat
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x7xf32>
// CHECK: %[[A:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0] [4, 3] [1, 1]
// CHECK: tensor.insert_slice %arg1 into %[[A]][0, 3] [4, 4] [1, 1]
func.func @concat(%a: tensor<4x3xf32>, %b: tensor<4x4xf32>) -> tensor<4x7xf32> {
  %0 = parallax.concat %a, %b axis = 1 : tensor<4x3xf32>, tensor<4x4xf32>
  return %0 : tensor<4x7xf32>
}

// -----

// One-hot compares each index with the class dimension's loop index.
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @one_hot
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.*}}], {{.*}} ins(%arg0 : tensor<3xi64>) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[I]], %[[C]]
// CHECK: arith.select %[[HIT]]
func.func @one_hot(%i: tensor<3xi64>) -> tensor<3x5xf32> {
  %0 = parallax.one_hot %i axis = 1 : tensor<3xi64> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Expand broadcasts through the indexing map; tile reads input[i mod n].
// CHECK-DAG: #[[BCAST:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[MOD:.*]] = affine_map<(d0, d1) -> (d0 mod 4, d1 mod 8)>
// CHECK-LABEL: func.func @expand_tile
// CHECK: linalg.generic {indexing_maps = [#[[BCAST]], #{{.*}}], {{.*}} ins(%arg0 : tensor<1x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[MOD]], #{{.*}}], {{.*}} outs(%{{.*}} : tensor<8x16xf32>)
func.func @expand_tile(%a: tensor<1x8xf32>) -> tensor<8x16xf32> {
  %0 = parallax.expand %a : tensor<1x8xf32> -> tensor<4x8xf32>
  %1 = parallax.tile %0 repeats = [2, 2] : tensor<4x8xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Constant padding is tensor.pad; reflect and edge padding read the input
// at a mirrored or clamped index.
// CHECK-LABEL: func.func @pads
// CHECK: %[[V:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: tensor.pad %arg0 low[1, 0] high[0, 2]
// CHECK: tensor.yield %[[V]]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<6x8xf32>)
// CHECK: arith.maxsi
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK: tensor.extract %arg0
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<6x8xf32>)
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %arg0
func.func @pads(%a: tensor<4x8xf32>) -> (tensor<5x10xf32>, tensor<6x8xf32>, tensor<6x8xf32>) {
  %0 = parallax.pad constant %a low = [1, 0] high = [0, 2] value = 2.5 : tensor<4x8xf32>
  %1 = parallax.pad reflect %a low = [1, 0] high = [1, 0] : tensor<4x8xf32>
  %2 = parallax.pad edge %a low = [2, 0] high = [0, 0] : tensor<4x8xf32>
  return %0, %1, %2 : tensor<5x10xf32>, tensor<6x8xf32>, tensor<6x8xf32>
}
