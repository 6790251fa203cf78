// RUN: parallax-opt %s --pass-pipeline='builtin.module(func.func(gpu-async-region,parallax-gpu-unchain-managed-allocs))' | FileCheck %s

// After gpu-async-region the launches are one token chain; a managed
// allocation between them is synchronous and passes its token on, so the
// host never waits for the stream to allocate.
// CHECK-LABEL: func.func @step
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@kernel
// CHECK: %[[B:.*]] = gpu.alloc  host_shared () : memref<16xf32>
// CHECK-NOT: gpu.wait [
// CHECK: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@kernel {{.*}} args(%[[B]] : memref<16xf32>)
// CHECK: %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[B]]
// The host waits only before what it runs itself.
// CHECK: gpu.wait [%[[T3]]]
// CHECK-NEXT: call @host
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%b: memref<16xf32>) kernel { gpu.return }
  }
  func.func private @host()
  func.func @step(%a: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    %b = gpu.alloc host_shared () : memref<16xf32>
    gpu.launch_func @kernels::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<16xf32>)
    gpu.dealloc %b : memref<16xf32>
    call @host() : () -> ()
    return
  }
}
