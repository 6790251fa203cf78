// RUN: parallax-opt %s --verify-diagnostics --pass-pipeline='builtin.module(func.func(parallax-gpu-map-to-launches{threads-per-block=100}))'

// expected-error @+1 {{threads-per-block must be a multiple of 32 up to 1024, got 100}}
func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  return
}
