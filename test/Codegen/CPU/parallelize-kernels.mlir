// RUN: parallax-opt %s --split-input-file --parallax-parallelize-kernels | FileCheck %s
// RUN: parallax-opt %s --split-input-file --parallax-parallelize-kernels=min-iterations=1000000 | FileCheck %s --check-prefix=HIGH

// A large elementwise kernel: 256 equal chunks of its loop run in
// parallel, each through a chunk function that keeps the kernel's memrefs
// as arguments (and its noalias pointers) for LLVM's vectorizer, and whose
// loop has a static trip count.
// CHECK-LABEL: func.func private @neg(
// CHECK-SAME: %[[A:[^:]*]]: memref<65536xf32>, %[[B:[^:]*]]: memref<65536xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%[[C0]]) to (%[[COUNT:.*]]) step (%[[C1]])
// CHECK-NEXT: %[[BEGIN:.*]] = arith.muli %[[I]], %[[SIZE:.*]] : index
// CHECK-NEXT: func.call @neg.chunk(%[[A]], %[[B]], %[[BEGIN]])
// CHECK-NEXT: scf.reduce
// CHECK-NOT: linalg.generic
// CHECK: func.func private @neg.chunk(%{{.*}}: memref<65536xf32>, %{{.*}}: memref<65536xf32>, %[[LO:.*]]: index)
// CHECK-SAME: parallax.noalias_pointers = array<i64: 0, 1, 5, 6>, passthrough = ["noinline"]
// CHECK: %[[N:.*]] = arith.constant 256 : index
// CHECK: %[[HI:.*]] = arith.addi %[[LO]], %[[N]]
// CHECK: scf.for %{{.*}} = %[[LO]] to %[[HI]]
// CHECK: arith.negf
// CHECK-NOT: linalg.generic
// Below the threshold given, it is left to convert-linalg-to-loops.
// HIGH-LABEL: func.func private @neg(
// HIGH-NOT: scf.parallel
// HIGH: linalg.generic
// HIGH-NOT: @neg.chunk
#map = affine_map<(d0) -> (d0)>
func.func private @neg(%a: memref<65536xf32>, %b: memref<65536xf32>) attributes {parallax.noalias_pointers = array<i64: 0, 1, 5, 6>, passthrough = ["noinline"]} {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : memref<65536xf32>) outs(%b : memref<65536xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    %m = arith.maximumf %n, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Rows of a row-wise sum are shared out: 513 rows in 171 chunks of 3;
// each row's sum stays one sequential loop, so the result does not depend
// on the threads.
// CHECK-LABEL: func.func private @row_sums(
// CHECK-DAG: %[[SIZE:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[CHUNKS:.*]] = arith.constant 171 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[CHUNKS]])
// CHECK-NEXT: arith.muli %[[I]], %[[SIZE]]
// CHECK: func.func private @row_sums.chunk(
// CHECK: scf.for %{{.*}} = %arg2 to %{{.*}} step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: arith.addf
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func private @row_sums(%a: memref<513x256xf32>, %s: memref<513xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<513x256xf32>) outs(%s : memref<513xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// 1031 rows (a prime) have no divisor that makes enough equal chunks:
// chunks of 5, the last one of 1, and the chunk function takes the end.
// CHECK-LABEL: func.func private @prime_rows(
// CHECK-DAG: %[[SIZE:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[CHUNKS:.*]] = arith.constant 207 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[CHUNKS]])
// CHECK-NEXT: %[[BEGIN:.*]] = arith.muli %[[I]], %[[SIZE]]
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[BEGIN]], %[[SIZE]]
// CHECK-NEXT: %[[END:.*]] = arith.constant 1031 : index
// CHECK-NEXT: %[[LIMIT:.*]] = arith.minsi %[[NEXT]], %[[END]]
// CHECK-NEXT: func.call @prime_rows.chunk(%arg0, %arg1, %[[BEGIN]], %[[LIMIT]])
// CHECK: func.func private @prime_rows.chunk(%{{.*}}, %{{.*}}, %[[LO:[^:]*]]: index, %[[HI:[^:]*]]: index)
// CHECK: scf.for %{{.*}} = %[[LO]] to %[[HI]]
#in = affine_map<(d0, d1) -> (d0, d1)>
func.func private @prime_rows(%a: memref<1031x64xf32>, %b: memref<1031x64xf32>) {
  linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<1031x64xf32>) outs(%b : memref<1031x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A unit batch loop is not the one shared: the loop inside it is.
// CHECK-LABEL: func.func private @transpose(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}})
// CHECK: func.func private @transpose.chunk(
// CHECK-SAME: %[[LO:[^:]*]]: index)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C1]]
// CHECK: %[[HI:.*]] = arith.addi %[[LO]]
// CHECK-NEXT: scf.for %{{.*}} = %[[LO]] to %[[HI]]
func.func private @transpose(%a: memref<1x256x512xf32>, %b: memref<1x512x256xf32>) {
  linalg.transpose ins(%a : memref<1x256x512xf32>) outs(%b : memref<1x512x256xf32>) permutation = [0, 2, 1]
  return
}

// -----

// A batch norm's per-channel sums over NCHW: the channel loop is shared
// out inside the batch loop, each chunk's channels summed over (n, h, w)
// in the order a single thread would.
// CHECK-LABEL: func.func private @channel_sums(
// CHECK-DAG: %[[SIZE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[CHUNKS:.*]] = arith.constant 64 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[CHUNKS]])
// CHECK: func.func private @channel_sums.chunk(%{{.*}}: memref<32x64x8x8xf32>, %{{.*}}: memref<64xf32>, %[[LO:.*]]: index)
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: %[[HI:.*]] = arith.addi %[[LO]], %{{.*}}
// CHECK-NEXT: scf.for %{{.*}} = %[[LO]] to %[[HI]] step
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK: arith.addf
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#per_channel = affine_map<(n, c, h, w) -> (c)>
func.func private @channel_sums(%x: memref<32x64x8x8xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [#x, #per_channel],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<32x64x8x8xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left alone: a column sum (its only parallel loop is the innermost, so
// chunks would read single elements), a small
// op, an op on tensors, one with a dynamic size, and one that is not
// alone in its function (not a kernel of --parallax-outline-kernels).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.parallel
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: scf.parallel
// CHECK-NOT: .chunk
#in = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
func.func @left_alone(%a: memref<512x256xf32>, %s: memref<256xf32>,
                      %small: memref<1000xf32>, %t: tensor<65536xf32>,
                      %d: memref<?xf32>, %e: memref<65536xf32>) -> tensor<65536xf32> {
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<512x256xf32>) outs(%s : memref<256xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      outs(%small : memref<1000xf32>) {
  ^bb0(%y: f32):
    %n = arith.negf %y : f32
    linalg.yield %n : f32
  }
  %r = linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      outs(%t : tensor<65536xf32>) {
  ^bb0(%y: f32):
    %n = arith.negf %y : f32
    linalg.yield %n : f32
  } -> tensor<65536xf32>
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      outs(%d : memref<?xf32>) {
  ^bb0(%y: f32):
    %n = arith.negf %y : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      outs(%e : memref<65536xf32>) {
  ^bb0(%y: f32):
    %n = arith.negf %y : f32
    linalg.yield %n : f32
  }
  return %r : tensor<65536xf32>
}

// -----

// A transpose by tiles of registers (--parallax-vectorize-transposes):
// the shared loop is one of the two it steps through by 8, so its 1152
// rows go in 144 chunks of one tile each, and the chunk is the tile loops.
// CHECK-LABEL: func.func private @transpose(
// CHECK-DAG: %[[SIZE:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[CHUNKS:.*]] = arith.constant 144 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[CHUNKS]])
// CHECK-NEXT: %[[BEGIN:.*]] = arith.muli %[[I]], %[[SIZE]] : index
// CHECK-NEXT: func.call @transpose.chunk(%{{.*}}, %{{.*}}, %[[BEGIN]])
// CHECK: func.func private @transpose.chunk(%[[A:[^:]*]]: memref<128x1152xf32>, %[[B:[^:]*]]: memref<1152x128xf32>, %[[LO:.*]]: index)
// CHECK: %[[HI:.*]] = arith.addi %[[LO]], %{{.*}} : index
// CHECK: scf.for %[[R:.*]] = %[[LO]] to %[[HI]] step %{{.*}} {
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: vector.load %[[A]][%[[C]], %[[R]]] : memref<128x1152xf32>, vector<8xf32>
// CHECK: vector.store %{{.*}}, %[[B]][%[[R]], %[[C]]] : memref<1152x128xf32>, vector<8xf32>
// CHECK-NOT: linalg.transpose
func.func private @transpose(%a: memref<128x1152xf32>, %b: memref<1152x128xf32>) attributes {parallax.noalias_pointers = array<i64: 0, 1, 7, 8>, passthrough = ["noinline"]} {
  linalg.transpose ins(%a : memref<128x1152xf32>) outs(%b : memref<1152x128xf32>) permutation = [1, 0]
  return
}
