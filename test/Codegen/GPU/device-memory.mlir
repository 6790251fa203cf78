// RUN: parallax-opt %s --split-input-file --pass-pipeline='builtin.module(parallax-gpu-device-memory)' | FileCheck %s

// A buffer only kernels reach is device memory; gpu-async-region orders
// its deallocation on the stream later.
// CHECK-LABEL: func.func @kernels_only
// CHECK-NOT: memref.alloc
// CHECK: %[[B:.*]] = gpu.alloc  (%arg0) : memref<?x4xf32>
// CHECK: memref.dim %[[B]]
// CHECK: gpu.launch
// CHECK: gpu.dealloc  %[[B]] : memref<?x4xf32>
// CHECK-NOT: memref.dealloc
func.func @kernels_only(%n: index) -> index {
  %one = arith.constant 1 : index
  %zero = arith.constant 0 : index
  %x = arith.constant 1.0 : f32
  %b = memref.alloc(%n) : memref<?x4xf32>
  %rows = memref.dim %b, %zero : memref<?x4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    memref.store %x, %b[%tx, %tx] : memref<?x4xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<?x4xf32>
  return %rows : index
}

// -----

// Views of a buffer handed to cuBLAS and cuDNN, which queue on the stream,
// keep it on the device, and so does the AllReduce, whose runtime moves
// gradients by device copies; a buffer the host reads, or hands to a
// call the host runs, or returns, is managed memory.
// CHECK-LABEL: func.func @host_and_library
// CHECK: %[[LIBRARY:.*]] = gpu.alloc  () : memref<4x4xf32>
// CHECK: %[[READ:.*]] = gpu.alloc  host_shared () : memref<4xf32>
// CHECK: %[[REDUCED:.*]] = gpu.alloc  () : memref<16xf32>
// CHECK: %[[HOST:.*]] = gpu.alloc  host_shared () : memref<8xf32>
// CHECK: %[[RETURNED:.*]] = gpu.alloc  host_shared () : memref<2xf32>
// CHECK: memref.transpose %[[LIBRARY]]
// CHECK: call @parallax_rt_cuda_matmul_f32
// CHECK: memref.load %[[READ]]
// CHECK: call @parallax_rt_allreduce_add_f32
// CHECK: call @host(%[[HOST]])
// CHECK: return %{{.*}}, %[[RETURNED]]
func.func private @parallax_rt_cuda_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
func.func private @parallax_rt_allreduce_add_f32(i64, !llvm.ptr, memref<*xf32>, memref<*xf32>)
func.func private @host(memref<8xf32>)
func.func @host_and_library(%name: !llvm.ptr) -> (f32, memref<2xf32>) {
  %zero = arith.constant 0 : index
  %id = arith.constant 0 : i64
  %library = memref.alloc() : memref<4x4xf32>
  %read = memref.alloc() : memref<4xf32>
  %reduced = memref.alloc() : memref<16xf32>
  %host = memref.alloc() : memref<8xf32>
  %returned = memref.alloc() : memref<2xf32>
  %t = memref.transpose %library (i, j) -> (j, i) : memref<4x4xf32> to memref<4x4xf32, strided<[1, 4]>>
  %c = memref.cast %t : memref<4x4xf32, strided<[1, 4]>> to memref<*xf32>
  call @parallax_rt_cuda_matmul_f32(%c, %c, %c) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  %v = memref.load %read[%zero] : memref<4xf32>
  %r = memref.cast %reduced : memref<16xf32> to memref<*xf32>
  call @parallax_rt_allreduce_add_f32(%id, %name, %r, %r) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  call @host(%host) : (memref<8xf32>) -> ()
  memref.dealloc %library : memref<4x4xf32>
  memref.dealloc %read : memref<4xf32>
  memref.dealloc %reduced : memref<16xf32>
  memref.dealloc %host : memref<8xf32>
  return %v, %returned : f32, memref<2xf32>
}

// -----

// The deallocation's alias checks compare addresses (stored into its
// helper's list of base pointers): that reads no element. An address
// turned back into a pointer could be loaded through: managed memory.
// CHECK-LABEL: func.func @addresses
// CHECK: %[[COMPARED:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK: %[[ESCAPED:.*]] = gpu.alloc  host_shared () : memref<4xf32>
func.func @addresses(%list: memref<2xindex>) -> !llvm.ptr {
  %zero = arith.constant 0 : index
  %compared = memref.alloc() : memref<4xf32>
  %escaped = memref.alloc() : memref<4xf32>
  %a = memref.extract_aligned_pointer_as_index %compared : memref<4xf32> -> index
  memref.store %a, %list[%zero] : memref<2xindex>
  %b = memref.extract_aligned_pointer_as_index %escaped : memref<4xf32> -> index
  %same = arith.cmpi eq, %a, %b : index
  %i = arith.index_cast %b : index to i64
  %p = llvm.inttoptr %i : i64 to !llvm.ptr
  memref.dealloc %compared : memref<4xf32>
  memref.dealloc %escaped : memref<4xf32>
  return %p : !llvm.ptr
}
