// --profile-data: the row ids of each worker's batch are evaluated with the
// dialect's folders on the examples of the data (here through a slice of
// the id columns, a cast, a reshape and a concatenation with a constant,
// and, for a second table, a gather of one column as PyTorch exports
// `x[:, 0]`),
// and the unique rows of a global step, averaged over the steps, are the
// measured rows.
// RUN: rm -rf %t && mkdir -p %t/good %t/wide
// RUN: %python -c "import numpy as np; np.save('%t/good/x.npy', np.array([[10,1,2],[11,2,3],[12,4,4],[13,1,5],[14,7,7],[15,7,7],[16,7,8],[17,9,19]], dtype=np.int32))"
// RUN: parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis="workers=2 profile-data=%t/good" | FileCheck %s
// Step 0 (examples 0-3) looks up {1, 2, 3, 4, 5, 19}, step 1 (4-7)
// {7, 8, 9, 19}: 5 rows on average; column 0 is sliced away.
// One worker's batch alone: {1, 2, 3, 19}, {1, 4, 5, 19}, {7, 19} and
// {7, 8, 9, 19}, 3.5 rows on average, rounded to 4.
// CHECK: parallax.variable trainable @emb : tensor<20x4xf32> {{.*}}sparsity = #parallax.sparsity<sparse, alpha = 2.500000e-01, rows = 5, worker_rows = 4>
// Column 0 holds 10-13 in step 0 and 14-17 in step 1: 4 rows of 20.
// CHECK: parallax.variable trainable @first : tensor<20x4xf32> {{.*}}sparsity = #parallax.sparsity<sparse, alpha = 2.000000e-01, rows = 4, worker_rows = 2>

// A file whose element type is not the input's is named.
// RUN: %python -c "import numpy as np; np.save('%t/wide/x.npy', np.zeros((8, 3), dtype=np.int64))"
// RUN: not parallax-opt %s --parallax-autodiff --parallax-sparsity-analysis="workers=2 profile-data=%t/wide" 2>&1 | FileCheck %s --check-prefix=WIDE
// WIDE: error: --profile-data: '{{.*}}wide/x.npy' holds (8, 3) <i8, graph input 'x' needs (N, ...) of 'i32'

// Ids computed by an op that does not fold on constants are an error that
// names the op (sparsity-analysis-profile-invalid.mlir).

parallax.variable trainable @emb : tensor<20x4xf32> = dense<0.5>
parallax.variable trainable @first : tensor<20x4xf32> = dense<0.5>
func.func @forward(%x: tensor<2x3xi32> {parallax.name = "x"}) -> (tensor<f32> {parallax.name = "loss"}) {
  %e = parallax.read @emb : tensor<20x4xf32>
  %cols = parallax.slice %x offsets = [0, 1] sizes = [2, 2] strides = [1, 1] : tensor<2x3xi32>
  %wide = parallax.cast %cols : tensor<2x2xi32> -> tensor<2x2xi64>
  %flat = parallax.reshape %wide : tensor<2x2xi64> -> tensor<4xi64>
  %last = arith.constant dense<19> : tensor<1xi64>
  %ids = parallax.concat %flat, %last axis = 0 : tensor<4xi64>, tensor<1xi64>
  %rows = parallax.gather %e[%ids] axis = 0 : tensor<20x4xf32>, tensor<5xi64>
  %l = parallax.reduce sum %rows axes = [0, 1] : tensor<5x4xf32>
  %f = parallax.read @first : tensor<20x4xf32>
  %zero = arith.constant dense<0> : tensor<i64>
  %col = parallax.gather %x[%zero] axis = 1 : tensor<2x3xi32>, tensor<i64>
  %frows = parallax.gather %f[%col] axis = 0 : tensor<20x4xf32>, tensor<2xi32>
  %fl = parallax.reduce sum %frows axes = [0, 1] : tensor<2x4xf32>
  %total = parallax.add %l, %fl : tensor<f32>, tensor<f32>
  return %total : tensor<f32>
}
