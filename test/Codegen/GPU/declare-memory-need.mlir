// RUN: parallax-opt %s --split-input-file --verify-diagnostics --parallax-gpu-declare-memory-need | FileCheck %s

// What the runtime takes from the driver, keeping freed blocks for the
// next allocation of the same size and kind: per size and kind, the most
// blocks live at once. The variable (1024 bytes) and the input (64) live
// for the whole run; in the step (its loop's body counted once) two more
// 64-byte blocks are live at once beside the input (3 x 64), a later one
// reuses a freed block, a 128-byte block is another size (128) and the
// loss another kind (4, managed); a dynamic size is not counted.
// 1024 + 192 + 128 + 4 = 1348.
// The call comes before main's first allocation.
// CHECK-LABEL: func.func @main
// CHECK-NOT: gpu.alloc
// CHECK: %[[NEED:.*]] = arith.constant 1348 : i64
// CHECK-NEXT: call @parallax_rt_cuda_memory_need(%[[NEED]]) : (i64) -> ()
// CHECK-NEXT: gpu.alloc  () : memref<256xf32>
func.func @step(%x: memref<16xf32>, %n: index) {
  %a = gpu.alloc () : memref<16xf32>
  %b = gpu.alloc () : memref<16xf32>
  gpu.dealloc %a : memref<16xf32>
  gpu.dealloc %b : memref<16xf32>
  %c = gpu.alloc () : memref<16xf32>
  gpu.dealloc %c : memref<16xf32>
  %e = gpu.alloc () : memref<32xf32>
  gpu.dealloc %e : memref<32xf32>
  %loss = gpu.alloc host_shared () : memref<f32>
  gpu.dealloc %loss : memref<f32>
  %d = gpu.alloc (%n) : memref<?xf32>
  gpu.dealloc %d : memref<?xf32>
  return
}

func.func @main() -> i32 {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %steps = arith.constant 10 : index
  %v = gpu.alloc () : memref<256xf32>
  %x = gpu.alloc () : memref<16xf32>
  scf.for %i = %zero to %steps step %one {
    func.call @step(%x, %steps) : (memref<16xf32>, index) -> ()
  }
  gpu.dealloc %x : memref<16xf32>
  gpu.dealloc %v : memref<256xf32>
  %r = arith.constant 0 : i32
  return %r : i32
}

// -----

// expected-error @+1 {{parallax-gpu-declare-memory-need needs the program's main}}
module {
  func.func @step() {
    return
  }
}
