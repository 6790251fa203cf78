// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg | FileCheck %s
// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg --linalg-fuse-elementwise-ops --canonicalize | FileCheck %s --check-prefix=FUSED
// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg --parallax-fuse-elementwise --canonicalize | FileCheck %s --check-prefixes=FUSED,KEEP

// Elementwise ops become linalg.generic with broadcasting in the indexing
// maps; a chain of them fuses into one loop nest.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NOT: parallax.
// FUSED-LABEL: func.func @chain
// FUSED: linalg.generic
// FUSED: arith.addf
// FUSED-NEXT: arith.maximumf
// FUSED-NEXT: math.exp
// FUSED-NEXT: linalg.yield
// FUSED-NEXT: } -> tensor<4x8xf32>
// FUSED-NEXT: return
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = parallax.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = parallax.relu %0 : tensor<4x8xf32>
  %2 = parallax.exp %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Batched matmul with broadcast batch dimensions: the operands are
// broadcast, batch dimensions collapsed into linalg.batch_matmul, and the
// result expanded back.
// CHECK-LABEL: func.func @batched
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<6x4x8xf32>, tensor<6x8x5xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2, 3]] output_shape [2, 3, 4, 5] : tensor<120xf32> into tensor<2x3x4x5xf32>
func.func @batched(%a: tensor<2x1x4x8xf32>, %b: tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = parallax.matmul %a, %b : tensor<2x1x4x8xf32>, tensor<3x8x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// 2-D matmul is linalg.matmul on a zero-filled accumulator.
// CHECK-LABEL: func.func @plain
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x3xf32>) outs(%[[ACC]] : tensor<4x3xf32>)
func.func @plain(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %0 = parallax.matmul %a, %b : tensor<4x8xf32>, tensor<8x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A matrix shared by a batch (a linear layer on a sequence): one
// linalg.matmul over all the batch's rows, the matrix never copied.
// CHECK-LABEL: func.func @shared_matrix
// CHECK-NOT: linalg.batch_matmul
// CHECK: linalg.matmul ins(%{{.*}}, %arg1 : tensor<8x8xf32>, tensor<8x3xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: return %{{.*}} : tensor<2x4x3xf32>
func.func @shared_matrix(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>) -> tensor<2x4x3xf32> {
  %0 = parallax.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// Reductions: a generic with reduction iterators, then the mean's divide.
// CHECK-LABEL: func.func @mean
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: tensor.expand_shape
func.func @mean(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = parallax.reduce mean %a axes = [1] keepdims : tensor<4x8xf32>
  return %0 : tensor<4x1xf32>
}

// -----

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

// A class label outside [0, C) that is not the ignore_index ends the
// program (PyTorch raises); it is no longer clamped into range.
// CHECK-LABEL: func.func @label_check
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<4xi64>)
// CHECK: %[[LABEL:.*]] = arith.index_cast %[[IN:.*]] : i64 to index
// CHECK: %[[OUTSIDE:.*]] = arith.cmpi uge, %[[LABEL]], %c8 : index
// CHECK: %[[KEPT:.*]] = arith.cmpi ne, %[[IN]], %c-100_i64 : i64
// CHECK: %[[BAD:.*]] = arith.andi %[[OUTSIDE]], %[[KEPT]] : i1
// CHECK: scf.if %[[BAD]] {
// CHECK:   func.call @parallax_rt_index_out_of_range(%{{.*}}, %[[IN]], %c0_i64, %c8_i64)
func.func @label_check(%x: tensor<4x8xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  %0 = parallax.softmax_cross_entropy mean %x, %l {ignore_index = -100 : i64} : tensor<4x8xf32>, tensor<4xi64> loc("ce")
  return %0 : tensor<f32>
}


// -----

// --parallax-fuse-elementwise keeps a matmul whose operand is produced by
// a transpose a linalg.matmul (for BLAS), while still fusing the
// elementwise chain after it.
// KEEP-LABEL: func.func @keep_matmul
// KEEP: linalg.transpose
// KEEP: linalg.matmul
// KEEP: linalg.generic
// KEEP: arith.addf
// KEEP-NEXT: arith.maximumf
func.func @keep_matmul(%a: tensor<8x4xf32>, %b: tensor<8x3xf32>, %c: tensor<3xf32>) -> tensor<4x3xf32> {
  %t = parallax.transpose %a permutation = [1, 0] : tensor<8x4xf32>
  %m = parallax.matmul %t, %b : tensor<4x8xf32>, tensor<8x3xf32>
  %s = parallax.add %m, %c : tensor<4x3xf32>, tensor<3xf32>
  %r = parallax.relu %s : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// A pooling window of at most 16 elements is unrolled into the loop body:
// one strided slice of the input per window position, combined
// elementwise; no reduction loop and no initial fill. A stride-1 window
// (output smaller than the input) works the same way.
// CHECK-LABEL: func.func @max_pool_small_window
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[A:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK-DAG: %[[B:.*]] = tensor.extract_slice %arg0[0, 0, 0, 1] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK-DAG: %[[C:.*]] = tensor.extract_slice %arg0[0, 0, 1, 0] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK-DAG: %[[D:.*]] = tensor.extract_slice %arg0[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 2, 2]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[A]], %[[B]], %[[C]], %[[D]] : {{.*}}) outs(%{{.*}} : tensor<2x3x4x4xf32>)
// CHECK: ^bb0(%[[VA:.*]]: f32, %[[VB:.*]]: f32, %[[VC:.*]]: f32, %[[VD:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[AB:.*]] = arith.maximumf %[[VA]], %[[VB]]
// CHECK: %[[ABC:.*]] = arith.maximumf %[[AB]], %[[VC]]
// CHECK: %[[ABCD:.*]] = arith.maximumf %[[ABC]], %[[VD]]
// CHECK: linalg.yield %[[ABCD]]
// CHECK-LABEL: func.func @max_pool_stride_one
// CHECK: tensor.extract_slice %arg0[0, 0, 1, 1] [1, 1, 7, 7] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x7x7xf32>)
func.func @max_pool_small_window(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %0 = parallax.pool max %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] : tensor<2x3x8x8xf32>
  return %0 : tensor<2x3x4x4xf32>
}
func.func @max_pool_stride_one(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x7x7xf32> {
  %0 = parallax.pool max %x kernel = [2, 2] strides = [1, 1] pads = [0, 0, 0, 0] : tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x7x7xf32>
}

// -----

// A larger window keeps its reduction loops over a shape-only kernel
// operand, starting from a filled result (-inf for max, 0 for sums).
// CHECK-LABEL: func.func @average_pool_large_window
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x8x8xf32>, tensor<5x5xf32>) outs(%[[INIT]] : tensor<1x1x4x4xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @average_pool_large_window(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32> {
  %0 = parallax.pool average %x kernel = [5, 5] strides = [1, 1] pads = [0, 0, 0, 0] count_include_pad : tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Batch normalisation computes m = scale / sqrt(var + eps) and
// o = bias - mean * m per channel, then x * m + o over the tensor: no
// square root or division per element.
// CHECK-LABEL: func.func @batch_norm
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%arg1, %arg4 : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.addf %{{.*}}, %[[EPS]]
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%arg2, %arg3, %[[M]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}}, %{{.*}} : tensor<2x3x4x4xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[MC:.*]]: f32, %[[OC:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[MC]]
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[P]], %[[OC]]
// CHECK-NEXT: linalg.yield %[[R]]
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %scale: tensor<3xf32>, %bias: tensor<3xf32>, %mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = parallax.batch_norm %x, %scale, %bias, %mean, %var epsilon = 1.0e-5 : tensor<2x3x4x4xf32>, tensor<3xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// The filter gradient of a convolution (autodiff's convolution of the
// transposed input with the transposed dy) reuses the forward's patch
// layout: per-image products with dy^T, summed over the images. The
// patches read the input itself: the transposes of x and dy are left
// unused (canonicalization erases them).
// CHECK-LABEL: func.func @filter_gradient
// CHECK: %[[PATCHES:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x3x6x6xf32>) outs(%{{.*}} : tensor<2x3x3x3x4x4xf32>)
// CHECK: %[[COLUMNS:.*]] = tensor.collapse_shape %[[PATCHES]]
// CHECK: %[[DYT:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x4x16xf32>) outs(%{{.*}} : tensor<2x16x4xf32>) permutation = [0, 2, 1]
// CHECK: %[[PER:.*]] = linalg.batch_matmul ins(%{{.*}}, %[[DYT]] : tensor<2x27x16xf32>, tensor<2x16x4xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[PER]] : tensor<2x27x4xf32>) outs(%{{.*}} : tensor<27x4xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<3x3x3x4xf32>) outs(%{{.*}} : tensor<3x4x3x3xf32>) permutation = [0, 3, 1, 2]
func.func @filter_gradient(%x: tensor<2x3x6x6xf32>, %dy: tensor<2x4x4x4xf32>) -> tensor<3x4x3x3xf32> {
  %xt = parallax.transpose %x permutation = [1, 0, 2, 3] : tensor<2x3x6x6xf32>
  %dyt = parallax.transpose %dy permutation = [1, 0, 2, 3] : tensor<2x4x4x4xf32>
  %0 = parallax.conv %xt, %dyt strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<3x2x6x6xf32>, tensor<4x2x4x4xf32>
  return %0 : tensor<3x4x3x3xf32>
}
