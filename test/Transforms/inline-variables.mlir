// RUN: parallax-opt %s --parallax-inline-variables | FileCheck %s

// A variable read but never written becomes a constant and disappears; an
// assigned one, or one without a value, stays a variable.
// CHECK-NOT: @frozen
// CHECK: parallax.variable trainable @updated
// CHECK: parallax.variable trainable @unloaded
// CHECK-NOT: @frozen
parallax.variable trainable @frozen : tensor<2xf32> = dense<[1.0, 2.0]>
parallax.variable trainable @updated : tensor<2xf32> = dense<[3.0, 4.0]>
parallax.variable trainable @unloaded : tensor<2xf32>

// CHECK-LABEL: func.func @step
// CHECK: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[U:.*]] = parallax.read @updated
// CHECK: %[[N:.*]] = parallax.read @unloaded
// CHECK: parallax.add %[[C]], %[[U]]
func.func @step(%x: tensor<2xf32>) -> tensor<2xf32> {
  %f = parallax.read @frozen : tensor<2xf32>
  %u = parallax.read @updated : tensor<2xf32>
  %n = parallax.read @unloaded : tensor<2xf32>
  %s = parallax.add %f, %u : tensor<2xf32>, tensor<2xf32>
  parallax.assign @updated, %x : tensor<2xf32>
  %t = parallax.add %s, %n : tensor<2xf32>, tensor<2xf32>
  return %t : tensor<2xf32>
}
