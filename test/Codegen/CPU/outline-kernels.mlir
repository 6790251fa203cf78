// RUN: parallax-opt %s --split-input-file --parallax-outline-kernels | FileCheck %s

// Each linalg op moves into a private, noinline kernel named after its
// function, its position, its kind and its ONNX node; the constants it
// uses are cloned in, other values become arguments. Two distinct
// allocations reach distinct buffers: both pointers of each descriptor
// (positions 0-1 and 7-8 of memref<4x2xf32>'s 7 fields) are noalias.
// CHECK: func.func private @"step.k0.fill./net/Relu"(%{{.*}}: memref<4x2xf32>) attributes {parallax.noalias_pointers = array<i64: 0, 1>, passthrough = ["noinline"]}
// CHECK: arith.constant 1.0
// CHECK: linalg.fill
// CHECK: func.func private @"step.k1.generic./net/Relu"(%{{.*}}: memref<4x2xf32>, %{{.*}}: memref<4x2xf32>) attributes {parallax.noalias_pointers = array<i64: 0, 1, 7, 8>, passthrough = ["noinline"]}
// CHECK: arith.constant 0.0
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-LABEL: func.func @step
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK-NOT: linalg.
// CHECK: call @"step.k0.fill./net/Relu"(%[[A]])
// CHECK-NOT: linalg.
// CHECK: call @"step.k1.generic./net/Relu"(%[[A]], %[[B]])
// CHECK-NOT: linalg.
// CHECK: return
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @step() {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x2xf32>
  %b = memref.alloc() : memref<4x2xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<4x2xf32>) loc("/net/Relu")
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x2xf32>) outs(%b : memref<4x2xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } loc("/net/Relu")
  memref.dealloc %a : memref<4x2xf32>
  memref.dealloc %b : memref<4x2xf32>
  return
}

// -----

// Two views of one buffer (an op reading one half and writing the other)
// may overlap as far as the pass knows: no noalias. A function argument
// may alias another argument, but never a fresh allocation: the
// allocation's pointers are noalias, the argument's are not. A scalar
// computed outside the op is an argument.
// CHECK: func.func private @views.k0.copy
// CHECK-NOT: noalias
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: func.func private @views.k1.generic(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: f32) attributes {parallax.noalias_pointers = array<i64: 5, 6>, passthrough = ["noinline"]}
// CHECK-LABEL: func.func @views
// CHECK: call @views.k0.copy(%{{.*}}, %{{.*}}) : (memref<4xf32, strided<[1]>>, memref<4xf32, strided<[1], offset: 4>>) -> ()
// CHECK: call @views.k1.generic(%arg0, %{{.*}}, %arg1)
#id = affine_map<(d0) -> (d0)>
func.func @views(%in: memref<4xf32>, %scale: f32) {
  %buffer = memref.alloc() : memref<8xf32>
  %low = memref.subview %buffer[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %high = memref.subview %buffer[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  linalg.copy ins(%low : memref<4xf32, strided<[1]>>) outs(%high : memref<4xf32, strided<[1], offset: 4>>)
  %out = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%in : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.mulf %x, %scale : f32
    linalg.yield %r : f32
  }
  memref.dealloc %buffer : memref<8xf32>
  memref.dealloc %out : memref<4xf32>
  return
}
