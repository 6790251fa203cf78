// RUN: parallax-opt %s --split-input-file --parallax-allreduce-in-place | FileCheck %s

// A weight gradient that nothing reads after its AllReduce starts takes
// the reduced values itself: the fresh buffer goes, and the later update
// reads the gradient's buffer through the cast they shared (moved to the
// add).
// CHECK-LABEL: func.func @in_place
// CHECK: %[[G:.*]] = memref.alloc() : memref<4x6xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[G]]
// CHECK: %[[IN:.*]] = memref.cast %[[VIEW]]
// CHECK: %[[OUT:.*]] = memref.cast %[[VIEW]]
// CHECK: call @parallax_rt_allreduce_add_f32(%{{.*}}, %{{.*}}, %[[IN]], %[[OUT]])
// CHECK: call @parallax_rt_allreduce_wait
// CHECK: call @update(%[[OUT]])
func.func private @parallax_rt_allreduce_add_f32(i64, !llvm.ptr, memref<*xf32>, memref<*xf32> {parallax.retained})
func.func private @parallax_rt_allreduce_wait(i64)
func.func private @update(memref<*xf32>)
func.func @in_place(%x: memref<4x6xf32>, %name: !llvm.ptr) {
  %c0 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  %result = memref.alloc() : memref<4x2x3xf32>
  %out = memref.cast %result : memref<4x2x3xf32> to memref<*xf32>
  %g = memref.alloc() : memref<4x6xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<4x6xf32>)
  linalg.copy ins(%x : memref<4x6xf32>) outs(%g : memref<4x6xf32>)
  %view = memref.expand_shape %g [[0], [1, 2]] output_shape [4, 2, 3] : memref<4x6xf32> into memref<4x2x3xf32>
  %in = memref.cast %view : memref<4x2x3xf32> to memref<*xf32>
  func.call @parallax_rt_allreduce_add_f32(%c0, %name, %in, %out) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  func.call @parallax_rt_allreduce_wait(%c0) : (i64) -> ()
  func.call @update(%out) : (memref<*xf32>) -> ()
  return
}

// -----

// The gradient is read after the add (a batch statistic the forward pass
// still uses): the fresh buffer stays.
// CHECK-LABEL: func.func @read_after
// CHECK: linalg.copy
// CHECK: %[[R:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[OUT:.*]] = memref.cast %[[R]]
// CHECK: call @parallax_rt_allreduce_add_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[OUT]])
func.func private @parallax_rt_allreduce_add_f32(i64, !llvm.ptr, memref<*xf32>, memref<*xf32> {parallax.retained})
func.func @read_after(%x: memref<8xf32>, %y: memref<8xf32>, %name: !llvm.ptr) {
  %c0 = arith.constant 0 : i64
  %g = memref.alloc() : memref<8xf32>
  linalg.copy ins(%x : memref<8xf32>) outs(%g : memref<8xf32>)
  %result = memref.alloc() : memref<8xf32>
  %in = memref.cast %g : memref<8xf32> to memref<*xf32>
  %out = memref.cast %result : memref<8xf32> to memref<*xf32>
  func.call @parallax_rt_allreduce_add_f32(%c0, %name, %in, %out) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  linalg.copy ins(%g : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// Through a view made after the add, too.
// CHECK-LABEL: func.func @view_read_after
// CHECK: linalg.copy
// CHECK: %[[R:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[OUT:.*]] = memref.cast %[[R]]
// CHECK: call @parallax_rt_allreduce_add_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[OUT]])
func.func private @parallax_rt_allreduce_add_f32(i64, !llvm.ptr, memref<*xf32>, memref<*xf32> {parallax.retained})
func.func @view_read_after(%x: memref<8xf32>, %y: memref<2x4xf32>, %name: !llvm.ptr) {
  %c0 = arith.constant 0 : i64
  %g = memref.alloc() : memref<8xf32>
  linalg.copy ins(%x : memref<8xf32>) outs(%g : memref<8xf32>)
  %result = memref.alloc() : memref<8xf32>
  %in = memref.cast %g : memref<8xf32> to memref<*xf32>
  %out = memref.cast %result : memref<8xf32> to memref<*xf32>
  func.call @parallax_rt_allreduce_add_f32(%c0, %name, %in, %out) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  %later = memref.expand_shape %g [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  linalg.copy ins(%later : memref<2x4xf32>) outs(%y : memref<2x4xf32>)
  return
}

// -----

// A call before the add that may keep the gradient (another bucket's add),
// a gradient that is an argument (not this function's buffer), and a
// gradient passed through a view of another type: the fresh buffer stays.
// CHECK-LABEL: func.func @called_before
// CHECK-COUNT-2: memref.alloc() : memref<8xf32>
// CHECK-LABEL: func.func @argument
// CHECK: memref.alloc() : memref<8xf32>
// CHECK-LABEL: func.func @other_type
// CHECK: memref.alloc() : memref<4xf32>
func.func private @parallax_rt_allreduce_add_f32(i64, !llvm.ptr, memref<*xf32>, memref<*xf32> {parallax.retained})
func.func @called_before(%x: memref<8xf32>, %name: !llvm.ptr) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %g = memref.alloc() : memref<8xf32>
  linalg.copy ins(%x : memref<8xf32>) outs(%g : memref<8xf32>)
  %in = memref.cast %g : memref<8xf32> to memref<*xf32>
  %first = memref.alloc() : memref<8xf32>
  %firstOut = memref.cast %first : memref<8xf32> to memref<*xf32>
  func.call @parallax_rt_allreduce_add_f32(%c1, %name, %firstOut, %in) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  %result = memref.alloc() : memref<8xf32>
  %out = memref.cast %result : memref<8xf32> to memref<*xf32>
  func.call @parallax_rt_allreduce_add_f32(%c0, %name, %in, %out) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  return
}
func.func @argument(%g: memref<8xf32>, %name: !llvm.ptr) {
  %c0 = arith.constant 0 : i64
  %result = memref.alloc() : memref<8xf32>
  %in = memref.cast %g : memref<8xf32> to memref<*xf32>
  %out = memref.cast %result : memref<8xf32> to memref<*xf32>
  func.call @parallax_rt_allreduce_add_f32(%c0, %name, %in, %out) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  return
}
func.func @other_type(%x: memref<8xf32>, %name: !llvm.ptr) {
  %c0 = arith.constant 0 : i64
  %g = memref.alloc() : memref<8xf32>
  linalg.copy ins(%x : memref<8xf32>) outs(%g : memref<8xf32>)
  %half = memref.subview %g[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %result = memref.alloc() : memref<4xf32>
  %in = memref.cast %half : memref<4xf32, strided<[1], offset: 4>> to memref<*xf32>
  %out = memref.cast %result : memref<4xf32> to memref<*xf32>
  func.call @parallax_rt_allreduce_add_f32(%c0, %name, %in, %out) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  return
}
