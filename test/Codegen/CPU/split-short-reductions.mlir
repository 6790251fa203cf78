// RUN: parallax-opt %s --split-input-file --parallax-split-short-reductions | FileCheck %s

// A depthwise filter gradient, loops (c, kh, kw, n, h, w), its innermost
// reduction an image row of 16: the row becomes a parallel loop into 16
// partial sums per filter element (zero-filled), summed into the init at
// the end.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @filter_grad(
// CHECK-SAME: %[[IN:[^:]*]]: tensor<4x3x18x18xf32>, %[[DY:[^:]*]]: tensor<4x3x16x16xf32>, %[[INIT:[^:]*]]: tensor<3x3x3xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<3x3x3x16xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<3x3x3x16xf32>)
// CHECK: %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[X]], #{{.*}}, #[[PARTIAL]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%[[IN]], %[[DY]] : {{.*}}) outs(%[[FILL]] : tensor<3x3x3x16xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ALL]], #[[ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[SUMS]] : tensor<3x3x3x16xf32>) outs(%[[INIT]] : tensor<3x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.addf %[[ACC]], %[[P]] fastmath<reassoc>
// CHECK: return %[[R]]
#x = affine_map<(c, kh, kw, n, h, w) -> (n, c, h + kh, w + kw)>
#dy = affine_map<(c, kh, kw, n, h, w) -> (n, c, h, w)>
#dw = affine_map<(c, kh, kw, n, h, w) -> (c, kh, kw)>
func.func @filter_grad(%x: tensor<4x3x18x18xf32>, %dy: tensor<4x3x16x16xf32>, %init: tensor<3x3x3xf32>) -> tensor<3x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<4x3x18x18xf32>, tensor<4x3x16x16xf32>) outs(%init : tensor<3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3x3x3xf32>
  return %r : tensor<3x3x3xf32>
}

// -----

// Left alone: a sum without reassoc (its order is fixed), a maximum, and a
// row sum with no reduction around the row (its vectorized loop already
// sums in vector registers).
// CHECK-LABEL: func.func @ordered(
// CHECK-NOT: tensor.empty
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-LABEL: func.func @maximum(
// CHECK-NOT: tensor.empty
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-LABEL: func.func @row_sums(
// CHECK-NOT: tensor.empty
// CHECK: iterator_types = ["parallel", "reduction"]
#in3 = affine_map<(c, n, w) -> (n, c, w)>
#out3 = affine_map<(c, n, w) -> (c)>
func.func @ordered(%x: tensor<32x4x16xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<32x4x16xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @maximum(%x: tensor<32x4x16xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<32x4x16xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
#in2 = affine_map<(p, r) -> (p, r)>
#out2 = affine_map<(p, r) -> (p)>
func.func @row_sums(%x: tensor<64x16xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x16xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// A stride-2 depthwise filter gradient on 8x8 images: the input moves by
// two along the row of 8 (read with gathers or interleaved loads), the
// gradient and the partial sums by one.
// CHECK-DAG: #[[X2:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4 * 2 + d1, d5 * 2 + d2)>
// CHECK-DAG: #[[PARTIAL2:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-LABEL: func.func @strided_filter_grad(
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x3x3x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[X2]], #{{.*}}, #[[PARTIAL2]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<3x3x3x8xf32>) outs(%arg2 : tensor<3x3x3xf32>)
#x2 = affine_map<(c, kh, kw, n, h, w) -> (n, c, 2 * h + kh, 2 * w + kw)>
#dy2 = affine_map<(c, kh, kw, n, h, w) -> (n, c, h, w)>
#dw2 = affine_map<(c, kh, kw, n, h, w) -> (c, kh, kw)>
func.func @strided_filter_grad(%x: tensor<8x3x18x18xf32>, %dy: tensor<8x3x8x8xf32>, %init: tensor<3x3x3xf32>) -> tensor<3x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#x2, #dy2, #dw2], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<8x3x18x18xf32>, tensor<8x3x8x8xf32>) outs(%init : tensor<3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3x3x3xf32>
  return %r : tensor<3x3x3xf32>
}

// -----

// Left alone: an input that moves by three along the row (a stride-3
// window), and a row shorter than 8 (min-inner) read through no window (a
// batch norm's sum), however many rows it sums.
// CHECK-LABEL: func.func @stride_three(
// CHECK-NOT: tensor.empty
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-LABEL: func.func @short_row(
// CHECK-NOT: tensor.empty
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
#x3 = affine_map<(c, kh, kw, n, h, w) -> (n, c, 3 * h + kh, 3 * w + kw)>
#dy3 = affine_map<(c, kh, kw, n, h, w) -> (n, c, h, w)>
#dw3 = affine_map<(c, kh, kw, n, h, w) -> (c, kh, kw)>
func.func @stride_three(%x: tensor<8x3x26x26xf32>, %dy: tensor<8x3x8x8xf32>, %init: tensor<3x3x3xf32>) -> tensor<3x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#x3, #dy3, #dw3], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<8x3x26x26xf32>, tensor<8x3x8x8xf32>) outs(%init : tensor<3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3x3x3xf32>
  return %r : tensor<3x3x3xf32>
}
#in1 = affine_map<(c, n, w) -> (n, c, w)>
#out1 = affine_map<(c, n, w) -> (c)>
func.func @short_row(%x: tensor<32x4x4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#in1, #out1], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<32x4x4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Rows shorter than 8 read through a window (min-window-inner 2): the
// depthwise filter gradients of 4x4 and (stride 2) 2x2 images, split where
// the other reductions sum at least 32 terms (min-window-outer); a batch
// of two 4x4 images (8 terms) is left as it was.
// CHECK-LABEL: func.func @short_window_row(
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x3x3x4xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<3x3x3x4xf32>)
// CHECK-LABEL: func.func @short_strided_window_row(
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x3x3x2xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<3x3x3x2xf32>)
// CHECK-LABEL: func.func @short_window_few_rows(
// CHECK-NOT: tensor.empty
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
#xw = affine_map<(c, kh, kw, n, h, w) -> (n, c, h + kh, w + kw)>
#xw2 = affine_map<(c, kh, kw, n, h, w) -> (n, c, 2 * h + kh, 2 * w + kw)>
#dyw = affine_map<(c, kh, kw, n, h, w) -> (n, c, h, w)>
#dww = affine_map<(c, kh, kw, n, h, w) -> (c, kh, kw)>
func.func @short_window_row(%x: tensor<16x3x6x6xf32>, %dy: tensor<16x3x4x4xf32>, %init: tensor<3x3x3xf32>) -> tensor<3x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#xw, #dyw, #dww], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<16x3x6x6xf32>, tensor<16x3x4x4xf32>) outs(%init : tensor<3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3x3x3xf32>
  return %r : tensor<3x3x3xf32>
}
func.func @short_strided_window_row(%x: tensor<32x3x6x6xf32>, %dy: tensor<32x3x2x2xf32>, %init: tensor<3x3x3xf32>) -> tensor<3x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#xw2, #dyw, #dww], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<32x3x6x6xf32>, tensor<32x3x2x2xf32>) outs(%init : tensor<3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3x3x3xf32>
  return %r : tensor<3x3x3xf32>
}
func.func @short_window_few_rows(%x: tensor<2x3x6x6xf32>, %dy: tensor<2x3x4x4xf32>, %init: tensor<3x3x3xf32>) -> tensor<3x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#xw, #dyw, #dww], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<2x3x6x6xf32>, tensor<2x3x4x4xf32>) outs(%init : tensor<3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3x3x3xf32>
  return %r : tensor<3x3x3xf32>
}
