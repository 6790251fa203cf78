// RUN: parallax-opt %s --split-input-file --parallax-hoist-window-reductions | FileCheck %s
// RUN: parallax-opt %s --split-input-file --parallax-hoist-window-reductions=min-inner=4 | FileCheck %s --check-prefix=SHORT

// A depthwise convolution, loops (n, c, h, w, g, kh, kw): the window's
// reductions move outside w, which becomes the innermost loop, along which
// the input and output are contiguous and the filter constant. The same
// maps, permuted: (n, c, h, g, kh, kw, w).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d3, d2 + d4, d5 + d6)>
// CHECK-DAG: #[[F:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
// CHECK-LABEL: func.func @depthwise(
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[F]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
#in = affine_map<(n, c, h, w, g, kh, kw) -> (n, c + g, h + kh, w + kw)>
#f = affine_map<(n, c, h, w, g, kh, kw) -> (c, g, kh, kw)>
#out = affine_map<(n, c, h, w, g, kh, kw) -> (n, c, h, w)>
func.func @depthwise(%x: tensor<2x4x10x10xf32>, %k: tensor<4x1x3x3xf32>, %y: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %r = linalg.generic {indexing_maps = [#in, #f, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %k : tensor<2x4x10x10xf32>, tensor<4x1x3x3xf32>) outs(%y : tensor<2x4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x8xf32>
  return %r : tensor<2x4x8x8xf32>
}

// -----

// Left alone: a stride-2 window (the input moves by 2 along w), and a row
// sum (its rows are not contiguous along the parallel loop).
// CHECK-LABEL: func.func @strided(
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-LABEL: func.func @row_sums(
// CHECK: iterator_types = ["parallel", "reduction"]
#sin = affine_map<(h, w, kw) -> (h, 2 * w + kw)>
#swin = affine_map<(h, w, kw) -> (kw)>
#sout = affine_map<(h, w, kw) -> (h, w)>
func.func @strided(%x: tensor<4x40xf32>, %k: tensor<3xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = linalg.generic {indexing_maps = [#sin, #swin, #sout], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %k : tensor<4x40xf32>, tensor<3xf32>) outs(%y : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
#rin = affine_map<(p, r) -> (p, r)>
#rout = affine_map<(p, r) -> (p)>
func.func @row_sums(%x: tensor<64x3xf32>, %y: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#rin, #rout], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x3xf32>) outs(%y : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// An image row of 4: too short to vectorize by default (min-inner 8).
// CHECK-LABEL: func.func @short_rows(
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// SHORT-LABEL: func.func @short_rows(
// SHORT: iterator_types = ["parallel", "reduction", "reduction", "parallel"]
#pin = affine_map<(h, w, kh, kw) -> (h + kh, w + kw)>
#pwin = affine_map<(h, w, kh, kw) -> (kh, kw)>
#pout = affine_map<(h, w, kh, kw) -> (h, w)>
func.func @short_rows(%x: tensor<6x6xf32>, %k: tensor<3x3xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.generic {indexing_maps = [#pin, #pwin, #pout], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %k : tensor<6x6xf32>, tensor<3x3xf32>) outs(%y : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
