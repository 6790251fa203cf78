// RUN: parallax-opt %s --split-input-file --parallax-shorten-buffer-lifetimes | FileCheck %s

// Each buffer is freed right after the last op that uses it or a view of
// it (a reshape, a cast to the runtime's unranked memref), not at the end
// of the block; a use inside a loop counts as the loop.
// CHECK-LABEL: func.func @straight_line
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]]
// CHECK: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[A]]
// CHECK: memref.copy %[[FLAT]], %[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[C:.*]] = memref.cast %[[B]]
// CHECK: scf.for
// CHECK: call @reads
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK: call @other
// CHECK-NEXT: return
func.func private @reads(memref<*xf32>)
func.func private @other()
func.func @straight_line(%n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<4x4xf32>)
  %b = memref.alloc() : memref<16xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  memref.copy %flat, %b : memref<16xf32> to memref<16xf32>
  %unranked = memref.cast %b : memref<16xf32> to memref<*xf32>
  scf.for %i = %c0 to %n step %c1 {
    func.call @reads(%unranked) : (memref<*xf32>) -> ()
  }
  func.call @other() : () -> ()
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// A buffer passed to a runtime parameter marked `parallax.retained` (the
// runtime keeps the pointer, e.g. an AllReduce result filled at the
// bucket's wait) keeps its deallocation where it was.
// CHECK-LABEL: func.func @retained
// CHECK: call @allreduce_add
// CHECK: call @allreduce_wait
// CHECK: call @other
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func private @allreduce_add(memref<*xf32>, memref<*xf32> {parallax.retained})
func.func private @allreduce_wait()
func.func private @other()
func.func @retained(%gradient: memref<*xf32>) {
  %out = memref.alloc() : memref<8xf32>
  %view = memref.cast %out : memref<8xf32> to memref<*xf32>
  func.call @allreduce_add(%gradient, %view) : (memref<*xf32>, memref<*xf32>) -> ()
  func.call @allreduce_wait() : () -> ()
  func.call @other() : () -> ()
  memref.dealloc %out : memref<8xf32>
  return
}

// -----

// The same buffer at a parameter that is not retained is freed after the
// call.
// CHECK-LABEL: func.func @not_retained
// CHECK: call @allreduce_add
// CHECK-NEXT: memref.dealloc
// CHECK: call @other
func.func private @allreduce_add(memref<*xf32> {parallax.retained}, memref<*xf32>)
func.func private @other()
func.func @not_retained(%result: memref<*xf32>) {
  %in = memref.alloc() : memref<8xf32>
  %view = memref.cast %in : memref<8xf32> to memref<*xf32>
  func.call @allreduce_add(%result, %view) : (memref<*xf32>, memref<*xf32>) -> ()
  func.call @other() : () -> ()
  memref.dealloc %in : memref<8xf32>
  return
}

// -----

// A buffer whose pointer is taken (which the analysis cannot follow) or
// that is yielded out of a region keeps its deallocation.
// CHECK-LABEL: func.func @escapes
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: call @other
// CHECK: scf.if
// CHECK: call @other
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<4xf32>
// CHECK-NEXT: return
func.func private @other()
func.func private @takes(index)
func.func @escapes(%flag: i1) {
  %a = memref.alloc() : memref<8xf32>
  %pointer = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  func.call @other() : () -> ()
  func.call @takes(%pointer) : (index) -> ()
  %b = memref.alloc() : memref<4xf32>
  %c = scf.if %flag -> memref<4xf32> {
    scf.yield %b : memref<4xf32>
  } else {
    scf.yield %b : memref<4xf32>
  }
  func.call @other() : () -> ()
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<4xf32>
  return
}
