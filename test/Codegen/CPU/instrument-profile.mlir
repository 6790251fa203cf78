// RUN: parallax-opt %s --split-input-file --parallax-instrument-profile --verify-diagnostics | FileCheck %s

// Each kernel call, matrix product, optimizer update and copy of the step
// becomes a site bracketed by profile_begin/end; the table describes each
// in site order: family, FLOPs, bytes, node, name. The cheap runtime call
// (current_step) and the kernel's own body are left alone.
// CHECK-LABEL: func.func @step(
// CHECK: %[[S0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @parallax_rt_profile_begin(%[[S0]])
// CHECK-NEXT: call @"step.k0.generic./fc/Relu"(
// CHECK-NEXT: call @parallax_rt_profile_end(%[[S0]])
// CHECK: %[[S1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @parallax_rt_profile_begin(%[[S1]])
// CHECK-NEXT: call @parallax_rt_matmul_f32(
// CHECK-NEXT: call @parallax_rt_profile_end(%[[S1]])
// CHECK: call @parallax_rt_current_step()
// CHECK-NOT: profile_begin
// CHECK: %[[S2:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @parallax_rt_profile_begin(%[[S2]])
// CHECK-NEXT: memref.copy
// CHECK-NEXT: call @parallax_rt_profile_end(%[[S2]])
// CHECK: %[[S3:.*]] = arith.constant 3 : i64
// CHECK-NEXT: call @parallax_rt_profile_begin(%[[S3]])
// CHECK-NEXT: call @"step.k1.generic./loss/ReduceSum"(
// CHECK-NEXT: call @parallax_rt_profile_end(%[[S3]])
// CHECK: %[[S4:.*]] = arith.constant 4 : i64
// CHECK-NEXT: call @parallax_rt_profile_begin(%[[S4]])
// CHECK-NEXT: call @"step.k2.generic./emb/Gather"(
// CHECK: %[[S5:.*]] = arith.constant 5 : i64
// CHECK-NEXT: call @parallax_rt_profile_begin(%[[S5]])
// CHECK-NEXT: call @"step.k3.generic./conv/Conv"(
// CHECK: func.func private @"step.k0.generic./fc/Relu"(
// CHECK-NOT: profile
// CHECK: return
// The relu: 2048 points of one maximumf, 8 KiB in and 8 KiB out. The
// 64x128 by 128x32 product: 2 M N K FLOPs, (8192 + 4096 + 2048) floats.
// The copy reads and writes 8 KiB. The row sums: 2048 additions, 8 KiB
// in, 256 bytes out that are also read. The gather: 32 bytes of ids, 512
// of rows out, and at most one float per point (128) of the 1000 x 32
// table. The im2col copy: 240 bytes in, 576 out, through a window.
// CHECK: llvm.mlir.global external constant @parallax_profile_sites
// CHECK-SAME: "elementwise\092048\0916384\09/fc/Relu\09step.k0.generic./fc/Relu\0A
// CHECK-SAME: matrix product (BLAS)\09524288\0957344\09/fc/Gemm\09matmul_f32\0A
// CHECK-SAME: copy and layout\090\0916384\09/fc/Identity\09memref.copy\0A
// CHECK-SAME: reduction\092048\098704\09/loss/ReduceSum\09step.k1.generic./loss/ReduceSum\0A
// CHECK-SAME: gather and scatter\090\091056\09/emb/Gather\09step.k2.generic./emb/Gather\0A
// CHECK-SAME: im2col and padding\090\09816\09/conv/Conv\09step.k3.generic./conv/Conv\0A\00"
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1, d2, d3) -> (d0, d1 + d2, d3)>
#win = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func private @parallax_rt_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
func.func private @parallax_rt_current_step() -> i64
func.func @step(%x: memref<64x32xf32>, %a: memref<64x128xf32>, %b: memref<128x32xf32>,
                %ids: memref<4xi64>, %table: memref<1000x32xf32>, %img: memref<2x10x3xf32>) {
  %y = memref.alloc() : memref<64x32xf32>
  call @"step.k0.generic./fc/Relu"(%x, %y) : (memref<64x32xf32>, memref<64x32xf32>) -> () loc("/fc/Relu")
  %ua = memref.cast %a : memref<64x128xf32> to memref<*xf32>
  %ub = memref.cast %b : memref<128x32xf32> to memref<*xf32>
  %c = memref.alloc() : memref<64x32xf32>
  %uc = memref.cast %c : memref<64x32xf32> to memref<*xf32>
  call @parallax_rt_matmul_f32(%ua, %ub, %uc) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> () loc("/fc/Gemm")
  %n = call @parallax_rt_current_step() : () -> i64
  memref.copy %c, %y : memref<64x32xf32> to memref<64x32xf32> loc("/fc/Identity")
  %s = memref.alloc() : memref<64xf32>
  call @"step.k1.generic./loss/ReduceSum"(%y, %s) : (memref<64x32xf32>, memref<64xf32>) -> () loc("/loss/ReduceSum")
  %rows = memref.alloc() : memref<4x32xf32>
  call @"step.k2.generic./emb/Gather"(%ids, %table, %rows) : (memref<4xi64>, memref<1000x32xf32>, memref<4x32xf32>) -> () loc("/emb/Gather")
  %cols = memref.alloc() : memref<2x8x3x3xf32>
  call @"step.k3.generic./conv/Conv"(%img, %cols) : (memref<2x10x3xf32>, memref<2x8x3x3xf32>) -> () loc("/conv/Conv")
  return
}
func.func private @"step.k0.generic./fc/Relu"(%x: memref<64x32xf32>, %y: memref<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x32xf32>) outs(%y : memref<64x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  }
  return
}
func.func private @"step.k1.generic./loss/ReduceSum"(%y: memref<64x32xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<64x32xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  }
  return
}
func.func private @"step.k2.generic./emb/Gather"(%ids: memref<4xi64>, %table: memref<1000x32xf32>, %rows: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : memref<4xi64>) outs(%rows : memref<4x32xf32>) {
  ^bb0(%id: i64, %o: f32):
    %r = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = memref.load %table[%r, %j] : memref<1000x32xf32>
    linalg.yield %v : f32
  }
  return
}
func.func private @"step.k3.generic./conv/Conv"(%img: memref<2x10x3xf32>, %cols: memref<2x8x3x3xf32>) {
  linalg.generic {indexing_maps = [#col, #win], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%img : memref<2x10x3xf32>) outs(%cols : memref<2x8x3x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

// The table's symbol is the pass's own: a module that has one already was
// instrumented before.
// expected-error @+1 {{the module already has profile sites ('parallax_profile_sites')}}
module {
  llvm.mlir.global external constant @parallax_profile_sites("\00")
}

// -----

// Index elements count 8 bytes; a dynamic extent makes the counts 0 (the
// site is still timed).
// CHECK-LABEL: func.func @offsets(
// CHECK: call @parallax_rt_profile_begin
// CHECK: llvm.mlir.global external constant @parallax_profile_sites("copy and layout\090\0964\09\09offsets.k0.copy\0Acopy and layout\090\090\09\09offsets.k1.copy\0A\00")
func.func @offsets(%a: memref<4xindex>, %b: memref<4xindex>, %c: memref<?xf32>, %d: memref<?xf32>) {
  call @offsets.k0.copy(%a, %b) : (memref<4xindex>, memref<4xindex>) -> ()
  call @offsets.k1.copy(%c, %d) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}
func.func private @offsets.k0.copy(%a: memref<4xindex>, %b: memref<4xindex>) {
  linalg.copy ins(%a : memref<4xindex>) outs(%b : memref<4xindex>)
  return
}
func.func private @offsets.k1.copy(%c: memref<?xf32>, %d: memref<?xf32>) {
  linalg.copy ins(%c : memref<?xf32>) outs(%d : memref<?xf32>)
  return
}

// -----

// A buffer read through several maps (a max pooling's window positions,
// stride 2) is one buffer: 2 x 8 floats of the padded row read once, 2 x 4
// written; 8 points of one maximumf each.
// CHECK-LABEL: func.func @pool(
// CHECK: llvm.mlir.global external constant @parallax_profile_sites("elementwise\098\0996\09\09pool.k0.generic\0A\00")
#even = affine_map<(d0, d1) -> (d0, d1 * 2)>
#odd = affine_map<(d0, d1) -> (d0, d1 * 2 + 1)>
#out = affine_map<(d0, d1) -> (d0, d1)>
func.func @pool(%x: memref<2x8xf32>, %y: memref<2x4xf32>) {
  call @pool.k0.generic(%x, %y) : (memref<2x8xf32>, memref<2x4xf32>) -> ()
  return
}
func.func private @pool.k0.generic(%x: memref<2x8xf32>, %y: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#even, #odd, #out], iterator_types = ["parallel", "parallel"]}
      ins(%x, %x : memref<2x8xf32>, memref<2x8xf32>) outs(%y : memref<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}
