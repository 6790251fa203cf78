// RUN: parallax-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(parallax-gpu-merge-single-block-launches))' | FileCheck %s

// Two one-block kernels with an allocation between them run as one
// launch at the second's place: the larger block, a barrier between the
// bodies, the first body by its 32 threads only (its block size a
// constant now), the second's reading what the first wrote.
// CHECK-LABEL: func.func @chain
// CHECK: memref.alloc
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads(%[[TX:[^,]*]], {{.*}}) in (%{{[^ ]*}} = %[[C64]],
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[TX]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: arith.muli %{{.*}}, %[[C32]]
// CHECK: memref.store
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: scf.if
// CHECK: memref.load
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @chain(%a: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %x = arith.constant 2.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %sx : index
    %j = arith.addi %i, %tx : index
    memref.store %x, %a[%j] : memref<64xf32>
    gpu.terminator
  }
  %b = memref.alloc() : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<64xf32>
    memref.store %v, %b[%tx] : memref<64xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<64xf32>
  return
}

// -----

// Not merged: a kernel of two blocks between, the host reading memory
// between, or a body with shuffles of its own (a warp reduction).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: gpu.launch blocks
// CHECK-NOT: gpu.barrier
func.func @kept(%a: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  %x = arith.constant 2.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    memref.store %x, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    memref.store %x, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    memref.store %x, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  %v = memref.load %a[%c0] : memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    memref.store %v, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %w = memref.load %a[%tx] : memref<64xf32>
    %s, %ok = gpu.shuffle xor %w, %c1_i32, %c32_i32 : f32
    memref.store %s, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return %v : f32
}

// -----

// Not merged: the two kernels' parameters together (60 memref
// descriptors of 88 bytes) would pass the 4096 bytes a kernel may take.
// CHECK-LABEL: func.func @too_many_parameters
// CHECK-COUNT-2: gpu.launch blocks
// CHECK-NOT: gpu.barrier
func.func @too_many_parameters(%m0: memref<1x1x1x1xf32>, %m1: memref<1x1x1x1xf32>, %m2: memref<1x1x1x1xf32>, %m3: memref<1x1x1x1xf32>, %m4: memref<1x1x1x1xf32>, %m5: memref<1x1x1x1xf32>, %m6: memref<1x1x1x1xf32>, %m7: memref<1x1x1x1xf32>, %m8: memref<1x1x1x1xf32>, %m9: memref<1x1x1x1xf32>, %m10: memref<1x1x1x1xf32>, %m11: memref<1x1x1x1xf32>, %m12: memref<1x1x1x1xf32>, %m13: memref<1x1x1x1xf32>, %m14: memref<1x1x1x1xf32>, %m15: memref<1x1x1x1xf32>, %m16: memref<1x1x1x1xf32>, %m17: memref<1x1x1x1xf32>, %m18: memref<1x1x1x1xf32>, %m19: memref<1x1x1x1xf32>, %m20: memref<1x1x1x1xf32>, %m21: memref<1x1x1x1xf32>, %m22: memref<1x1x1x1xf32>, %m23: memref<1x1x1x1xf32>, %m24: memref<1x1x1x1xf32>, %m25: memref<1x1x1x1xf32>, %m26: memref<1x1x1x1xf32>, %m27: memref<1x1x1x1xf32>, %m28: memref<1x1x1x1xf32>, %m29: memref<1x1x1x1xf32>, %m30: memref<1x1x1x1xf32>, %m31: memref<1x1x1x1xf32>, %m32: memref<1x1x1x1xf32>, %m33: memref<1x1x1x1xf32>, %m34: memref<1x1x1x1xf32>, %m35: memref<1x1x1x1xf32>, %m36: memref<1x1x1x1xf32>, %m37: memref<1x1x1x1xf32>, %m38: memref<1x1x1x1xf32>, %m39: memref<1x1x1x1xf32>, %m40: memref<1x1x1x1xf32>, %m41: memref<1x1x1x1xf32>, %m42: memref<1x1x1x1xf32>, %m43: memref<1x1x1x1xf32>, %m44: memref<1x1x1x1xf32>, %m45: memref<1x1x1x1xf32>, %m46: memref<1x1x1x1xf32>, %m47: memref<1x1x1x1xf32>, %m48: memref<1x1x1x1xf32>, %m49: memref<1x1x1x1xf32>, %m50: memref<1x1x1x1xf32>, %m51: memref<1x1x1x1xf32>, %m52: memref<1x1x1x1xf32>, %m53: memref<1x1x1x1xf32>, %m54: memref<1x1x1x1xf32>, %m55: memref<1x1x1x1xf32>, %m56: memref<1x1x1x1xf32>, %m57: memref<1x1x1x1xf32>, %m58: memref<1x1x1x1xf32>, %m59: memref<1x1x1x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %x = arith.constant 2.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    memref.store %x, %m0[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m1[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m2[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m3[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m4[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m5[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m6[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m7[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m8[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m9[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m10[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m11[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m12[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m13[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m14[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m15[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m16[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m17[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m18[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m19[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m20[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m21[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m22[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m23[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m24[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m25[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m26[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m27[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m28[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m29[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    memref.store %x, %m30[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m31[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m32[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m33[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m34[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m35[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m36[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m37[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m38[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m39[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m40[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m41[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m42[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m43[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m44[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m45[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m46[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m47[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m48[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m49[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m50[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m51[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m52[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m53[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m54[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m55[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m56[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m57[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m58[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    memref.store %x, %m59[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>
    gpu.terminator
  }
  return
}
