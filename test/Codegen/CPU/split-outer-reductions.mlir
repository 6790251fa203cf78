// RUN: parallax-opt %s --parallax-split-outer-reductions --split-input-file | FileCheck %s
// RUN: parallax-opt %s --parallax-split-outer-reductions=max-groups=4 --split-input-file | FileCheck %s --check-prefix=FOUR

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A bias gradient (a column sum): 16 groups of 20 rows, summed with the
// groups' loop outermost and parallel, then the 16 partial rows added to
// the original init.
// CHECK-LABEL: func.func @bias_gradient
// CHECK-SAME: (%[[DY:.*]]: tensor<320x1000xf32>, %[[INIT:.*]]: tensor<1000xf32>)
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[DY]] {{\[\[}}0, 1], [2]] output_shape [16, 20, 1000]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<16x1000xf32>)
// CHECK: %[[PARTIAL:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: ins(%[[ROWS]] : tensor<16x20x1000xf32>) outs(%[[ZEROS]] : tensor<16x1000xf32>)
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[PARTIAL]] : tensor<16x1000xf32>) outs(%[[INIT]] : tensor<1000xf32>)
// CHECK: return %[[SUM]]
// With at most 4 groups: 4 of 80 rows.
// FOUR-LABEL: func.func @bias_gradient
// FOUR: output_shape [4, 80, 1000]
func.func @bias_gradient(%dy: tensor<320x1000xf32>, %init: tensor<1000xf32>) -> tensor<1000xf32> {
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<320x1000xf32>) outs(%init : tensor<1000xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<1000xf32>
  return %r : tensor<1000xf32>
}

// -----

// A column maximum over 100 rows: 5 groups of 20 (6 groups would have
// fewer than 16 rows), the partial maxima starting from -inf.
// CHECK-LABEL: func.func @column_max
// CHECK: output_shape [5, 20, 512]
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK: arith.maximumf
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @column_max(%x: tensor<100x512xf32>, %init: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<100x512xf32>) outs(%init : tensor<512xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}

// -----

// Left alone: a row sum (its reduction is inside its parallel loop), a
// column sum under min-iterations, one over a prime number of rows, one
// over too few rows for two groups of 16, one that
// --parallax-parallelize-kernels shares out by its channel loop already
// (64 points inside it), a
// sum over two reduction loops, one with a dynamic size, one whose
// combiner splitReduction does not know, and a sum that may not be
// reassociated.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK-COUNT-9: linalg.generic
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
func.func @left_alone(%a: tensor<320x1000xf32>, %rows: tensor<320xf32>,
                      %small: tensor<64x256xf32>, %cols: tensor<256xf32>,
                      %prime: tensor<331x1000xf32>, %wide: tensor<1000xf32>,
                      %x: tensor<32x64x8x8xf32>, %channels: tensor<64xf32>,
                      %d: tensor<?x1000xf32>, %few: tensor<24x4096xf32>, %long: tensor<4096xf32>,
                      %nchw: tensor<32x96x64xf32>, %chw: tensor<96x64xf32>)
    -> (tensor<320xf32>, tensor<256xf32>, tensor<1000xf32>, tensor<64xf32>,
        tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<4096xf32>, tensor<96x64xf32>) {
  %0 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<320x1000xf32>) outs(%rows : tensor<320xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<320xf32>
  %1 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%small : tensor<64x256xf32>) outs(%cols : tensor<256xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %2 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%prime : tensor<331x1000xf32>) outs(%wide : tensor<1000xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<1000xf32>
  %3 = linalg.generic {indexing_maps = [#nchw, #c], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<32x64x8x8xf32>) outs(%channels : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %4 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%d : tensor<?x1000xf32>) outs(%wide : tensor<1000xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<1000xf32>
  %5 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%a : tensor<320x1000xf32>) outs(%wide : tensor<1000xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %acc, %acc : f32
    %s = arith.addf %v, %sq : f32
    linalg.yield %s : f32
  } -> tensor<1000xf32>
  %6 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%a : tensor<320x1000xf32>) outs(%wide : tensor<1000xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1000xf32>
  %7 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%few : tensor<24x4096xf32>) outs(%long : tensor<4096xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  %8 = linalg.generic {indexing_maps = [affine_map<(n, c, p) -> (n, c, p)>, affine_map<(n, c, p) -> (c, p)>],
                       iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%nchw : tensor<32x96x64xf32>) outs(%chw : tensor<96x64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<96x64xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<320xf32>, tensor<256xf32>, tensor<1000xf32>, tensor<64xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<1000xf32>, tensor<4096xf32>, tensor<96x64xf32>
}
