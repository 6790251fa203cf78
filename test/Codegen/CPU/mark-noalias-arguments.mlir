// RUN: parallax-opt %s --split-input-file --parallax-mark-noalias-arguments --verify-diagnostics | FileCheck %s

// The positions parallax-outline-kernels recorded become llvm.noalias on
// the LLVM arguments, and the record goes.
// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: (%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// CHECK-NOT: parallax.noalias_pointers
llvm.func @kernel(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64, %b0: !llvm.ptr, %b1: !llvm.ptr, %b2: i64) attributes {parallax.noalias_pointers = array<i64: 0, 1>} {
  llvm.return
}

// -----

// A position that is no pointer means the two passes disagree on the
// descriptor layout: a compiler bug, reported as such.
// expected-error @+1 {{internal error: 'parallax.noalias_pointers' names argument 2, which is not a pointer}}
llvm.func @kernel(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64) attributes {parallax.noalias_pointers = array<i64: 2>} {
  llvm.return
}
