// RUN: parallax-opt %s --split-input-file --convert-parallax-variables | FileCheck %s

// Variables become mutable aligned globals; a read is a view of the
// global (no copy); updates call the runtime in place: the dense gradient
// by its buffer, a row-sparse one by its index and row buffers.
parallax.variable trainable @emb : tensor<10x4xf32> = dense<0.5>
parallax.variable state @emb.sum : tensor<10x4xf32> = dense<0.0>
parallax.variable trainable @bias : tensor<4xf32> = dense<0.5>
parallax.variable @frozen : tensor<4xf32> = dense<1.0>
// The hyper-parameters of equal optimizer configurations (Adagrad and SGD
// with lr 0.1 and the attribute's defaults) are one constant, in the field
// order of ParallaxHyperParameters.
// CHECK: llvm.mlir.global internal constant @[[HYPER:__parallax_hyper_0]](dense<[1.000000e-01, 0.000000e+00, 9.000000e-01, 0.99899999999999999, 1.000000e-08, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<8xf64>) {addr_space = 0 : i32} : !llvm.array<8 x f64>
// CHECK-NOT: __parallax_hyper_1
// CHECK: memref.global "private" @emb : memref<10x4xf32> = dense<5.000000e-01> {alignment = 64 : i64, parallax.variable = "trainable"}
// CHECK: memref.global "private" @emb.sum : memref<10x4xf32> = dense<0.000000e+00> {alignment = 64 : i64, parallax.variable = "state"}
// CHECK: memref.global "private" @frozen : memref<4xf32> = dense<1.000000e+00> {alignment = 64 : i64}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[BIAS:.*]] = memref.get_global @bias : memref<4xf32>
// CHECK: bufferization.to_tensor %[[BIAS]] restrict : memref<4xf32> to tensor<4xf32>
// CHECK: %[[EMB:.*]] = memref.get_global @emb : memref<10x4xf32>
// CHECK: %[[SUM:.*]] = memref.get_global @emb.sum : memref<10x4xf32>
// CHECK: %[[IDS:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2xi64> to memref<2xi64>
// CHECK: %[[ROWS:.*]] = bufferization.to_buffer %arg1 read_only : tensor<2x4xf32> to memref<2x4xf32>
// CHECK: %[[H:.*]] = llvm.mlir.addressof @[[HYPER]] : !llvm.ptr
// CHECK: call @parallax_rt_update_adagrad_sparse_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[H]]) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xf32>, !llvm.ptr) -> ()
// CHECK: %[[H2:.*]] = llvm.mlir.addressof @[[HYPER]] : !llvm.ptr
// CHECK: call @parallax_rt_update_sgd_f32({{.*}}, %[[H2]]) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, !llvm.ptr) -> ()
// CHECK-NOT: parallax.
func.func @train_step(%ids: tensor<2xi64>, %rows: tensor<2x4xf32>) -> tensor<4xf32> {
  %b = parallax.read @bias : tensor<4xf32>
  %sparse = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<10x4xf32>, rows = 2>
  parallax.update @emb, %sparse optimizer = <adagrad, lr = 1.000000e-01> state = [@emb.sum] : !parallax.row_sparse<tensor<10x4xf32>, rows = 2>
  parallax.update @bias, %b optimizer = <sgd, lr = 1.000000e-01> : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// Densifying a row-sparse value: zeros, then a loop adding each row at its
// index (repeated indices add up; negative ones count from the end, any
// other outside the rows ends the program).
// CHECK-LABEL: func.func @densify
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (tensor<10x4xf32>)
// CHECK:   %[[ID:.*]] = tensor.extract %arg0[%[[I]]] : tensor<3xi64>
// CHECK:   %[[RAW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:   %[[C10:.*]] = arith.constant 10 : index
// CHECK:   %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[NEG:.*]] = arith.cmpi slt, %[[RAW]], %[[C0]] : index
// CHECK-DAG:   %[[WRAPPED:.*]] = arith.addi %[[RAW]], %[[C10]] : index
// CHECK:   %[[ROW:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[RAW]] : index
// CHECK:   %[[BAD:.*]] = arith.cmpi uge, %[[ROW]], %[[C10]] : index
// CHECK:   scf.if %[[BAD]] {
// CHECK-DAG:     %[[VALUE:.*]] = arith.index_cast %[[RAW]] : index to i64
// CHECK-DAG:     %[[WHERE:.*]] = llvm.mlir.addressof @__parallax_str_{{[0-9]+}} : !llvm.ptr
// CHECK:     func.call @parallax_rt_index_out_of_range(%[[WHERE]], %[[VALUE]], %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i64, i64) -> ()
// CHECK:   }
// CHECK:   tensor.extract_slice %arg1[%[[I]], 0] [1, 4] [1, 1]
// CHECK:   tensor.extract_slice %[[ACC]][%[[ROW]], 0] [1, 4] [1, 1]
// CHECK:   linalg.add
// CHECK:   tensor.insert_slice %{{.*}} into %[[ACC]][%[[ROW]], 0] [1, 4] [1, 1]
func.func @densify(%ids: tensor<3xi64>, %rows: tensor<3x4xf32>) -> tensor<10x4xf32> {
  %s = parallax.row_sparse.pack %ids, %rows : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  %d = parallax.row_sparse.to_dense %s : !parallax.row_sparse<tensor<10x4xf32>, rows = 3>
  return %d : tensor<10x4xf32>
}

// -----

// A row-sparse value is its indices and rows wherever it flows (a 1:N type
// conversion), not only where its row_sparse.pack is in sight: here it is
// a function argument, which becomes two, and it passes through an scf.if.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[IDS:.*]]: tensor<3xi64>, %[[ROWS:.*]]: tensor<3x2xf32>, %[[C:.*]]: i1)
// CHECK: %[[PICKED:.*]]:2 = scf.if %[[C]] -> (tensor<3xi64>, tensor<3x2xf32>)
// CHECK: scf.yield %[[IDS]], %[[ROWS]]
// CHECK: bufferization.to_buffer %[[PICKED]]#0
// CHECK: bufferization.to_buffer %[[PICKED]]#1
// CHECK: call @parallax_rt_update_sgd_sparse_f32
parallax.variable trainable @w : tensor<4x2xf32> = dense<0.5>
func.func @train_step(%g: !parallax.row_sparse<tensor<4x2xf32>, rows = 3>, %c: i1) {
  %h = scf.if %c -> !parallax.row_sparse<tensor<4x2xf32>, rows = 3> {
    scf.yield %g : !parallax.row_sparse<tensor<4x2xf32>, rows = 3>
  } else {
    scf.yield %g : !parallax.row_sparse<tensor<4x2xf32>, rows = 3>
  }
  parallax.update @w, %h optimizer = <sgd, lr = 1.000000e-01> : !parallax.row_sparse<tensor<4x2xf32>, rows = 3>
  return
}

// -----

// A variable loaded from the model is an uninitialized global (no bytes in
// the program) that keeps the mark.
module attributes {parallax.model = "/models/m.onnx"} {
  // CHECK: memref.global "private" @big : memref<1000x64xf32> = uninitialized {alignment = 64 : i64, parallax.from_model, parallax.variable = "trainable"}
  parallax.variable trainable @big : tensor<1000x64xf32> {parallax.from_model}
  func.func @step() -> tensor<1000x64xf32> {
    %w = parallax.read @big : tensor<1000x64xf32>
    return %w : tensor<1000x64xf32>
  }
}

// -----

// Statistics variables (BatchNorm's running statistics) are registered as
// such; an assignment copies the value into the global.
parallax.variable statistics @running_mean : tensor<4xf32> = dense<0.0>
// CHECK: memref.global "private" @running_mean : memref<4xf32> = dense<0.000000e+00> {alignment = 64 : i64, parallax.variable = "statistics"}
// CHECK-LABEL: func.func @train_step
// CHECK: %[[VIEW:.*]] = bufferization.to_tensor %{{.*}} restrict
// CHECK: %[[NEW:.*]] = parallax.add %[[VIEW]], %arg0
// CHECK: %[[GLOBAL:.*]] = memref.get_global @running_mean : memref<4xf32>
// CHECK: %[[VALUE:.*]] = bufferization.to_buffer %[[NEW]] read_only : tensor<4xf32> to memref<4xf32>
// CHECK: memref.copy %[[VALUE]], %[[GLOBAL]] : memref<4xf32> to memref<4xf32>
// CHECK-NOT: parallax.assign
func.func @train_step(%batch: tensor<4xf32>) -> tensor<4xf32> {
  %m = parallax.read @running_mean : tensor<4xf32>
  %new = parallax.add %m, %batch : tensor<4xf32>, tensor<4xf32>
  parallax.assign @running_mean, %new : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

// A counter-based draw: the runtime's seed (the compiled one unless the
// program's --seed replaces it) and first example, then one generic of ten
// Philox rounds per element keyed by (element, example, stream).
// CHECK-LABEL: func.func @dropout_draw
// CHECK: %[[SEED:.*]] = call @parallax_rt_random_seed(%c7_i64) : (i64) -> i64
// CHECK: %[[FIRST:.*]] = call @parallax_rt_first_example() : () -> i64
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: %[[N:.*]] = linalg.index 0 : index
// CHECK: arith.addi %[[FIRST]]
// CHECK-COUNT-20: arith.mului_extended
// CHECK: arith.uitofp
// CHECK-NOT: parallax.random_uniform
func.func @dropout_draw() -> tensor<4x16xf32> {
  %u = parallax.random_uniform seed = 7 salt = 0 stream = 3 : tensor<4x16xf32>
  return %u : tensor<4x16xf32>
}

// -----

// Attention weights: 4 rows (heads) per example in dimension 0, so the
// global row is first example x 4 + row.
// CHECK-LABEL: func.func @attention_draw
// CHECK: %[[FIRST:.*]] = call @parallax_rt_first_example() : () -> i64
// CHECK: linalg.generic
// CHECK: %[[C4:.*]] = arith.constant 4 : i64
// CHECK: arith.muli %[[FIRST]], %[[C4]] : i64
func.func @attention_draw() -> tensor<8x2x2xf32> {
  %u = parallax.random_uniform seed = 0 salt = 0 stream = 0 rows_per_example = 4 : tensor<8x2x2xf32>
  return %u : tensor<8x2x2xf32>
}
