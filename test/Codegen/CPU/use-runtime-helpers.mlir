// RUN: parallax-opt %s --split-input-file --parallax-use-runtime-helpers --verify-diagnostics | FileCheck %s

// MLIR's lowering of a strided memref.copy calls memrefCopy (a C runner
// utility programs do not link): the declaration and its calls become the
// runtime's entry point.
// CHECK-NOT: @memrefCopy
// CHECK: llvm.func @parallax_rt_memref_copy(i64, !llvm.ptr, !llvm.ptr)
// CHECK: llvm.call @parallax_rt_memref_copy(%arg0, %arg1, %arg2) : (i64, !llvm.ptr, !llvm.ptr) -> ()
llvm.func @memrefCopy(i64, !llvm.ptr, !llvm.ptr)
llvm.func @copy(%size: i64, %source: !llvm.ptr, %target: !llvm.ptr) {
  llvm.call @memrefCopy(%size, %source, %target) : (i64, !llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

// -----

// A declaration that is not the one MLIR's lowering makes is an error.
// expected-error @+1 {{'memrefCopy' does not have the signature of parallax_rt_memref_copy '(i64, !llvm.ptr, !llvm.ptr) -> ()'}}
llvm.func @memrefCopy(i64, !llvm.ptr)
