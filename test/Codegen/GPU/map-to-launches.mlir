// RUN: parallax-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(parallax-gpu-map-to-launches,canonicalize))' | FileCheck %s
// RUN: parallax-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(parallax-gpu-map-to-launches))' 2>/dev/null | FileCheck %s --check-prefix=HOST

// Every linalg op and copy of a host function becomes a kernel; nothing
// of them is left to run on the host.
// HOST-NOT: linalg.
// HOST-NOT: memref.copy
// HOST-NOT: scf.parallel

// An elementwise op over 4x3x50 = 600 points: 3 blocks of 256 threads,
// each thread one point, its indices delinearised from
// block * blockDim + thread, threads past 600 doing nothing.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[POINTS:.*]] = arith.constant 600 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[BDX:.*]] = %[[THREADS]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK: %[[SCALED:.*]] = arith.muli %[[BX]], %[[BDX]]
// CHECK: %[[LINEAR:.*]] = arith.addi %[[SCALED]], %[[TX]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LINEAR]], %[[POINTS]]
// CHECK: scf.if %[[IN]]
// CHECK: %[[I:.*]]:3 = affine.delinearize_index %[[LINEAR]] into (4, 3, 50)
// CHECK: %[[X:.*]] = memref.load %arg0[%[[I]]#0, %[[I]]#1, %[[I]]#2]
// CHECK: %[[Y:.*]] = arith.negf %[[X]]
// CHECK: memref.store %[[Y]], %arg1[%[[I]]#0, %[[I]]#1, %[[I]]#2]
// CHECK: gpu.terminator
func.func @elementwise(%in: memref<4x3x50xf32>, %out: memref<4x3x50xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%in : memref<4x3x50xf32>) outs(%out : memref<4x3x50xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A small space (60 points) gets one block of whole warps (64 threads),
// not 256.
// CHECK-LABEL: func.func @small
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 64 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[THREADS]],
func.func @small(%in: memref<4x15xf32>, %out: memref<4x15xf32>) {
  linalg.copy ins(%in : memref<4x15xf32>) outs(%out : memref<4x15xf32>)
  return
}

// -----

// A statically empty space (a zero-size tensor) runs nothing: no launch,
// no loop (before, a zero in the delinearization basis failed to verify).
// CHECK-LABEL: func.func @empty
// CHECK-NOT: gpu.launch
// CHECK-NOT: scf.for
// CHECK: return
func.func @empty(%in: memref<0x3x4xf32>, %out: memref<0x3x4xf32>) {
  linalg.copy ins(%in : memref<0x3x4xf32>) outs(%out : memref<0x3x4xf32>)
  return
}

// -----

// A matrix product of 100x300 outputs: 118 blocks of 256 threads, one
// output each, the reduction a loop inside the thread.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 118 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[THREADS]],
// CHECK: affine.delinearize_index %{{.*}} into (100, 300)
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul(%a: memref<100x50xf32>, %b: memref<50x300xf32>, %c: memref<100x300xf32>) {
  linalg.matmul ins(%a, %b : memref<100x50xf32>, memref<50x300xf32>) outs(%c : memref<100x300xf32>)
  return
}

// -----

// Dynamic sizes: the number of blocks is computed on the host, at least
// one (a size of 0 launches threads that do nothing).
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.*]] = memref.dim
// CHECK: %[[DIV:.*]] = arith.ceildivsi %[[N]], %{{.*}}
// CHECK: %[[BLOCKS:.*]] = arith.maxsi %[[DIV]], %{{.*}}
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS]],
// CHECK: arith.cmpi ult, %{{.*}}, %[[N]]
func.func @dynamic(%in: memref<?xf32>, %out: memref<?xf32>) {
  linalg.copy ins(%in : memref<?xf32>) outs(%out : memref<?xf32>)
  return
}

// -----

// A copy into a strided view (a padded image) is a kernel too.
// CHECK-LABEL: func.func @copy_into_view
// CHECK: %[[VIEW:.*]] = memref.subview
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[VIEW]]
func.func @copy_into_view(%in: memref<4x4xf32>, %padded: memref<6x6xf32>) {
  %view = memref.subview %padded[1, 1] [4, 4] [1, 1] : memref<6x6xf32> to memref<4x4xf32, strided<[6, 1], offset: 7>>
  memref.copy %in, %view : memref<4x4xf32> to memref<4x4xf32, strided<[6, 1], offset: 7>>
  return
}

// -----

// A reduction to a scalar has no parallel loop: one warp runs it, each
// lane summing every 32nd element from zero, five xor shuffles combining
// the lanes' sums, lane 0 adding the total to the output.
// CHECK-LABEL: func.func @sum
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[LANES:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[N:.*]] = arith.constant 1000 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[LANES]], %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK: %[[PARTIAL:.*]] = scf.for %[[I:.*]] = %[[TX]] to %[[N]] step %[[LANES]] iter_args(%[[ACC:.*]] = %[[ZERO]])
// CHECK: %[[X:.*]] = memref.load %arg0[%[[I]]]
// CHECK: arith.addf %[[X]], %[[ACC]]
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle xor %[[PARTIAL]], %c1_i32, %c32_i32 : f32
// CHECK: %[[T1:.*]] = arith.addf %[[PARTIAL]], %[[S1]]
// CHECK: gpu.shuffle xor %[[T1]], %c2_i32, %c32_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32, %c32_i32
// CHECK: %[[S16:.*]], %{{.*}} = gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32
// CHECK: %[[TOTAL:.*]] = arith.addf %{{.*}}, %[[S16]]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %c0
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.load %arg1[]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK: memref.store %[[NEW]], %arg1[]
func.func @sum(%in: memref<1000xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%in : memref<1000xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A softmax's row maxima over 20 rows of 2 x 500 (two reduced loops, the
// inner one along the rows' memory): 3 blocks of 8 warps, a warp per
// row; each lane's points delinearised into the two loops; the combiner
// keeps its fastmath flags; linalg.index reads the loop index. (6 rows
// would take one block of 6 warps, 192 threads.)
// CHECK-LABEL: func.func @row_maxima
// CHECK-DAG: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c3, {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK: %[[WARP:.*]] = arith.divui %[[TX]], %c32
// CHECK: %[[FIRST:.*]] = arith.muli %[[BX]], %c8
// CHECK: %[[ROW:.*]] = arith.addi %[[FIRST]], %[[WARP]]
// CHECK: arith.cmpi ult, %[[ROW]], %c20
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c1000 step %c32 iter_args(%{{.*}} = %[[NEG]])
// CHECK: %[[J:.*]]:2 = affine.delinearize_index %[[I]] into (2, 500)
// CHECK: memref.load %arg0[%[[ROW]], %[[J]]#0, %[[J]]#1]
// CHECK: arith.index_cast %[[J]]#1
// CHECK: arith.maximumf {{.*}} fastmath<reassoc>
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %arg1[%[[ROW]]]
func.func @row_maxima(%in: memref<20x2x500xf32>, %out: memref<20xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%in : memref<20x2x500xf32>) outs(%out : memref<20xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %v = arith.addf %a, %jf : f32
    %m = arith.maximumf %v, %acc fastmath<reassoc> : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Rows of 5000 (at least min-block-reduction's 4096 points) get a block of
// 256 threads each: thread t sums points t, t + 256, ...; five shuffles
// combine each warp's sums; lane 0 of warp w leaves its warp's in slot w
// of workgroup memory; after the barrier each warp reads the 8 slots
// (lanes 8 and up start from zero) and three shuffles combine them; thread
// 0 adds the row's total to the output.
// CHECK-LABEL: func.func @long_rows
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c300, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[SHARED:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[PARTIAL:.*]] = scf.if
// CHECK: scf.for %[[I:.*]] = %[[TX]] to %c5000 step %c256 iter_args(%{{.*}} = %[[ZERO]])
// CHECK: memref.load %arg0[%[[BX]], %[[I]]]
// CHECK-COUNT-5: gpu.shuffle xor %{{.*}}, %c{{1|2|4|8|16}}_i32, %c32_i32
// CHECK: %[[WTOTAL:.*]] = arith.addf
// CHECK: %[[LANE:.*]] = arith.remui %[[TX]], %c32
// CHECK: %[[LEADER:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[LEADER]] {
// CHECK: %[[W:.*]] = arith.divui %[[TX]], %c32
// CHECK: memref.store %[[WTOTAL]], %[[SHARED]][%[[W]]]
// CHECK: gpu.barrier
// CHECK: %[[READ:.*]] = arith.cmpi ult, %[[LANE]], %c8
// CHECK: %[[SLOT:.*]] = scf.if %[[READ]] -> (f32) {
// CHECK: memref.load %[[SHARED]][%[[LANE]]]
// CHECK: } else {
// CHECK: scf.yield %[[ZERO]]
// CHECK: gpu.shuffle xor %[[SLOT]], %c1_i32, %c32_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32, %c32_i32
// CHECK: %[[S4:.*]], %{{.*}} = gpu.shuffle xor %{{.*}}, %c4_i32, %c32_i32
// CHECK-NOT: gpu.shuffle
// CHECK: %[[TOTAL:.*]] = arith.addf %{{.*}}, %[[S4]]
// CHECK: arith.cmpi eq, %[[TX]], %c0
// CHECK: %[[OLD:.*]] = memref.load %arg1[%[[BX]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK: memref.store %[[NEW]], %arg1[%[[BX]]]
func.func @long_rows(%in: memref<300x5000xf32>, %out: memref<300xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<300x5000xf32>) outs(%out : memref<300xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Short rows (16 points each, under min-warp-reduction's 64) and f64 sums
// (no 32-bit shuffle) keep a thread per output.
// CHECK-LABEL: func.func @thread_per_output
// CHECK-NOT: gpu.shuffle
// CHECK: return
func.func @thread_per_output(%in: memref<100x16xf32>, %out: memref<100xf32>,
                             %wide: memref<10x1000xf64>, %wout: memref<10xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<100x16xf32>) outs(%out : memref<100xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%wide : memref<10x1000xf64>) outs(%wout : memref<10xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %a, %acc : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// Parallel loops after a reduction come first too: one thread per
// (d0, d2), the reduction one loop.
// CHECK-LABEL: func.func @parallel_inside_reduction
// CHECK: gpu.launch
// CHECK: affine.delinearize_index %{{.*}} into (8, 32)
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: gpu.terminator
func.func @parallel_inside_reduction(%in: memref<8x16x32xf32>, %out: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%in : memref<8x16x32xf32>) outs(%out : memref<8x32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}


// -----

// A reduction outside the parallel loop (a bias gradient: the sum over 64
// rows of each of 1000 columns) runs one thread per column, not one thread
// in all: the parallel loop is put first.
// CHECK-LABEL: func.func @column_sums
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}) threads({{.*}}) in (%{{.*}} = %c256
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.addf
func.func @column_sums(%in: memref<64x1000xf32>, %out: memref<1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%in : memref<64x1000xf32>) outs(%out : memref<1000xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same for a named reduction: linalg.reduce over rows becomes a
// generic with its parallel loop first.
// CHECK-LABEL: func.func @reduce_rows
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}) threads({{.*}}) in (%{{.*}} = %c256
// CHECK: scf.for
// CHECK: arith.addf
func.func @reduce_rows(%in: memref<64x1000xf32>, %out: memref<1000xf32>) {
  linalg.reduce ins(%in : memref<64x1000xf32>) outs(%out : memref<1000xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}
