// RUN: parallax-opt %s --split-input-file --parallax-generate-inference-main --verify-diagnostics | FileCheck %s

// main parses the command line, reads every input, runs the model
// --repeat N times (the first N-1 runs timed and dropped), and writes the
// last run's results.
func.func @forward(%x: memref<2x3xf32> {parallax.name = "features"}, %y: memref<2xi64> {parallax.name = "labels"}) -> (memref<2xf32> {parallax.name = "scores"}) {
  %r = memref.alloc() : memref<2xf32>
  return %r : memref<2xf32>
}
// CHECK-DAG: llvm.mlir.global internal constant @[[FEATURES:.*]]("features\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[LABELS:.*]]("labels\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[SCORES:.*]]("scores\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[FORWARD:.*]]("forward\00")
// CHECK-LABEL: func.func @forward(%arg0: memref<2x3xf32>, %arg1: memref<2xi64>) -> memref<2xf32>
// CHECK-LABEL: func.func @main(%arg0: i32, %arg1: !llvm.ptr) -> i32
// CHECK: call @parallax_rt_init(%arg0, %arg1)
// CHECK: %[[X:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-DAG: %[[XCAST:.*]] = memref.cast %[[X]] : memref<2x3xf32> to memref<*xf32>
// CHECK-DAG: %[[XNAME:.*]] = llvm.mlir.addressof @[[FEATURES]]
// CHECK: call @parallax_rt_read_input_f32(%[[XNAME]], %[[XCAST]])
// CHECK: %[[Y:.*]] = memref.alloc() : memref<2xi64>
// CHECK: call @parallax_rt_read_input_i64
// CHECK: %[[N:.*]] = call @parallax_rt_repeat_count() : () -> i64
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.for %{{.*}} = %[[ONE]] to %[[NI]] step %[[ONE]] {
// CHECK:   func.call @parallax_rt_now()
// CHECK:   func.call @forward(%[[X]], %[[Y]])
// CHECK:   func.call @parallax_rt_now()
// CHECK:   func.call @parallax_rt_report_time
// CHECK: }
// CHECK: %[[START:.*]] = call @parallax_rt_now()
// CHECK: %[[R:.*]] = call @forward(%[[X]], %[[Y]])
// CHECK: %[[END:.*]] = call @parallax_rt_now()
// CHECK: %[[WHAT:.*]] = llvm.mlir.addressof @[[FORWARD]]
// CHECK: call @parallax_rt_report_time(%[[WHAT]], %[[START]], %[[END]])
// CHECK-DAG: %[[RCAST:.*]] = memref.cast %[[R]] : memref<2xf32> to memref<*xf32>
// CHECK-DAG: %[[RNAME:.*]] = llvm.mlir.addressof @[[SCORES]]
// CHECK: call @parallax_rt_write_output_f32(%[[RNAME]], %[[RCAST]])
// CHECK: return %{{.*}} : i32

// -----

// expected-error @+1 {{argument 0 has type 'tensor<2xf32>': the module must be bufferized first}}
func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{result 0 ('memref<?xf32>') is not supported as a program input or output}}
func.func @forward(%x: memref<2xf32>) -> memref<?xf32> {
  %c = arith.constant 2 : index
  %r = memref.alloc(%c) : memref<?xf32>
  return %r : memref<?xf32>
}

// -----

// expected-error @+1 {{no function 'forward' to run}}
module {
  func.func @other() {
    return
  }
}
