// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg | FileCheck %s
// RUN: parallax-opt %s --split-input-file --convert-parallax-to-linalg --linalg-fuse-elementwise-ops --canonicalize | FileCheck %s --check-prefix=FUSED

// Every elementwise op is one linalg.generic over the result with
// broadcasting in the indexing maps; its body is the op's scalar form. A
// chain of them fuses into one loop nest.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NOT: parallax.
// FUSED-LABEL: func.func @chain
// FUSED: linalg.generic
// FUSED: arith.addf
// FUSED-NEXT: arith.maximumf
// FUSED-NEXT: math.exp
// FUSED-NEXT: linalg.yield
// FUSED-NEXT: } -> tensor<4x8xf32>
// FUSED-NEXT: return
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = parallax.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = parallax.relu %0 : tensor<4x8xf32>
  %2 = parallax.exp %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Float unary ops.
// CHECK-LABEL: func.func @float_unary
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK: linalg.generic
// CHECK: math.absf
// CHECK: linalg.generic
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK: math.log
// CHECK: linalg.generic
// CHECK: math.sqrt
// CHECK: linalg.generic
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: arith.divf %[[ONE]],
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: linalg.generic
// CHECK: math.tanh
// CHECK: linalg.generic
// CHECK: math.erf
// CHECK: linalg.generic
// CHECK: math.floor
// CHECK: linalg.generic
// CHECK: math.ceil
// CHECK: linalg.generic
// CHECK: math.sin
// CHECK: linalg.generic
// CHECK: math.cos
func.func @float_unary(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = parallax.neg %a : tensor<4xf32>
  %1 = parallax.abs %0 : tensor<4xf32>
  %2 = parallax.sign %1 : tensor<4xf32>
  %3 = parallax.log %2 : tensor<4xf32>
  %4 = parallax.sqrt %3 : tensor<4xf32>
  %5 = parallax.reciprocal %4 : tensor<4xf32>
  %6 = parallax.sigmoid %5 : tensor<4xf32>
  %7 = parallax.tanh %6 : tensor<4xf32>
  %8 = parallax.erf %7 : tensor<4xf32>
  %9 = parallax.floor %8 : tensor<4xf32>
  %10 = parallax.ceil %9 : tensor<4xf32>
  %11 = parallax.sin %10 : tensor<4xf32>
  %12 = parallax.cos %11 : tensor<4xf32>
  return %12 : tensor<4xf32>
}

// -----

// Float binary ops.
// CHECK-LABEL: func.func @float_binary
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.divf
// CHECK: math.powf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
func.func @float_binary(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = parallax.sub %a, %b : tensor<4xf32>, tensor<4xf32>
  %1 = parallax.mul %0, %b : tensor<4xf32>, tensor<4xf32>
  %2 = parallax.div %1, %b : tensor<4xf32>, tensor<4xf32>
  %3 = parallax.pow %2, %b : tensor<4xf32>, tensor<4xf32>
  %4 = parallax.max %3, %b : tensor<4xf32>, tensor<4xf32>
  %5 = parallax.min %4, %b : tensor<4xf32>, tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// Integer forms of the arithmetic ops.
// CHECK-LABEL: func.func @integer
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: arith.subi %[[ZERO]],
// CHECK: math.absi
// CHECK: arith.addi
// CHECK: arith.subi
// CHECK: arith.muli
// CHECK: arith.divsi
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpi slt
func.func @integer(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = parallax.neg %a : tensor<4xi64>
  %1 = parallax.abs %0 : tensor<4xi64>
  %2 = parallax.add %1, %b : tensor<4xi64>, tensor<4xi64>
  %3 = parallax.sub %2, %b : tensor<4xi64>, tensor<4xi64>
  %4 = parallax.mul %3, %b : tensor<4xi64>, tensor<4xi64>
  %5 = parallax.div %4, %b : tensor<4xi64>, tensor<4xi64>
  %6 = parallax.max %5, %b : tensor<4xi64>, tensor<4xi64>
  %7 = parallax.min %6, %b : tensor<4xi64>, tensor<4xi64>
  %8 = parallax.sign %7 : tensor<4xi64>
  return %8 : tensor<4xi64>
}

// -----

// Comparisons (float and integer), logic on i1 and where.
// CHECK-LABEL: func.func @predicates
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oge
// CHECK: arith.cmpi eq
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.xori
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: arith.xori %{{.*}}, %[[TRUE]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg0, %arg1 : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.select
func.func @predicates(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  %0 = parallax.equal %a, %b : tensor<4xf32>, tensor<4xf32>
  %1 = parallax.less %a, %b : tensor<4xf32>, tensor<4xf32>
  %2 = parallax.less_equal %a, %b : tensor<4xf32>, tensor<4xf32>
  %3 = parallax.greater %a, %b : tensor<4xf32>, tensor<4xf32>
  %4 = parallax.greater_equal %a, %b : tensor<4xf32>, tensor<4xf32>
  %5 = parallax.equal %i, %i : tensor<4xi64>, tensor<4xi64>
  %6 = parallax.and %0, %1 : tensor<4xi1>, tensor<4xi1>
  %7 = parallax.or %6, %2 : tensor<4xi1>, tensor<4xi1>
  %8 = parallax.xor %7, %3 : tensor<4xi1>, tensor<4xi1>
  %9 = parallax.not %8 : tensor<4xi1>
  %10 = parallax.and %9, %4 : tensor<4xi1>, tensor<4xi1>
  %11 = parallax.and %10, %5 : tensor<4xi1>, tensor<4xi1>
  %12 = parallax.where %11, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
  return %12 : tensor<4xf32>
}

// -----

// Casts pick the arith conversion by the element types; casts to i1 are
// comparisons with zero.
// CHECK-LABEL: func.func @casts
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.fptosi %{{.*}} : f64 to i32
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.cmpf une
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @casts(%a: tensor<4xf32>) -> tensor<4xf16> {
  %0 = parallax.cast %a : tensor<4xf32> -> tensor<4xf64>
  %1 = parallax.cast %0 : tensor<4xf64> -> tensor<4xi32>
  %2 = parallax.cast %1 : tensor<4xi32> -> tensor<4xi64>
  %3 = parallax.cast %2 : tensor<4xi64> -> tensor<4xf32>
  %4 = parallax.cast %3 : tensor<4xf32> -> tensor<4xi1>
  %5 = parallax.cast %4 : tensor<4xi1> -> tensor<4xf32>
  %6 = parallax.cast %5 : tensor<4xf32> -> tensor<4xf16>
  return %6 : tensor<4xf16>
}

// -----

// Clip is min with the upper bound, then max with the lower one.
// CHECK-LABEL: func.func @clip
// CHECK: %[[HI:.*]] = arith.constant 6.000000e+00 : f32
// CHECK: %[[X:.*]] = arith.minimumf %{{.*}}, %[[HI]]
// CHECK: %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.maximumf %[[X]], %[[LO]]
func.func @clip(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = parallax.clip %a {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
