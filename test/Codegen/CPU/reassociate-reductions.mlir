// RUN: parallax-opt %s --split-input-file --parallax-reassociate-reductions | FileCheck %s

// The combiner of a float sum reduction may be reassociated; the rest of
// the body is untouched.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK: %[[SQ:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[S:.*]] = arith.addf %[[SQ]], %{{.*}} fastmath<reassoc> : f32
// CHECK: linalg.yield %[[S]]
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @sum_of_squares(%x: tensor<4x256xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x256xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Existing flags are kept; products are combiners too (on buffers as well).
// CHECK-LABEL: func.func @product
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc,nnan> : f32
#in = affine_map<(d0) -> (d0)>
#out = affine_map<(d0) -> ()>
func.func @product(%x: memref<16xf32>, %acc: memref<f32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction"]} ins(%x : memref<16xf32>) outs(%acc : memref<f32>) {
  ^bb0(%in: f32, %a: f32):
    %p = arith.mulf %a, %in fastmath<nnan> : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// Left alone: elementwise ops (no reduction loop), max reductions, integer
// sums, and an accumulator read twice (not a plain combiner).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: reassoc
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @untouched(%x: tensor<8xf32>, %i: tensor<8xi32>, %f: tensor<f32>, %n: tensor<i32>) -> (tensor<8xf32>, tensor<f32>, tensor<i32>, tensor<f32>) {
  %e = tensor.empty() : tensor<8xf32>
  %add = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]} ins(%x : tensor<8xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %isum = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]} ins(%i : tensor<8xi32>) outs(%n : tensor<i32>) {
  ^bb0(%a: i32, %o: i32):
    %s = arith.addi %a, %o : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  %twice = linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]} ins(%x : tensor<8xf32>) outs(%f : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %o : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %add, %max, %isum, %twice : tensor<8xf32>, tensor<f32>, tensor<i32>, tensor<f32>
}
