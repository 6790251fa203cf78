// RUN: parallax-opt %s --split-input-file --parallax-gpu-step-graph | FileCheck %s

// A step that only queues work on the stream (a launch, a cuBLAS product,
// a copy), allocates and frees, loads a buffer's pointer from its global's
// slot and waits once, before it returns the loss: it can be one CUDA
// graph (an empty obstacle). The calls bracket the step's call, right
// after the batch is loaded.
// CHECK: llvm.mlir.global internal constant @[[EMPTY:__parallax_str_[0-9]*]]("\00")
// CHECK-LABEL: func.func @main
// CHECK: scf.for %[[STEP:.*]] =
// CHECK-NEXT: func.call @parallax_rt_load_batch(%[[STEP]])
// CHECK-NEXT: %[[TEXT:.*]] = llvm.mlir.addressof @[[EMPTY]]
// CHECK-NEXT: func.call @parallax_rt_cuda_step_graph_begin(%[[STEP]], %[[TEXT]]) : (i64, !llvm.ptr) -> ()
// CHECK-NEXT: %[[LOSS:.*]] = func.call @step
// CHECK-NEXT: func.call @parallax_rt_cuda_step_graph_end() : () -> ()
// CHECK-NEXT: memref.load %[[LOSS]][]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%b: memref<16xf32>) kernel { gpu.return }
  }
  llvm.mlir.global private @w.buffer() : !llvm.ptr
  func.func private @parallax_rt_load_batch(i64)
  func.func private @parallax_rt_cuda_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
  func.func @step(%x: memref<16xf32>) -> memref<f32> {
    %c1 = arith.constant 1 : index
    %slot = llvm.mlir.addressof @w.buffer : !llvm.ptr
    %pointer = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    %poison = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %d0 = llvm.insertvalue %pointer, %poison[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
    %w = builtin.unrealized_conversion_cast %d0 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<16xf32> {parallax.global_buffer_slot = "w.buffer"}
    %t0 = gpu.wait async
    %a, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %t2 = gpu.launch_func async [%t1] @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    %u = memref.cast %w : memref<16xf32> to memref<*xf32>
    call @parallax_rt_cuda_matmul_f32(%u, %u, %u) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
    %t3 = gpu.memcpy async [%t2] %x, %a : memref<16xf32>, memref<16xf32>
    %loss, %t4 = gpu.alloc async [%t3] host_shared () : memref<f32>
    %t5 = gpu.dealloc async [%t4] %a : memref<16xf32>
    gpu.wait [%t5]
    return %loss : memref<f32>
  }
  func.func @main() -> i32 {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c4 = arith.constant 4 : i64
    %x = gpu.alloc () : memref<16xf32>
    scf.for %i = %c0 to %c4 step %c1 : i64 {
      func.call @parallax_rt_load_batch(%i) : (i64) -> ()
      %loss = func.call @step(%x) : (memref<16xf32>) -> memref<f32>
      %value = memref.load %loss[] : memref<f32>
    }
    %r = arith.constant 0 : i32
    return %r : i32
  }
}

// -----

// A wait for the stream inside the step (the host then reads the ids it
// sorts) is an obstacle, named with what the host does after it; it is
// found in a function the step calls, too.
// CHECK: llvm.mlir.global internal constant @{{.*}}("the host waits for the GPU inside the step, before it calls parallax_rt_row_segments ({{.*}}step-graph.mlir:70)\00")
// CHECK: call @parallax_rt_cuda_step_graph_begin
module attributes {gpu.container_module} {
  func.func private @parallax_rt_load_batch(i64)
  func.func private @parallax_rt_row_segments(!llvm.ptr, i64, memref<*xi64>, memref<*xi64>, memref<*xi64>, memref<*xi64>) -> i64
  func.func @update(%ids: memref<*xi64>, %name: !llvm.ptr) {
    %c8 = arith.constant 8 : i64
    %t0 = gpu.wait async
    gpu.wait [%t0]
    %n = call @parallax_rt_row_segments(%name, %c8, %ids, %ids, %ids, %ids) : (!llvm.ptr, i64, memref<*xi64>, memref<*xi64>, memref<*xi64>, memref<*xi64>) -> i64
    return
  }
  func.func @step(%ids: memref<*xi64>, %name: !llvm.ptr) {
    call @update(%ids, %name) : (memref<*xi64>, !llvm.ptr) -> ()
    return
  }
  func.func @main(%ids: memref<*xi64>, %name: !llvm.ptr) {
    %c0 = arith.constant 0 : i64
    func.call @parallax_rt_load_batch(%c0) : (i64) -> ()
    func.call @step(%ids, %name) : (memref<*xi64>, !llvm.ptr) -> ()
    return
  }
}

// -----

// A host load of memory and a runtime call that does not queue on the
// stream are obstacles too.
// CHECK: llvm.mlir.global internal constant @{{.*}}("the host reads or writes memory inside the step (memref.load) ({{.*}}step-graph.mlir:94)\00")
module {
  func.func private @parallax_rt_load_batch(i64)
  func.func @step(%counter: memref<i64>) {
    %v = memref.load %counter[] : memref<i64>
    return
  }
  func.func @main(%counter: memref<i64>) {
    %c0 = arith.constant 0 : i64
    func.call @parallax_rt_load_batch(%c0) : (i64) -> ()
    func.call @step(%counter) : (memref<i64>) -> ()
    return
  }
}

// -----

// The number of workers and the seed are the same at every step of a
// run: a replay may use what the host computed from them. The update's
// number is not.
// CHECK: llvm.mlir.global internal constant @{{.*}}("the step calls the runtime's parallax_rt_current_step on the host ({{.*}}step-graph.mlir:{{[0-9]+}})\00")
module {
  func.func private @parallax_rt_load_batch(i64)
  func.func private @parallax_rt_workers() -> i64
  func.func private @parallax_rt_random_seed(i64) -> i64
  func.func private @parallax_rt_current_step() -> i64
  func.func @step() {
    %n = call @parallax_rt_workers() : () -> i64
    %c7 = arith.constant 7 : i64
    %seed = call @parallax_rt_random_seed(%c7) : (i64) -> i64
    %t = call @parallax_rt_current_step() : () -> i64
    return
  }
  func.func @main() {
    %c0 = arith.constant 0 : i64
    func.call @parallax_rt_load_batch(%c0) : (i64) -> ()
    func.call @step() : () -> ()
    return
  }
}

// -----

// Without a training loop (an inference program), nothing changes.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: step_graph
module {
  func.func @forward() {
    return
  }
  func.func @main() {
    func.call @forward() : () -> ()
    return
  }
}
