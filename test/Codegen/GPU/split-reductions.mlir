// RUN: parallax-opt %s --split-input-file --parallax-gpu-split-reductions | FileCheck %s
// RUN: parallax-opt %s --split-input-file --parallax-gpu-split-reductions=block-threads=0 | FileCheck %s --check-prefix=NOBLOCKS

// A loss's row sums over a 100,000-word vocabulary for 32 tokens: 32
// threads of 100,000 additions each become 32 x 1000 threads of 100
// (thread kk of a row sums elements k * 1000 + kk); the 1000 partials of
// a row are left to a warp per row (at most 64 per lane, read along the
// row): no second round.
// CHECK-LABEL: func.func @row_sums
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [32, 100, 1000]
// CHECK: %[[PARTIALS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : tensor<32x100x1000xf32>) outs(%{{.*}} : tensor<32x1000xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIALS]] : tensor<32x1000xf32>) outs(%arg1 : tensor<32xf32>)
func.func @row_sums(%x: tensor<32x100000xf32>, %init: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x100000xf32>) outs(%init : tensor<32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// Softmax's row maximum: the same split, with maximumf's neutral -inf;
// 4096 partials a row are more than a warp takes (2048), and a second
// split would run 256 threads a row, as many as the block of 256 that
// takes them whole (at least 4096 points): no second round. Without
// blocks, a second round makes them 256.
// CHECK-LABEL: func.func @row_max
// CHECK: output_shape [8, 16, 4096]
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.fill
// CHECK: arith.maximumf
// CHECK-NOT: tensor.expand_shape
// CHECK: ins(%{{.*}} : tensor<8x4096xf32>) outs(%arg1 : tensor<8xf32>)
// CHECK: arith.maximumf
// NOBLOCKS-LABEL: func.func @row_max
// NOBLOCKS: output_shape [8, 16, 4096]
// NOBLOCKS: output_shape [8, 16, 256]
// NOBLOCKS: ins(%{{.*}} : tensor<8x256xf32>) outs(%arg1 : tensor<8xf32>)
func.func @row_max(%x: tensor<8x65536xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x65536xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// The same rows for 320 tokens, and a batch norm's sums over N, H and W for
// 128 channels: a split would run 100 threads per row (a ratio of 100)
// and 32 per channel (N made parallel), a block per output (at least 4096
// elements each) 256, in one kernel: both are left whole. Without blocks
// (block-threads=0) both are split.
// CHECK-LABEL: func.func @taken_by_blocks
// CHECK-NOT: tensor.expand_shape
// CHECK: ins(%arg0 : tensor<320x100000xf32>) outs(%arg1 : tensor<320xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: ins(%arg2 : tensor<32x128x16x16xf32>) outs(%arg3 : tensor<128xf32>)
// NOBLOCKS-LABEL: func.func @taken_by_blocks
// NOBLOCKS: tensor.expand_shape %arg0
// NOBLOCKS: ins(%{{.*}} : tensor<32x128x16x16xf32>) outs(%{{.*}} : tensor<128x32xf32>)
func.func @taken_by_blocks(%x: tensor<320x100000xf32>, %init: tensor<320xf32>,
                           %y: tensor<32x128x16x16xf32>, %yinit: tensor<128xf32>)
    -> (tensor<320xf32>, tensor<128xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<320x100000xf32>) outs(%init : tensor<320xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<320xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>],
                       iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<32x128x16x16xf32>) outs(%yinit : tensor<128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<128xf32>
  return %r, %c : tensor<320xf32>, tensor<128xf32>
}

// -----

// Short reductions, and reductions over many outputs, stay one kernel.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
func.func @left_alone(%short: tensor<4x500xf32>, %wide: tensor<65536x8192xf32>,
                      %i: tensor<4xf32>, %j: tensor<65536xf32>) -> (tensor<4xf32>, tensor<65536xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%short : tensor<4x500xf32>) outs(%i : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%wide : tensor<65536x8192xf32>) outs(%j : tensor<65536xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<65536xf32>
  return %r, %w : tensor<4xf32>, tensor<65536xf32>
}

// -----

// A batch norm's gradient sums over N, H and W for 16 channels: 16
// threads of 8192 additions. Its outer reduced loops (N, H) become
// parallel: 16 x 128 x 8 threads each sum the 8 consecutive elements of
// a row (from addf's neutral 0); the combining op has two reduced loops
// over 16 outputs, so the next round makes 16 x 128 threads of 8, then
// 16 threads combine 128 partials into the original init.
// CHECK-LABEL: func.func @channel_sums
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<16x128x8xf32>
// CHECK: %[[START:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<16x128x8xf32>)
// CHECK: %[[PARTIALS:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[PMAP:.*]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0 : tensor<128x16x8x8xf32>) outs(%[[START]] : tensor<16x128x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[PARTIALS2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PARTIALS]] : tensor<16x128x8xf32>) outs(%{{.*}} : tensor<16x128xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIALS2]] : tensor<16x128xf32>) outs(%arg1 : tensor<16xf32>)
// CHECK: arith.addf
func.func @channel_sums(%x: tensor<128x16x8x8xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<128x16x8x8xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// Several reduced loops whose combiner has no neutral element, or that
// are short, stay one op.
// CHECK-LABEL: func.func @several_left_alone
// CHECK-NOT: tensor.empty
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
func.func @several_left_alone(%x: tensor<128x16x8x8xf32>, %y: tensor<4x16x4x4xf32>,
                              %init: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<128x16x8x8xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.subf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y : tensor<4x16x4x4xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r, %t : tensor<16xf32>, tensor<16xf32>
}

// -----

// A full reduction to a scalar (a loss's mean over a batch of tokens):
// the combining op writes the scalar init through a map without results.
// CHECK-LABEL: func.func @to_scalar
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<128x20xf32>) outs(%{{.*}} : tensor<128xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR:map[0-9]*]]], iterator_types = ["reduction"]} ins(%{{.*}} : tensor<128xf32>) outs(%arg1 : tensor<f32>)
func.func @to_scalar(%x: tensor<128x20xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<128x20xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
