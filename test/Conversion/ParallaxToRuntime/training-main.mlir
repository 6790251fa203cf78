// RUN: parallax-opt %s --split-input-file --parallax-generate-training-main --verify-diagnostics | FileCheck %s

// main parses the command line, registers the variables (trainable and
// optimizer state) and one buffer per graph input, then runs the steps the
// runtime asks for: load the batch, run the step, report the loss.
memref.global "private" @w : memref<4xf32> = dense<0.5> {parallax.variable = "trainable"}
memref.global "private" @w.sum : memref<4xf32> = dense<0.0> {parallax.variable = "state"}
memref.global "private" @table : memref<4xf32> = dense<1.0>
func.func @train_step(%x: memref<8x4xf32> {parallax.name = "features"}, %y: memref<8xi64> {parallax.name = "labels"}) -> (memref<f32> {parallax.name = "loss"}) {
  %l = memref.alloc() : memref<f32>
  return %l : memref<f32>
}
// CHECK-LABEL: func.func @main(%arg0: i32, %arg1: !llvm.ptr) -> i32
// CHECK: call @parallax_rt_train_init(%arg0, %arg1)
// CHECK: %[[ONE:.*]] = arith.constant 0 : i64
// CHECK: call @parallax_rt_set_workers(%[[ONE]])
// CHECK: %[[W:.*]] = memref.get_global @w
// CHECK: %[[TRAINABLE:.*]] = arith.constant 0 : i32
// CHECK: call @parallax_rt_register_variable(%{{.*}}, %[[TRAINABLE]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[SUM:.*]] = memref.get_global @w.sum
// CHECK: %[[STATE:.*]] = arith.constant 1 : i32
// CHECK: call @parallax_rt_register_variable(%{{.*}}, %[[STATE]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: @table
// CHECK: %[[X:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: call @parallax_rt_register_input_f32
// CHECK: %[[Y:.*]] = memref.alloc() : memref<8xi64>
// CHECK: call @parallax_rt_register_input_i64
// CHECK: %[[FIRST:.*]] = call @parallax_rt_begin() : () -> i64
// CHECK: %[[END:.*]] = call @parallax_rt_end_step() : () -> i64
// CHECK: scf.for %[[STEP:.*]] = %[[FIRST]] to %[[END]] step %{{.*}} : i64 {
// CHECK:   call @parallax_rt_load_batch(%[[STEP]])
// CHECK:   %[[LOSS:.*]] = func.call @train_step(%[[X]], %[[Y]])
// CHECK:   %[[VALUE:.*]] = memref.load %[[LOSS]][] : memref<f32>
// CHECK:   call @parallax_rt_step_end(%[[STEP]], %[[VALUE]])
// CHECK: %[[STATUS:.*]] = call @parallax_rt_finish() : () -> i32
// CHECK: return %[[STATUS]] : i32

// -----

// A program planned for 4 workers checks the world size; a parameter-server
// variable and its state are registered with their partitions (3) and first
// server (1), so checkpoints gather them.
module attributes {parallax.world = #parallax.world<workers = 4>} {
  memref.global "private" @emb : memref<10x4xf32> = dense<0.5> {parallax.shards = array<i64: 3, 1>, parallax.variable = "trainable"}
  memref.global "private" @emb.sum : memref<10x4xf32> = dense<0.0> {parallax.shards = array<i64: 3, 1>, parallax.variable = "state"}
  func.func @train_step(%x: memref<8xi64> {parallax.name = "ids"}) -> (memref<f32> {parallax.name = "loss"}) {
    %l = memref.alloc() : memref<f32>
    return %l : memref<f32>
  }
}
// CHECK-LABEL: func.func @main
// CHECK: %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK: call @parallax_rt_set_workers(%[[FOUR]])
// CHECK: %[[P:.*]] = arith.constant 3 : i64
// CHECK: %[[S:.*]] = arith.constant 1 : i64
// CHECK: call @parallax_rt_register_variable(%{{.*}}, %{{.*}}, %[[P]], %[[S]], %{{.*}})
// CHECK: call @parallax_rt_register_variable(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})

// -----

// A program distributed for any number of workers (world 0) tells the
// runtime -1: every world size is accepted.
module attributes {parallax.world = #parallax.world<workers = 0>} {
  func.func @train_step(%x: memref<8xi64> {parallax.name = "ids"}) -> (memref<f32> {parallax.name = "loss"}) {
    %l = memref.alloc() : memref<f32>
    return %l : memref<f32>
  }
}
// CHECK-LABEL: func.func @main
// CHECK: %[[ANY:.*]] = arith.constant -1 : i64
// CHECK: call @parallax_rt_set_workers(%[[ANY]])

// -----

// expected-error @+1 {{the training step must return its f32 loss first, as memref<f32> (bufferize the module first)}}
func.func @train_step(%x: tensor<8xf32>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// expected-error @+1 {{argument 0 ('memref<8xindex>') cannot be a training input}}
func.func @train_step(%x: memref<8xindex>) -> memref<f32> {
  %l = memref.alloc() : memref<f32>
  return %l : memref<f32>
}

// -----

// Variables loaded from the model: main names the model first, then marks
// each such variable after registering it.
module attributes {parallax.model = "/models/m.onnx"} {
  memref.global "private" @w : memref<4xf32> = uninitialized {parallax.from_model, parallax.variable = "trainable"}
  memref.global "private" @b : memref<4xf32> = dense<0.5> {parallax.variable = "trainable"}
  func.func @train_step(%x: memref<8x4xf32> {parallax.name = "x"}) -> (memref<f32> {parallax.name = "loss"}) {
    %l = memref.alloc() : memref<f32>
    return %l : memref<f32>
  }
}
// CHECK-DAG: llvm.mlir.global internal constant @[[MODEL:.*]]("/models/m.onnx\00")
// CHECK-LABEL: func.func @main
// CHECK: call @parallax_rt_set_workers
// CHECK: %[[PATH:.*]] = llvm.mlir.addressof @[[MODEL]]
// CHECK: call @parallax_rt_set_model(%[[PATH]])
// CHECK: call @parallax_rt_register_variable
// CHECK-NEXT: %[[NAME:.*]] = llvm.mlir.addressof
// CHECK-NEXT: call @parallax_rt_variable_from_model(%[[NAME]])
// CHECK: call @parallax_rt_register_variable
// CHECK-NOT: parallax_rt_variable_from_model
// CHECK: call @parallax_rt_begin
