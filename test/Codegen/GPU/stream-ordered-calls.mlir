// RUN: parallax-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(gpu-async-region,parallax-gpu-stream-ordered-calls))' | FileCheck %s

// A cuBLAS product between kernels queues on the stream: the host waits
// neither before it nor after it, and the kernels after it continue the
// chain.
// CHECK-LABEL: func.func @between_kernels
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@kernel
// CHECK-NOT: gpu.wait
// CHECK: call @parallax_rt_cuda_matmul_f32
// CHECK-NOT: gpu.wait
// CHECK: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@kernel
// CHECK: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%b: memref<16xf32>) kernel { gpu.return }
  }
  func.func private @parallax_rt_cuda_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
  func.func @between_kernels(%a: memref<16xf32>, %b: memref<4x4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    %u = memref.cast %b : memref<4x4xf32> to memref<*xf32>
    call @parallax_rt_cuda_matmul_f32(%u, %u, %u) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    return
  }
}

// -----

// Two library calls in a row, then a call that reads memory on the host:
// the host waits once, after both, right before that call.
// CHECK-LABEL: func.func @before_host_work
// CHECK: %[[T1:.*]] = gpu.launch_func async
// CHECK-NOT: gpu.wait
// CHECK: call @parallax_rt_cuda_conv2d_f32
// CHECK-NEXT: call @parallax_rt_cuda_conv2d_filter_grad_f32
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: call @host
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%b: memref<16xf32>) kernel { gpu.return }
  }
  func.func private @parallax_rt_cuda_conv2d_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64)
  func.func private @parallax_rt_cuda_conv2d_filter_grad_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64)
  func.func private @host(memref<*xf32>)
  func.func @before_host_work(%a: memref<16xf32>, %x: memref<*xf32>) {
    %c1 = arith.constant 1 : index
    %one = arith.constant 1 : i64
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    call @parallax_rt_cuda_conv2d_f32(%x, %x, %x, %one, %one, %one, %one, %one, %one, %one) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64) -> ()
    call @parallax_rt_cuda_conv2d_filter_grad_f32(%x, %x, %x, %one, %one, %one, %one, %one, %one, %one) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64) -> ()
    call @host(%x) : (memref<*xf32>) -> ()
    return
  }
}

// -----

// After another call (no token to join), the product gets one on the
// program's stream, which the kernels after it continue; any other call
// keeps its wait before it.
// CHECK-LABEL: func.func @after_host_work
// CHECK: gpu.wait [%{{.*}}]
// CHECK-NEXT: call @host
// CHECK-NEXT: %[[T:.*]] = gpu.wait async
// CHECK-NEXT: call @parallax_rt_cuda_matmul_f32
// CHECK-NEXT: %{{.*}} = gpu.launch_func async [%[[T]]] @kernels::@kernel
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%b: memref<16xf32>) kernel { gpu.return }
  }
  func.func private @parallax_rt_cuda_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
  func.func private @host(memref<*xf32>)
  func.func @after_host_work(%a: memref<16xf32>, %x: memref<*xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    call @host(%x) : (memref<*xf32>) -> ()
    call @parallax_rt_cuda_matmul_f32(%x, %x, %x) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    return
  }
}

// -----

// A gradient's AllReduce between the kernel that writes it and the
// optimizer kernel that reads the result queues on the stream too: the
// host calls it without waiting (one worker: a device copy; NCCL: after an
// event; host buckets: their copy waits itself), and the update kernel
// continues the chain. A call the ABI does not mark, such as a row sort
// on the host, still waits.
// CHECK-LABEL: func.func @allreduce
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@kernel
// CHECK-NOT: gpu.wait
// CHECK: call @parallax_rt_allreduce_add_f32
// CHECK-NEXT: call @parallax_rt_allreduce_start
// CHECK-NEXT: call @parallax_rt_allreduce_wait
// CHECK-NOT: gpu.wait
// CHECK: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@kernel
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: call @parallax_rt_row_segments
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%b: memref<16xf32>) kernel { gpu.return }
  }
  func.func private @parallax_rt_allreduce_add_f32(i64, !llvm.ptr, memref<*xf32>, memref<*xf32>)
  func.func private @parallax_rt_allreduce_start(i64, i32)
  func.func private @parallax_rt_allreduce_wait(i64)
  func.func private @parallax_rt_row_segments(!llvm.ptr, i64, memref<*xi64>, memref<*xi64>, memref<*xi64>, memref<*xi64>) -> i64
  func.func @allreduce(%g: memref<16xf32>, %r: memref<16xf32>, %name: !llvm.ptr, %ids: memref<*xi64>) {
    %c1 = arith.constant 1 : index
    %c0_i64 = arith.constant 0 : i64
    %c1_i32 = arith.constant 1 : i32
    %c16_i64 = arith.constant 16 : i64
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%g : memref<16xf32>)
    %in = memref.cast %g : memref<16xf32> to memref<*xf32>
    %out = memref.cast %r : memref<16xf32> to memref<*xf32>
    call @parallax_rt_allreduce_add_f32(%c0_i64, %name, %in, %out) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
    call @parallax_rt_allreduce_start(%c0_i64, %c1_i32) : (i64, i32) -> ()
    call @parallax_rt_allreduce_wait(%c0_i64) : (i64) -> ()
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%r : memref<16xf32>)
    %n = call @parallax_rt_row_segments(%name, %c16_i64, %ids, %ids, %ids, %ids) : (!llvm.ptr, i64, memref<*xi64>, memref<*xi64>, memref<*xi64>, memref<*xi64>) -> i64
    return
  }
}

// -----

// A question to the runtime between kernels (the update's number, for
// Adam's bias correction) touches no buffer: the host does not wait for
// the stream before it, and the kernels after it continue the chain.
// CHECK-LABEL: func.func @question
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@kernel
// CHECK-NOT: gpu.wait
// CHECK: call @parallax_rt_current_step
// CHECK-NOT: gpu.wait
// CHECK: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@kernel
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%b: memref<16xf32>, %t: i64) kernel { gpu.return }
  }
  func.func private @parallax_rt_current_step() -> i64
  func.func @question(%a: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    %c0_i64 = arith.constant 0 : i64
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>, %c0_i64 : i64)
    %t = call @parallax_rt_current_step() : () -> i64
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>, %t : i64)
    return
  }
}
