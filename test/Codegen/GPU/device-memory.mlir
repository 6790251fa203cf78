// RUN: parallax-opt %s --pass-pipeline='builtin.module(func.func(parallax-gpu-device-memory))' | FileCheck %s

// The step's buffers are managed memory that kernels and the runtime both
// reach; gpu-async-region orders their deallocation on the stream later.
// CHECK-LABEL: func.func @buffers
// CHECK-NOT: memref.alloc
// CHECK: %[[B:.*]] = gpu.alloc  host_shared (%arg0) : memref<?x4xf32>
// CHECK: gpu.launch
// CHECK: gpu.dealloc  %[[B]] : memref<?x4xf32>
// CHECK-NOT: memref.dealloc
func.func @buffers(%n: index) {
  %one = arith.constant 1 : index
  %x = arith.constant 1.0 : f32
  %b = memref.alloc(%n) : memref<?x4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    memref.store %x, %b[%tx, %tx] : memref<?x4xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<?x4xf32>
  return
}
