// RUN: parallax-opt %s --parallax-lower-to-llvm | %run_main | FileCheck %s

// Transposes that move the innermost dimension, built from 8x8 register
// tiles (--parallax-vectorize-transposes), compiled and run: every element
// of each result is compared with the input element it comes from, and the
// number of mismatches printed. Shapes: partial tiles at the ends of both
// exchanged dimensions and in their corner; NCHW <-> NHWC with edges of 15
// (SqueezeNet's pools); and large ones shared among threads
// (--parallax-parallelize-kernels) by an outer loop, by whole tiles, and
// (an exchanged dimension ending in a partial tile) by plain loops.

// CHECK: partial both 0
func.func @partial_both() -> i64 {
  %e = tensor.empty() : tensor<3x13x19xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<3x13x19xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %c13_1 = arith.constant 13 : index
    %c19_2 = arith.constant 19 : index
    %m1 = arith.muli %i0, %c13_1 : index
    %s1 = arith.addi %m1, %i1 : index
    %m2 = arith.muli %s1, %c19_2 : index
    %s2 = arith.addi %m2, %i2 : index
    %n = arith.index_cast %s2 : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  } -> tensor<3x13x19xf32>
  %e2 = tensor.empty() : tensor<3x19x13xf32>
  %t = linalg.transpose ins(%a : tensor<3x13x19xf32>) outs(%e2 : tensor<3x19x13xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0 : i64
  %z = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%z : tensor<i64>) -> tensor<i64>
  %bad = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%t, %a : tensor<3x19x13xf32>, tensor<3x13x19xf32>) outs(%init : tensor<i64>) {
  ^bb0(%x: f32, %y: f32, %c: i64):
    %ne = arith.cmpf une, %x, %y : f32
    %one = arith.extui %ne : i1 to i64
    %sum = arith.addi %c, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %v = tensor.extract %bad[] : tensor<i64>
  return %v : i64
}

// CHECK: nchw to nhwc edge15 0
func.func @nchw_to_nhwc_edge15() -> i64 {
  %e = tensor.empty() : tensor<2x16x15x15xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<2x16x15x15xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %c16_1 = arith.constant 16 : index
    %c15_2 = arith.constant 15 : index
    %c15_3 = arith.constant 15 : index
    %m1 = arith.muli %i0, %c16_1 : index
    %s1 = arith.addi %m1, %i1 : index
    %m2 = arith.muli %s1, %c15_2 : index
    %s2 = arith.addi %m2, %i2 : index
    %m3 = arith.muli %s2, %c15_3 : index
    %s3 = arith.addi %m3, %i3 : index
    %n = arith.index_cast %s3 : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  } -> tensor<2x16x15x15xf32>
  %e2 = tensor.empty() : tensor<2x15x15x16xf32>
  %t = linalg.transpose ins(%a : tensor<2x16x15x15xf32>) outs(%e2 : tensor<2x15x15x16xf32>) permutation = [0, 2, 3, 1]
  %zero = arith.constant 0 : i64
  %z = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%z : tensor<i64>) -> tensor<i64>
  %bad = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%t, %a : tensor<2x15x15x16xf32>, tensor<2x16x15x15xf32>) outs(%init : tensor<i64>) {
  ^bb0(%x: f32, %y: f32, %c: i64):
    %ne = arith.cmpf une, %x, %y : f32
    %one = arith.extui %ne : i1 to i64
    %sum = arith.addi %c, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %v = tensor.extract %bad[] : tensor<i64>
  return %v : i64
}

// CHECK: nhwc to nchw edge15 0
func.func @nhwc_to_nchw_edge15() -> i64 {
  %e = tensor.empty() : tensor<2x15x15x16xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<2x15x15x16xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %c15_1 = arith.constant 15 : index
    %c15_2 = arith.constant 15 : index
    %c16_3 = arith.constant 16 : index
    %m1 = arith.muli %i0, %c15_1 : index
    %s1 = arith.addi %m1, %i1 : index
    %m2 = arith.muli %s1, %c15_2 : index
    %s2 = arith.addi %m2, %i2 : index
    %m3 = arith.muli %s2, %c16_3 : index
    %s3 = arith.addi %m3, %i3 : index
    %n = arith.index_cast %s3 : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  } -> tensor<2x15x15x16xf32>
  %e2 = tensor.empty() : tensor<2x16x15x15xf32>
  %t = linalg.transpose ins(%a : tensor<2x15x15x16xf32>) outs(%e2 : tensor<2x16x15x15xf32>) permutation = [0, 3, 1, 2]
  %zero = arith.constant 0 : i64
  %z = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%z : tensor<i64>) -> tensor<i64>
  %bad = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%t, %a : tensor<2x16x15x15xf32>, tensor<2x15x15x16xf32>) outs(%init : tensor<i64>) {
  ^bb0(%x: f32, %y: f32, %c: i64):
    %ne = arith.cmpf une, %x, %y : f32
    %one = arith.extui %ne : i1 to i64
    %sum = arith.addi %c, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %v = tensor.extract %bad[] : tensor<i64>
  return %v : i64
}

// CHECK: chunked outer 0
func.func @chunked_outer() -> i64 {
  %e = tensor.empty() : tensor<64x24x40xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<64x24x40xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %c24_1 = arith.constant 24 : index
    %c40_2 = arith.constant 40 : index
    %m1 = arith.muli %i0, %c24_1 : index
    %s1 = arith.addi %m1, %i1 : index
    %m2 = arith.muli %s1, %c40_2 : index
    %s2 = arith.addi %m2, %i2 : index
    %n = arith.index_cast %s2 : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  } -> tensor<64x24x40xf32>
  %e2 = tensor.empty() : tensor<64x40x24xf32>
  %t = linalg.transpose ins(%a : tensor<64x24x40xf32>) outs(%e2 : tensor<64x40x24xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0 : i64
  %z = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%z : tensor<i64>) -> tensor<i64>
  %bad = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%t, %a : tensor<64x40x24xf32>, tensor<64x24x40xf32>) outs(%init : tensor<i64>) {
  ^bb0(%x: f32, %y: f32, %c: i64):
    %ne = arith.cmpf une, %x, %y : f32
    %one = arith.extui %ne : i1 to i64
    %sum = arith.addi %c, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %v = tensor.extract %bad[] : tensor<i64>
  return %v : i64
}

// CHECK: chunked by tiles 0
func.func @chunked_by_tiles() -> i64 {
  %e = tensor.empty() : tensor<1160x72xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<1160x72xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %c72_1 = arith.constant 72 : index
    %m1 = arith.muli %i0, %c72_1 : index
    %s1 = arith.addi %m1, %i1 : index
    %n = arith.index_cast %s1 : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  } -> tensor<1160x72xf32>
  %e2 = tensor.empty() : tensor<72x1160xf32>
  %t = linalg.transpose ins(%a : tensor<1160x72xf32>) outs(%e2 : tensor<72x1160xf32>) permutation = [1, 0]
  %zero = arith.constant 0 : i64
  %z = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%z : tensor<i64>) -> tensor<i64>
  %bad = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%t, %a : tensor<72x1160xf32>, tensor<1160x72xf32>) outs(%init : tensor<i64>) {
  ^bb0(%x: f32, %y: f32, %c: i64):
    %ne = arith.cmpf une, %x, %y : f32
    %one = arith.extui %ne : i1 to i64
    %sum = arith.addi %c, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %v = tensor.extract %bad[] : tensor<i64>
  return %v : i64
}

// CHECK: chunked partial 0
func.func @chunked_partial() -> i64 {
  %e = tensor.empty() : tensor<1163x72xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<1163x72xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %c72_1 = arith.constant 72 : index
    %m1 = arith.muli %i0, %c72_1 : index
    %s1 = arith.addi %m1, %i1 : index
    %n = arith.index_cast %s1 : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  } -> tensor<1163x72xf32>
  %e2 = tensor.empty() : tensor<72x1163xf32>
  %t = linalg.transpose ins(%a : tensor<1163x72xf32>) outs(%e2 : tensor<72x1163xf32>) permutation = [1, 0]
  %zero = arith.constant 0 : i64
  %z = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%z : tensor<i64>) -> tensor<i64>
  %bad = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%t, %a : tensor<72x1163xf32>, tensor<1163x72xf32>) outs(%init : tensor<i64>) {
  ^bb0(%x: f32, %y: f32, %c: i64):
    %ne = arith.cmpf une, %x, %y : f32
    %one = arith.extui %ne : i1 to i64
    %sum = arith.addi %c, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %v = tensor.extract %bad[] : tensor<i64>
  return %v : i64
}

func.func @main() {
  %partial_both = call @partial_both() : () -> i64
  vector.print str "partial both "
  vector.print %partial_both : i64
  %nchw_to_nhwc_edge15 = call @nchw_to_nhwc_edge15() : () -> i64
  vector.print str "nchw to nhwc edge15 "
  vector.print %nchw_to_nhwc_edge15 : i64
  %nhwc_to_nchw_edge15 = call @nhwc_to_nchw_edge15() : () -> i64
  vector.print str "nhwc to nchw edge15 "
  vector.print %nhwc_to_nchw_edge15 : i64
  %chunked_outer = call @chunked_outer() : () -> i64
  vector.print str "chunked outer "
  vector.print %chunked_outer : i64
  %chunked_by_tiles = call @chunked_by_tiles() : () -> i64
  vector.print str "chunked by tiles "
  vector.print %chunked_by_tiles : i64
  %chunked_partial = call @chunked_partial() : () -> i64
  vector.print str "chunked partial "
  vector.print %chunked_partial : i64
  return
}
