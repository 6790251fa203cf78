// RUN: parallax-opt %s --split-input-file --parallax-autodiff --parallax-sparsity-analysis | FileCheck %s
// RUN: parallax-opt %s --split-input-file --parallax-autodiff --parallax-sparsity-analysis=workers=4 | FileCheck %s --check-prefix=FOUR

// A table read only through a gather is sparse: 6 ids per worker bound the
// rows one step touches (24 with 4 workers); a table read by two gathers
// adds their ids; a tied table (gather and matmul) and every other
// variable are dense.
// CHECK: parallax.variable trainable @emb : tensor<100x8xf32> {{.*}}sparsity = #parallax.sparsity<sparse, alpha = 6.000000e-02, rows = 6, worker_rows = 6>
// CHECK: parallax.variable trainable @twice : tensor<50x8xf32> {{.*}}sparsity = #parallax.sparsity<sparse, alpha = 1.600000e-01, rows = 8, worker_rows = 8>
// CHECK: parallax.variable trainable @tied : tensor<10x8xf32> {{.*}}sparsity = #parallax.sparsity<dense, alpha = 1.000000e+00, rows = 10>
// CHECK: parallax.variable trainable @proj : tensor<8x4xf32> {{.*}}sparsity = #parallax.sparsity<dense, alpha = 1.000000e+00, rows = 8>
// FOUR: @emb {{.*}}#parallax.sparsity<sparse, alpha = 2.400000e-01, rows = 24, worker_rows = 6>
// FOUR: @twice {{.*}}#parallax.sparsity<sparse, alpha = 6.400000e-01, rows = 32, worker_rows = 8>
// The bound never exceeds the table: 4 workers x 6 ids > 10 rows.
// FOUR: @tied {{.*}}#parallax.sparsity<dense, alpha = 1.000000e+00, rows = 10>
parallax.variable trainable @emb : tensor<100x8xf32> = dense<0.5>
parallax.variable trainable @twice : tensor<50x8xf32> = dense<0.5>
parallax.variable trainable @tied : tensor<10x8xf32> = dense<0.5>
parallax.variable trainable @proj : tensor<8x4xf32> = dense<0.25>
func.func @forward(%ids: tensor<2x3xi64>, %more: tensor<2xi64>, %small: tensor<6xi64>) -> tensor<f32> {
  %e = parallax.read @emb : tensor<100x8xf32>
  %t = parallax.read @twice : tensor<50x8xf32>
  %tied = parallax.read @tied : tensor<10x8xf32>
  %p = parallax.read @proj : tensor<8x4xf32>
  %x = parallax.gather %e[%ids] axis = 0 : tensor<100x8xf32>, tensor<2x3xi64>
  %a = parallax.gather %t[%ids] axis = 0 : tensor<50x8xf32>, tensor<2x3xi64>
  %b = parallax.gather %t[%more] axis = 0 : tensor<50x8xf32>, tensor<2xi64>
  %c = parallax.gather %tied[%small] axis = 0 : tensor<10x8xf32>, tensor<6xi64>
  %logits = parallax.gemm %c, %tied transpose_b : tensor<6x8xf32>, tensor<10x8xf32>
  %y = parallax.matmul %x, %p : tensor<2x3x8xf32>, tensor<8x4xf32>
  %s1 = parallax.reduce sum %y axes = [0, 1, 2] : tensor<2x3x4xf32>
  %s2 = parallax.reduce sum %a axes = [0, 1, 2] : tensor<2x3x8xf32>
  %s3 = parallax.reduce sum %b axes = [0, 1] : tensor<2x8xf32>
  %s4 = parallax.reduce sum %logits axes = [0, 1] : tensor<6x10xf32>
  %l1 = parallax.add %s1, %s2 : tensor<f32>, tensor<f32>
  %l2 = parallax.add %s3, %s4 : tensor<f32>, tensor<f32>
  %l = parallax.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}

// -----

// The module's world size is the default number of workers.
// CHECK: #parallax.sparsity<sparse, alpha = 4.000000e-01, rows = 4, worker_rows = 2>
module attributes {parallax.world = #parallax.world<workers = 2>} {
  parallax.variable trainable @emb : tensor<10x2xf32> = dense<0.5>
  func.func @forward(%ids: tensor<2xi64>) -> tensor<f32> {
    %e = parallax.read @emb : tensor<10x2xf32>
    %x = parallax.gather %e[%ids] axis = 0 : tensor<10x2xf32>, tensor<2xi64>
    %l = parallax.reduce sum %x axes = [0, 1] : tensor<2x2xf32>
    return %l : tensor<f32>
  }
}
