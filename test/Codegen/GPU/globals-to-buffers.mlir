// RUN: parallax-opt %s --split-input-file --verify-diagnostics --parallax-gpu-globals-to-buffers | FileCheck %s

// A variable (no initial value: the runtime loads it) and a constant
// become buffers main allocates first; a constant's is filled from its
// global. Every other read of a global reads the buffer through its slot.
// CHECK-NOT: memref.global "private" @w
// CHECK: llvm.mlir.global internal @w.buffer() {{.*}} : !llvm.ptr {
// CHECK:   llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.mlir.global internal @c.buffer()
// CHECK: memref.global "private" constant @c : memref<3xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]>
memref.global "private" @w : memref<2x3xf32> = uninitialized {alignment = 64 : i64, parallax.variable = "trainable"}
memref.global "private" constant @c : memref<3xf32> = dense<[1.0, 2.0, 3.0]>

// CHECK-LABEL: func.func @step
// CHECK-NOT: memref.get_global
// CHECK: %[[SLOT:.*]] = llvm.mlir.addressof @w.buffer : !llvm.ptr
// CHECK: %[[P:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[D0:.*]] = llvm.insertvalue %[[P]], %{{.*}}[0]
// CHECK: %[[D1:.*]] = llvm.insertvalue %[[P]], %[[D0]][1]
// CHECK: llvm.insertvalue %{{.*}}[3, 1]
// CHECK: %[[DESC:.*]] = llvm.insertvalue %{{.*}}[4, 1]
// CHECK: %[[W:.*]] = builtin.unrealized_conversion_cast %[[DESC]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<2x3xf32> {parallax.global_buffer_slot = "w.buffer"}
// CHECK: memref.load %[[W]]
func.func @step(%i: index) -> f32 {
  %w = memref.get_global @w : memref<2x3xf32>
  %x = memref.load %w[%i, %i] : memref<2x3xf32>
  return %x : f32
}

// CHECK-LABEL: func.func @main
// CHECK: %[[WB:.*]] = memref.alloc() {alignment = 64 : i64, parallax.global_buffer_slot = "w.buffer"} : memref<2x3xf32>
// CHECK: %[[WP:.*]] = memref.extract_aligned_pointer_as_index %[[WB]]
// CHECK: %[[WI:.*]] = arith.index_cast %[[WP]] : index to i64
// CHECK: %[[WPTR:.*]] = llvm.inttoptr %[[WI]] : i64 to !llvm.ptr
// CHECK: %[[WSLOT:.*]] = llvm.mlir.addressof @w.buffer
// CHECK: llvm.store %[[WPTR]], %[[WSLOT]]
// CHECK: %[[CB:.*]] = memref.alloc() {alignment = 64 : i64, parallax.global_buffer_slot = "c.buffer"} : memref<3xf32>
// CHECK: %[[CG:.*]] = memref.get_global @c : memref<3xf32>
// CHECK: memref.copy %[[CG]], %[[CB]]
// CHECK: llvm.store
// CHECK-NOT: memref.get_global
// CHECK: return
func.func @main() -> i32 {
  %c = memref.get_global @c : memref<3xf32>
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// After the runtime parses the command line (--help and a bad argument
// answered before the program takes its memory), when main reads no
// global before that.
memref.global "private" @v : memref<4xf32> = uninitialized
func.func private @parallax_rt_train_init(i32, !llvm.ptr)

// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.alloc
// CHECK: call @parallax_rt_train_init
// CHECK-NEXT: memref.alloc() {{.*}} : memref<4xf32>
func.func @main(%argc: i32, %argv: !llvm.ptr) -> i32 {
  call @parallax_rt_train_init(%argc, %argv) : (i32, !llvm.ptr) -> ()
  %v = memref.get_global @v : memref<4xf32>
  %z = arith.constant 0 : i32
  return %z : i32
}

// -----

// expected-error @+1 {{parallax-gpu-globals-to-buffers needs the program's main}}
module {
  memref.global "private" @w : memref<2xf32> = uninitialized
}
