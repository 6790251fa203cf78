// RUN: parallax-opt %s --pass-pipeline='builtin.module(parallax-gpu-globals-to-buffers,parallax-gpu-device-memory)' | FileCheck %s

// The globals' buffers count the uses of every view loaded from their
// slots, in every function. The variable, which kernels update and the
// runtime reaches by copies (its registration), is device memory; so is
// the optimizer's zeroed state, filled on the device by a memset (its
// global, no longer read, deleted), and the constant, filled by a copy
// from the host. The table a host call reaches (a parameter server's
// pull) is managed memory, as is its fill. A buffer passed to a function
// of the program counts what that function does with it: the input
// (registered for the data loader's copies) only feeds a kernel there;
// the other is returned to the host.

// CHECK-NOT: memref.global "private" @state
// CHECK: memref.global "private" constant @constant
// CHECK-NOT: memref.global "private" @state
memref.global "private" @variable : memref<4xf32> = uninitialized
memref.global "private" @state : memref<4xf32> = dense<0.000000e+00>
memref.global "private" constant @constant : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" @table : memref<8x4xf32> = dense<1.000000e+00>

func.func private @parallax_rt_register_variable(!llvm.ptr, i32, i64, i64, memref<*xf32>)
func.func private @parallax_rt_register_input_f32(!llvm.ptr, memref<*xf32>)
func.func private @pull(memref<8x4xf32>)

func.func @step(%input: memref<4xf32>, %echoed: memref<4xf32>) -> memref<4xf32> {
  %one = arith.constant 1 : index
  %v = memref.get_global @variable : memref<4xf32>
  %s = memref.get_global @state : memref<4xf32>
  %c = memref.get_global @constant : memref<4xf32>
  %t = memref.get_global @table : memref<8x4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    %x = memref.load %input[%tx] : memref<4xf32>
    %k = memref.load %c[%tx] : memref<4xf32>
    %m = memref.load %s[%tx] : memref<4xf32>
    %y = arith.mulf %x, %k : f32
    %z = arith.addf %y, %m : f32
    memref.store %z, %v[%tx] : memref<4xf32>
    memref.store %z, %s[%tx] : memref<4xf32>
    gpu.terminator
  }
  call @pull(%t) : (memref<8x4xf32>) -> ()
  return %echoed : memref<4xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[VARIABLE:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK: %[[STATE:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: gpu.memset %[[STATE]], %[[ZERO]] : memref<4xf32>, f32
// CHECK: %[[CONSTANT:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK: %[[HOST_CONSTANT:.*]] = memref.get_global @constant
// CHECK: gpu.memcpy  %[[CONSTANT]], %[[HOST_CONSTANT]]
// CHECK: %[[TABLE:.*]] = gpu.alloc  host_shared () : memref<8x4xf32>
// CHECK: memref.copy %{{.*}}, %[[TABLE]]
// CHECK: %[[INPUT:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK: %[[ECHOED:.*]] = gpu.alloc  host_shared () : memref<4xf32>
// CHECK: call @step(%[[INPUT]], %[[ECHOED]])
func.func @main(%name: !llvm.ptr) -> i32 {
  %zero32 = arith.constant 0 : i32
  %zero = arith.constant 0 : i64
  %v = memref.get_global @variable : memref<4xf32>
  %vc = memref.cast %v : memref<4xf32> to memref<*xf32>
  call @parallax_rt_register_variable(%name, %zero32, %zero, %zero, %vc) : (!llvm.ptr, i32, i64, i64, memref<*xf32>) -> ()
  %input = memref.alloc() : memref<4xf32>
  %echoed = memref.alloc() : memref<4xf32>
  %ic = memref.cast %input : memref<4xf32> to memref<*xf32>
  call @parallax_rt_register_input_f32(%name, %ic) : (!llvm.ptr, memref<*xf32>) -> ()
  %r = call @step(%input, %echoed) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  memref.dealloc %input : memref<4xf32>
  memref.dealloc %echoed : memref<4xf32>
  return %zero32 : i32
}
