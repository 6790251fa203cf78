// RUN: parallax-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(parallax-gpu-launches-to-loops))' | FileCheck %s

// --target cuda-sim: the grid and each block are host loops (a size-1
// dimension is no loop), the block and thread indices and sizes their
// induction variables and bounds; nothing of the launch is left.
// CHECK-LABEL: func.func @launch
// CHECK-NOT: gpu.
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.for %[[B:.*]] = %[[C0]] to %arg1 step
// CHECK: scf.for %[[T:.*]] = %[[C0]] to %arg2 step
// CHECK: %[[S:.*]] = arith.muli %[[B]], %arg2
// CHECK: %[[I:.*]] = arith.addi %[[S]], %[[T]]
// CHECK: memref.store %{{.*}}, %arg0[%[[I]]]
// CHECK-NOT: gpu.
// CHECK: return
func.func @launch(%out: memref<?xf32>, %blocks: index, %threads: index) {
  %one = arith.constant 1 : index
  %x = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %threads, %sy = %one, %sz = %one) {
    %s = arith.muli %bx, %sx : index
    %i = arith.addi %s, %tx : index
    memref.store %x, %out[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @barrier() {
  %one = arith.constant 1 : index
  // expected-error @+1 {{synchronises its threads: it cannot run as host loops}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    gpu.barrier
    gpu.terminator
  }
  return
}
