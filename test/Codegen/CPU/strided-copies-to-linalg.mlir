// RUN: parallax-opt %s --pass-pipeline='builtin.module(func.func(parallax-strided-copies-to-linalg))' | FileCheck %s

// A convolution's input into its zero-padded buffer: rows of 2 elements
// with gaps between them become a loop nest of the program's own.
// CHECK-LABEL: func.func @into_padding
// CHECK: %[[WINDOW:.*]] = memref.subview %arg1[0, 0, 1, 1] [2, 3, 2, 2] [1, 1, 1, 1]
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%arg0 : memref<2x3x2x2xf32>) outs(%[[WINDOW]] : memref<2x3x2x2xf32, strided<[48, 16, 4, 1], offset: 5>>)
func.func @into_padding(%x: memref<2x3x2x2xf32>, %padded: memref<2x3x4x4xf32>) {
  %window = memref.subview %padded[0, 0, 1, 1] [2, 3, 2, 2] [1, 1, 1, 1] : memref<2x3x4x4xf32> to memref<2x3x2x2xf32, strided<[48, 16, 4, 1], offset: 5>>
  memref.copy %x, %window : memref<2x3x2x2xf32> to memref<2x3x2x2xf32, strided<[48, 16, 4, 1], offset: 5>>
  return
}

// A gradient into every other element of a dilated one (a strided source
// works the same way).
// CHECK-LABEL: func.func @dilated
// CHECK: linalg.copy ins(%arg0 : memref<4x3x1xf32>) outs(%{{.*}} : memref<4x3x1xf32, strided<[6, 2, 1], offset: 1>>)
// CHECK: linalg.copy ins(%{{.*}} : memref<4x3xf32, strided<[6, 2]>>) outs(%arg2 : memref<4x3xf32>)
func.func @dilated(%g: memref<4x3x1xf32>, %dilated: memref<4x3x2xf32>, %out: memref<4x3xf32>) {
  %odd = memref.subview %dilated[0, 0, 1] [4, 3, 1] [1, 1, 1] : memref<4x3x2xf32> to memref<4x3x1xf32, strided<[6, 2, 1], offset: 1>>
  memref.copy %g, %odd : memref<4x3x1xf32> to memref<4x3x1xf32, strided<[6, 2, 1], offset: 1>>
  %even = memref.subview %dilated[0, 0, 0] [4, 3, 1] [1, 1, 1] : memref<4x3x2xf32> to memref<4x3xf32, strided<[6, 2]>>
  memref.copy %even, %out : memref<4x3xf32, strided<[6, 2]>> to memref<4x3xf32>
  return
}

// Copies that are one run on both sides stay memref.copy (llvm.memcpy):
// identity layouts, and a contiguous block of rows at an offset. A copy of
// dynamic shape stays for the runtime.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: linalg.copy
// CHECK: memref.copy %arg0, %arg1 : memref<4x8xf32> to memref<4x8xf32>
// CHECK: memref.copy %arg0, %{{.*}} : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 16>>
// CHECK: memref.copy %arg3, %{{.*}} : memref<?x8xf32> to memref<?x8xf32, strided<[16, 1]>>
// CHECK-NOT: linalg.copy
func.func @untouched(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %rows: memref<8x8xf32>, %d: memref<?x8xf32>, %wide: memref<?x16xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %block = memref.subview %rows[2, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 16>>
  memref.copy %a, %block : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 16>>
  %c0 = arith.constant 0 : index
  %n = memref.dim %d, %c0 : memref<?x8xf32>
  %left = memref.subview %wide[0, 0] [%n, 8] [1, 1] : memref<?x16xf32> to memref<?x8xf32, strided<[16, 1]>>
  memref.copy %d, %left : memref<?x8xf32> to memref<?x8xf32, strided<[16, 1]>>
  return
}
