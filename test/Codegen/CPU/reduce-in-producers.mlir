// RUN: parallax-opt %s --parallax-reduce-in-producers --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A softmax's exponentials and their row sums: one loop nest with two
// results. The sum's zeros, defined after the exponentials, are filled
// before them; the exponentials' other user reads the first result.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x64xf32>
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[FUSED:.*]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<4x64xf32>, tensor<4xf32>)
// CHECK-SAME: outs(%[[EMPTY]], %[[ZEROS]] : tensor<4x64xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[MAX:.*]]: f32, %{{.*}}: f32, %[[SUM:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[X]], %[[MAX]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %[[SUM]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[E]], %[[S]] : f32, f32
// CHECK-NOT: linalg.generic {{.*}}"reduction"
// CHECK: linalg.generic {{.*}} ins(%[[FUSED]]#0, %[[FUSED]]#1 :
func.func @softmax(%x: tensor<4x64xf32>, %max: tensor<4xf32>) -> tensor<4x64xf32> {
  %empty = tensor.empty() : tensor<4x64xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4x64xf32>, tensor<4xf32>) outs(%empty : tensor<4x64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<4xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x64xf32>) outs(%zeros : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x64xf32>, tensor<4xf32>) outs(%empty : tensor<4x64xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x64xf32>
  return %p : tensor<4x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// Left alone: a column sum (its reduction loop is outside the parallel
// one), a reduction with a second input, and a reduction of an op it
// alone reads (elementwise fusion's case).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: linalg.generic
func.func @left_alone(%x: tensor<4x64xf32>, %y: tensor<4x64xf32>, %zc: tensor<64xf32>, %zr: tensor<4xf32>)
    -> (tensor<4x64xf32>, tensor<64xf32>, tensor<4xf32>, tensor<4xf32>) {
  %empty = tensor.empty() : tensor<4x64xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xf32>) outs(%empty : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %columns = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%e : tensor<4x64xf32>) outs(%zc : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %two = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e, %y : tensor<4x64xf32>, tensor<4x64xf32>) outs(%zr : tensor<4xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %m, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x64xf32>) outs(%empty : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.tanh %in : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %alone = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x64xf32>) outs(%zr : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %e, %columns, %two, %alone : tensor<4x64xf32>, tensor<64xf32>, tensor<4xf32>, tensor<4xf32>
}
