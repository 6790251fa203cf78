// RUN: parallax-opt %s --split-input-file --parallax-channels-innermost=min-iterations=1 | FileCheck %s
// RUN: parallax-opt %s --split-input-file "--parallax-channels-innermost=min-channels=64 min-iterations=1" | FileCheck %s --check-prefix=FEW
// RUN: parallax-opt %s --split-input-file --parallax-channels-innermost | FileCheck %s --check-prefix=SMALL

// A depthwise convolution over 2x2 images (rows of 2 points), loops
// (n, c, h, w, g, kh, kw): it runs on NHWC copies with the channel loop
// innermost, (n, h, w, g, kh, kw, c). The padded input is transposed
// before its pad, the filter to (g, kh, kw, c), the zero-filled output is
// filled in the new shape, and the result is transposed back.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[F:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME: %[[X:.*]]: tensor<16x32x2x2xf32>, %[[K:.*]]: tensor<32x1x3x3xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<16x32x2x2xf32>) outs(%{{.*}} : tensor<16x2x2x32xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[XP:.*]] = tensor.pad %[[XT]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: } : tensor<16x2x2x32xf32> to tensor<16x4x4x32xf32>
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<32x1x3x3xf32>) outs(%{{.*}} : tensor<1x3x3x32xf32>) permutation = [1, 2, 3, 0]
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x2x2x32xf32>)
// CHECK: %[[YT:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[F]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[XP]], %[[KT]] : tensor<16x4x4x32xf32>, tensor<1x3x3x32xf32>) outs(%[[ZERO]] : tensor<16x2x2x32xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: %[[Y:.*]] = linalg.transpose ins(%[[YT]] : tensor<16x2x2x32xf32>) outs(%{{.*}} : tensor<16x32x2x2xf32>) permutation = [0, 3, 1, 2]
// CHECK: return %[[Y]]
// Fewer channels than min-channels, or fewer points than min-iterations
// (18,432; the default is 32,768): left alone.
// FEW-LABEL: func.func @depthwise(
// FEW-NOT: linalg.transpose
// FEW: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// SMALL-LABEL: func.func @depthwise(
// SMALL-NOT: linalg.transpose
// SMALL: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// SMALL-LABEL: func.func @filter_gradient(
// SMALL: linalg.transpose
// SMALL-LABEL: func.func @filter_gradient_in_order(
// SMALL: linalg.transpose
#in = affine_map<(n, c, h, w, g, kh, kw) -> (n, c + g, h + kh, w + kw)>
#f = affine_map<(n, c, h, w, g, kh, kw) -> (c, g, kh, kw)>
#out = affine_map<(n, c, h, w, g, kh, kw) -> (n, c, h, w)>
func.func @depthwise(%x: tensor<16x32x2x2xf32>, %k: tensor<32x1x3x3xf32>) -> tensor<16x32x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %a: index, %b: index):
    tensor.yield %zero : f32
  } : tensor<16x32x2x2xf32> to tensor<16x32x4x4xf32>
  %e = tensor.empty() : tensor<16x32x2x2xf32>
  %y = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32x2x2xf32>) -> tensor<16x32x2x2xf32>
  %r = linalg.generic {indexing_maps = [#in, #f, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%p, %k : tensor<16x32x4x4xf32>, tensor<32x1x3x3xf32>) outs(%y : tensor<16x32x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32x2x2xf32>
  return %r : tensor<16x32x2x2xf32>
}

// -----

// A stride-2 depthwise filter gradient, loops (c, g, kh, kw, n, h, w),
// accumulating into a given tensor (transposed, not refilled). Its output
// is smaller than both inputs: the sums over the batch and the image go
// outside the window's loops, so the inputs are read once, and its sum
// carries reassoc: the batch of 16 is summed in 8 groups of 2 images, a
// parallel loop outside the others, (grp, n, h, w, g, kh, kw, c), then
// the groups' partial sums are added to the init, the channels innermost.
// 110,592 points: rewritten by default too.
// CHECK-DAG: #[[GX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5, d3 * 2 + d6, d4 + d7)>
// CHECK-DAG: #[[GDY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>
// CHECK-DAG: #[[GP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d4, d5, d6, d7)>
// CHECK-DAG: #[[SUMIN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d1, d2, d4)>
// CHECK-DAG: #[[SUMOUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func.func @filter_gradient(
// CHECK-SAME: %[[X:.*]]: tensor<16x24x17x17xf32>, %[[DY:.*]]: tensor<16x24x8x8xf32>, %[[ACC:.*]]: tensor<24x1x3x3xf32>
// CHECK-DAG: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<16x24x17x17xf32>) outs(%{{.*}} : tensor<16x17x17x24xf32>) permutation = [0, 2, 3, 1]
// CHECK-DAG: %[[DYT:.*]] = linalg.transpose ins(%[[DY]] : tensor<16x24x8x8xf32>) outs(%{{.*}} : tensor<16x8x8x24xf32>) permutation = [0, 2, 3, 1]
// CHECK-DAG: %[[ACCT:.*]] = linalg.transpose ins(%[[ACC]] : tensor<24x1x3x3xf32>) outs(%{{.*}} : tensor<1x3x3x24xf32>) permutation = [1, 2, 3, 0]
// CHECK-DAG: %[[XG:.*]] = tensor.expand_shape %[[XT]] {{\[}}[0, 1], [2], [3], [4]] output_shape [8, 2, 17, 17, 24]
// CHECK-DAG: %[[DYG:.*]] = tensor.expand_shape %[[DYT]] {{\[}}[0, 1], [2], [3], [4]] output_shape [8, 2, 8, 8, 24]
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x1x3x3x24xf32>)
// CHECK: %[[PARTIAL:.*]] = linalg.generic {indexing_maps = [#[[GX]], #[[GDY]], #[[GP]]], iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "parallel", "parallel", "parallel"]} ins(%[[XG]], %[[DYG]] : {{.*}}) outs(%[[ZEROS]] : tensor<8x1x3x3x24xf32>)
// CHECK: %[[DW:.*]] = linalg.generic {indexing_maps = [#[[SUMIN]], #[[SUMOUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[PARTIAL]] : tensor<8x1x3x3x24xf32>) outs(%[[ACCT]] : tensor<1x3x3x24xf32>)
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK: linalg.transpose ins(%[[DW]] : tensor<1x3x3x24xf32>) outs(%{{.*}} : tensor<24x1x3x3xf32>) permutation = [3, 0, 1, 2]
// Without reassoc the batch is summed in order: no groups.
// CHECK-LABEL: func.func @filter_gradient_in_order(
// CHECK-NOT: tensor.expand_shape
// CHECK: iterator_types = ["reduction", "reduction", "reduction", "parallel", "parallel", "parallel", "parallel"]
// CHECK-NOT: linalg.generic
// CHECK: linalg.transpose
#gx = affine_map<(c, g, kh, kw, n, h, w) -> (n, c + g, 2 * h + kh, 2 * w + kw)>
#gdy = affine_map<(c, g, kh, kw, n, h, w) -> (n, c, h, w)>
#gw = affine_map<(c, g, kh, kw, n, h, w) -> (c, g, kh, kw)>
func.func @filter_gradient(%x: tensor<16x24x17x17xf32>, %dy: tensor<16x24x8x8xf32>, %acc: tensor<24x1x3x3xf32>) -> tensor<24x1x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#gx, #gdy, #gw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<16x24x17x17xf32>, tensor<16x24x8x8xf32>) outs(%acc : tensor<24x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<24x1x3x3xf32>
  return %r : tensor<24x1x3x3xf32>
}
func.func @filter_gradient_in_order(%x: tensor<16x24x17x17xf32>, %dy: tensor<16x24x8x8xf32>, %acc: tensor<24x1x3x3xf32>) -> tensor<24x1x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#gx, #gdy, #gw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<16x24x17x17xf32>, tensor<16x24x8x8xf32>) outs(%acc : tensor<24x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<24x1x3x3xf32>
  return %r : tensor<24x1x3x3xf32>
}

// -----

// Left alone: a stride-1 convolution over rows of 8 (it vectorizes along
// them), an elementwise op (no reduction), and a sum whose channel index
// is already the output's last.
// CHECK-LABEL: func.func @long_rows(
// CHECK-NOT: linalg.transpose
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-LABEL: func.func @elementwise(
// CHECK-NOT: linalg.transpose
// CHECK-LABEL: func.func @channel_sums(
// CHECK-NOT: linalg.transpose
// CHECK: return
#in = affine_map<(n, c, h, w, g, kh, kw) -> (n, c + g, h + kh, w + kw)>
#f = affine_map<(n, c, h, w, g, kh, kw) -> (c, g, kh, kw)>
#out = affine_map<(n, c, h, w, g, kh, kw) -> (n, c, h, w)>
func.func @long_rows(%x: tensor<2x32x10x10xf32>, %k: tensor<32x1x3x3xf32>, %y: tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32> {
  %r = linalg.generic {indexing_maps = [#in, #f, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %k : tensor<2x32x10x10xf32>, tensor<32x1x3x3xf32>) outs(%y : tensor<2x32x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x32x8x8xf32>
  return %r : tensor<2x32x8x8xf32>
}
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @elementwise(%x: tensor<2x32x2x2xf32>, %y: tensor<2x32x2x2xf32>) -> tensor<2x32x2x2xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x32x2x2xf32>) outs(%y : tensor<2x32x2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x32x2x2xf32>
  return %r : tensor<2x32x2x2xf32>
}
#sin = affine_map<(n, c, p) -> (n, c, p)>
#sout = affine_map<(n, c, p) -> (n, c)>
func.func @channel_sums(%x: tensor<2x32x4xf32>, %y: tensor<2x32xf32>) -> tensor<2x32xf32> {
  %r = linalg.generic {indexing_maps = [#sin, #sout], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x32x4xf32>) outs(%y : tensor<2x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x32xf32>
  return %r : tensor<2x32xf32>
}
