// RUN: parallax-opt %s --split-input-file --parallax-declare-index-ranges | FileCheck %s

// Embedding ids through a reshape, and class labels with an ignore_index:
// one range per use, on the graph input itself.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %arg0: tensor<4x5xi64> {parallax.index_ranges = [#parallax.index_range<low = -200, high = 200, use = "the indices of node 'emb' into 'table' (200 rows; negative ones count from the end)">], parallax.name = "tokens"}
// CHECK-SAME: %arg1: tensor<4xi64> {parallax.index_ranges = [#parallax.index_range<low = 0, high = 8, ignored = -100, use = "the class labels of node 'loss' (8 classes)">], parallax.name = "labels"}
// CHECK-SAME: %arg2: tensor<4x8xf32> {parallax.name = "features"}
parallax.variable trainable @table : tensor<200x8xf32> = dense<0.0>
func.func @forward(%tokens: tensor<4x5xi64> {parallax.name = "tokens"},
                   %labels: tensor<4xi64> {parallax.name = "labels"},
                   %features: tensor<4x8xf32> {parallax.name = "features"}) -> tensor<f32> {
  %t = parallax.read @table : tensor<200x8xf32>
  %flat = parallax.reshape %tokens : tensor<4x5xi64> -> tensor<20xi64>
  %e = parallax.gather %t[%flat] axis = 0 : tensor<200x8xf32>, tensor<20xi64> loc("emb")
  %l = parallax.softmax_cross_entropy mean %features, %labels {ignore_index = -100 : i64} : tensor<4x8xf32>, tensor<4xi64> loc("loss")
  return %l : tensor<f32>
}

// -----

// Columns sliced off a table of ids: each constrains only its region
// (offset, size, stride per dimension), through the reshape after it.
// CHECK-LABEL: func.func @columns
// CHECK-SAME: {parallax.index_ranges = [#parallax.index_range<low = -10, high = 10, use = "the indices of node 'a' into 'small' (10 rows; negative ones count from the end)", region = [0, 4, 1, 0, 1, 1]>, #parallax.index_range<low = -50, high = 50, use = "the indices of node 'b' into 'large' (50 rows; negative ones count from the end)", region = [0, 4, 1, 1, 1, 1]>]}
parallax.variable trainable @small : tensor<10x2xf32> = dense<0.0>
parallax.variable trainable @large : tensor<50x2xf32> = dense<0.0>
func.func @columns(%ids: tensor<4x2xi64>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %s = parallax.read @small : tensor<10x2xf32>
  %l = parallax.read @large : tensor<50x2xf32>
  %c0 = parallax.slice %ids offsets = [0, 0] sizes = [4, 1] strides = [1, 1] : tensor<4x2xi64>
  %c1 = parallax.slice %ids offsets = [0, 1] sizes = [4, 1] strides = [1, 1] : tensor<4x2xi64>
  %r0 = parallax.reshape %c0 : tensor<4x1xi64> -> tensor<4xi64>
  %r1 = parallax.reshape %c1 : tensor<4x1xi64> -> tensor<4xi64>
  %a = parallax.gather %s[%r0] axis = 0 : tensor<10x2xf32>, tensor<4xi64> loc("a")
  %b = parallax.gather %l[%r1] axis = 0 : tensor<50x2xf32>, tensor<4xi64> loc("b")
  return %a, %b : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Indices the graph computes (here: ids + 1) have no input to check: the
// kernels check them. A narrowing cast could wrap, so it stops the trace
// too; a widening one does not.
// CHECK-LABEL: func.func @computed
// CHECK-SAME: (%arg0: tensor<4xi64>, %arg1: tensor<4xi64>, %arg2: tensor<4xi32> {parallax.index_ranges = [#parallax.index_range<low = -10, high = 10, use = "the indices of node 'widened' (dimension 0 of size 10; negative ones count from the end)">]}, %arg3: tensor<10x2xf32>)
func.func @computed(%ids: tensor<4xi64>, %narrow: tensor<4xi64>, %wide: tensor<4xi32>, %t: tensor<10x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %one = arith.constant dense<1> : tensor<4xi64>
  %shifted = parallax.add %ids, %one : tensor<4xi64>, tensor<4xi64>
  %a = parallax.gather %t[%shifted] axis = 0 : tensor<10x2xf32>, tensor<4xi64>
  %n = parallax.cast %narrow : tensor<4xi64> -> tensor<4xi32>
  %b = parallax.gather %t[%n] axis = 0 : tensor<10x2xf32>, tensor<4xi32>
  %w = parallax.cast %wide : tensor<4xi32> -> tensor<4xi64>
  %c = parallax.gather %t[%w] axis = 0 : tensor<10x2xf32>, tensor<4xi64> loc("widened")
  return %a, %b, %c : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}
