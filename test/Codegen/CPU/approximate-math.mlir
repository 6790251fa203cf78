// RUN: parallax-opt %s --parallax-approximate-math | FileCheck %s
// RUN: parallax-opt %s --parallax-approximate-math | FileCheck %s --check-prefix=NONE

// f32 exp, log and tanh become inline polynomials (plain arithmetic LLVM
// vectorizes) whose fused multiply-adds are the LLVM intrinsic, not calls
// of libm's fmaf; f64 is left for libm.
// NONE-NOT: math.exp {{.*}} : f32
// NONE-NOT: math.log
// NONE-NOT: math.tanh
// NONE-NOT: math.fma
// CHECK-LABEL: func.func @approximations
// CHECK: llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// CHECK: math.exp %arg1 : f64
// CHECK: return
func.func @approximations(%x: f32, %y: f64) -> (f32, f32, f32, f64) {
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %t = math.tanh %x : f32
  %d = math.exp %y : f64
  return %e, %l, %t, %d : f32, f32, f32, f64
}
