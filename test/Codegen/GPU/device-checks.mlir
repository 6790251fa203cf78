// RUN: parallax-opt %s --split-input-file --verify-diagnostics --parallax-gpu-device-checks | FileCheck %s

// A failed index check inside a kernel prints the runtime's message (the
// node and what it indexes, the value, the range) and stops the kernel.
// CHECK-LABEL: func.func @check
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-NEXT: gpu.printf "error: the ids of node 'emb' into 'table' (10 rows, 100%% used): index %lld is outside [%lld, %lld)\0A", %{{.*}}, %{{.*}}, %{{.*}} : i64, i64, i64
// CHECK-NEXT: llvm.intr.trap
// CHECK-NOT: call @parallax_rt_index_out_of_range
llvm.mlir.global internal constant @where("the ids of node 'emb' into 'table' (10 rows, 100% used)\00") {addr_space = 0 : i32}
func.func private @parallax_rt_index_out_of_range(!llvm.ptr, i64, i64, i64)
func.func @check(%id: i64) {
  %one = arith.constant 1 : index
  %low = arith.constant 0 : i64
  %high = arith.constant 10 : i64
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    %where = llvm.mlir.addressof @where : !llvm.ptr
    %bad = arith.cmpi sge, %id, %high : i64
    scf.if %bad {
      func.call @parallax_rt_index_out_of_range(%where, %id, %low, %high) : (!llvm.ptr, i64, i64, i64) -> ()
    }
    gpu.terminator
  }
  return
}

// -----

func.func private @host_function()
func.func @host_call() {
  %one = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %one, %gy = %one, %gz = %one)
             threads(%tx, %ty, %tz) in (%sx = %one, %sy = %one, %sz = %one) {
    // expected-error @+1 {{inside a kernel calls 'host_function', a host function}}
    func.call @host_function() : () -> ()
    gpu.terminator
  }
  return
}
