// RUN: parallax-translate --mlir-to-llvmir %s | FileCheck %s
// RUN: parallax-translate --help | FileCheck %s --check-prefix=HELP

// HELP: Parallax translation driver
// HELP: --mlir-to-llvmir

// CHECK: define float @add(float %0, float %1)
// CHECK-NEXT: fadd float %0, %1
llvm.func @add(%a: f32, %b: f32) -> f32 {
  %s = llvm.fadd %a, %b : f32
  llvm.return %s : f32
}
