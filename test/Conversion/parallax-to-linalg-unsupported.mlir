// Ops without a lowering yet are reported.
// RUN: not parallax-opt %s --convert-parallax-to-linalg 2>&1 | FileCheck %s
// CHECK: error: failed to legalize operation 'parallax.conv' that was explicitly marked illegal
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = parallax.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return %0 : tensor<1x4x6x6xf32>
}
