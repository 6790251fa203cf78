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

// A barrier the host loops cannot run: one inside a branch, which only
// some threads may reach.
func.func @nested_barrier(%c: i1) {
  %one = arith.constant 1 : index
  // expected-error @+1 {{synchronises its threads other than by xor shuffles of whole warps and barriers at the top level of its body: it cannot run as host loops}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    scf.if %c {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// Private memory has no host form here.
func.func @private_memory() {
  %one = arith.constant 1 : index
  // expected-error @+1 {{with private memory, clusters or async tokens cannot run as host loops}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one)
             private(%p : memref<4xf32, #gpu.address_space<private>>) {
    gpu.terminator
  }
  return
}

// -----

// A warp reduction (--parallax-gpu-map-to-launches): the threads of a
// block run each part of the body between two shuffles before any runs
// the next; what a later part reads of an earlier one is kept per thread
// (the lane and the partial sums; constants are made again), and a
// shuffle reads the slot of thread ^ offset.
// CHECK-LABEL: func.func @warp_sum
// CHECK-NOT: gpu.
// CHECK-DAG: %[[LANES:.*]] = memref.alloc() : memref<64xindex>
// CHECK-DAG: %[[SUMS:.*]] = memref.alloc() : memref<64xf32>
// CHECK-DAG: %[[SUMS2:.*]] = memref.alloc() : memref<64xf32>
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %c2
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %c64
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK: scf.for %{{.*}} = %[[LANE]] to %c1000 step %c32
// CHECK: memref.store %[[LANE]], %[[LANES]][%[[T]]]
// CHECK: memref.store %{{.*}}, %[[SUMS]][%[[T]]]
// CHECK: }
// CHECK: scf.for %[[T2:.*]] = %{{.*}} to %c64
// CHECK-DAG: %[[MINE:.*]] = memref.load %[[SUMS]][%[[T2]]]
// CHECK-DAG: %[[OTHER:.*]] = arith.xori %[[T2]], %c1
// CHECK: %[[THEIRS:.*]] = memref.load %[[SUMS]][%[[OTHER]]]
// CHECK: %[[BOTH:.*]] = arith.addf %[[MINE]], %[[THEIRS]]
// CHECK: memref.store %[[BOTH]], %[[SUMS2]][%[[T2]]]
// CHECK: }
// CHECK: scf.for %[[T3:.*]] = %{{.*}} to %c64
// CHECK: %[[L:.*]] = memref.load %[[LANES]][%[[T3]]]
// CHECK: arith.xori %[[T3]], %c2
// CHECK: arith.cmpi eq, %[[L]]
// CHECK: memref.store %{{.*}}, %arg1[%[[B]]]
// CHECK: }
// CHECK: }
// CHECK-DAG: memref.dealloc %[[LANES]]
// CHECK-DAG: memref.dealloc %[[SUMS]]
// CHECK-DAG: memref.dealloc %[[SUMS2]]
// CHECK: return
func.func @warp_sum(%in: memref<2x1000xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1000 = arith.constant 1000 : index
  %zero = arith.constant 0.0 : f32
  %c1_i32 = arith.constant 1 : i32
  %c2_i32 = arith.constant 2 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %lane = arith.remui %tx, %c32 : index
    %partial = scf.for %i = %lane to %c1000 step %c32 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %in[%bx, %i] : memref<2x1000xf32>
      %s = arith.addf %x, %acc : f32
      scf.yield %s : f32
    }
    %s1, %v1 = gpu.shuffle xor %partial, %c1_i32, %c32_i32 : f32
    %t1 = arith.addf %partial, %s1 : f32
    %s2, %v2 = gpu.shuffle xor %t1, %c2_i32, %c32_i32 : f32
    %t2 = arith.addf %t1, %s2 : f32
    %first = arith.cmpi eq, %lane, %c0 : index
    scf.if %first {
      memref.store %t2, %out[%bx] : memref<2xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Shuffles the host loops cannot run: one inside a branch.
func.func @nested_shuffle(%x: f32) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %true = arith.constant true
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  // expected-error @+1 {{synchronises its threads other than by xor shuffles of whole warps and barriers at the top level of its body}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    scf.if %true {
      %s, %v = gpu.shuffle xor %x, %c1_i32, %c32_i32 : f32
    }
    gpu.terminator
  }
  return
}

// -----

// A block reduction (--parallax-gpu-map-to-launches): lane 0 of each warp
// writes the workgroup buffer before the barrier, every thread reads it
// after: the barrier is a cut between two parts, the workgroup memory one
// host buffer the blocks use in turn, and the barrier itself is gone.
// CHECK-LABEL: func.func @block_sum
// CHECK-NOT: gpu.
// CHECK-DAG: %[[SHARED:.*]] = memref.alloc() : memref<2xf32>
// CHECK-DAG: %[[SUMS:.*]] = memref.alloc() : memref<64xf32>
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %c3
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %c64
// CHECK: scf.for %{{.*}} = %[[T]] to %c1000 step %c64
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[SHARED]][%{{.*}}]
// CHECK: }
// CHECK: scf.for %[[T2:.*]] = %{{.*}} to %c64
// CHECK: %[[READ:.*]] = memref.load %[[SHARED]][%{{.*}}]
// CHECK: memref.store %[[READ]], %[[SUMS]][%[[T2]]]
// CHECK: scf.for %[[T3:.*]] = %{{.*}} to %c64
// CHECK: arith.xori %[[T3]], %c1
// CHECK: memref.store %{{.*}}, %arg1[%[[B]]]
// CHECK-DAG: memref.dealloc %[[SHARED]]
// CHECK-DAG: memref.dealloc %[[SUMS]]
// CHECK: return
func.func @block_sum(%in: memref<3x1000xf32>, %out: memref<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1000 = arith.constant 1000 : index
  %zero = arith.constant 0.0 : f32
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c3, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<2xf32, #gpu.address_space<workgroup>>) {
    %partial = scf.for %i = %tx to %c1000 step %c64 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %in[%bx, %i] : memref<3x1000xf32>
      %s = arith.addf %x, %acc : f32
      scf.yield %s : f32
    }
    %lane = arith.remui %tx, %c32 : index
    %leader = arith.cmpi eq, %lane, %c0 : index
    scf.if %leader {
      %warp = arith.divui %tx, %c32 : index
      memref.store %partial, %shared[%warp] : memref<2xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %c2 = arith.constant 2 : index
    %slot = arith.remui %lane, %c2 : index
    %mine = memref.load %shared[%slot] : memref<2xf32, #gpu.address_space<workgroup>>
    %s1, %v1 = gpu.shuffle xor %mine, %c1_i32, %c32_i32 : f32
    %total = arith.addf %mine, %s1 : f32
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      memref.store %total, %out[%bx] : memref<3xf32>
    }
    gpu.terminator
  }
  return
}
