// RUN: parallax-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(parallax-gpu-map-to-launches))' | FileCheck %s
// The program's entry point stays on the host.
// CHECK-LABEL: func.func @main
// CHECK-NOT: gpu.launch
// CHECK: memref.copy
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>) {
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

func.func @on_tensors(%t: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is not bufferized: the GPU pipeline maps linalg on buffers}}
  %r = linalg.copy ins(%t : tensor<4xf32>) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
