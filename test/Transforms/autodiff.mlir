// RUN: parallax-opt %s --split-input-file --parallax-autodiff --canonicalize | FileCheck %s

// An embedding model: the table is read only through a gather on axis 0,
// so its gradient is row-sparse (the looked-up rows, one per index); the
// projection's gradient is dense. The step returns the loss only.
parallax.variable trainable @emb : tensor<100x8xf32> = dense<0.5>
parallax.variable trainable @proj : tensor<8x4xf32> = dense<0.25>
// CHECK-LABEL: func.func @train_step(%arg0: tensor<2x3xi64> {parallax.name = "ids"}) -> (tensor<f32> {parallax.name = "loss"})
// CHECK-DAG: %[[EMB:.*]] = parallax.read @emb
// CHECK-DAG: %[[PROJ:.*]] = parallax.read @proj
// CHECK: %[[ROWS:.*]] = parallax.gather %[[EMB]][%arg0] axis = 0
// CHECK: %[[IDS:.*]] = parallax.reshape %arg0 : tensor<2x3xi64> -> tensor<6xi64>
// CHECK: %[[G:.*]] = parallax.row_sparse.pack %[[IDS]], %{{.*}} : !parallax.row_sparse<tensor<100x8xf32>, rows = 6>
// CHECK-NOT: row_sparse.to_dense
// CHECK: parallax.apply_gradient @emb, %[[G]] : !parallax.row_sparse<tensor<100x8xf32>, rows = 6>
// CHECK: parallax.apply_gradient @proj, %{{.*}} : tensor<8x4xf32>
// CHECK: return %{{.*}} : tensor<f32>
func.func @forward(%ids: tensor<2x3xi64> {parallax.name = "ids"})
    -> (tensor<f32> {parallax.name = "loss"}, tensor<2x3x4xf32> {parallax.name = "logits"}) {
  %e = parallax.read @emb : tensor<100x8xf32>
  %p = parallax.read @proj : tensor<8x4xf32>
  %x = parallax.gather %e[%ids] axis = 0 : tensor<100x8xf32>, tensor<2x3xi64>
  %y = parallax.matmul %x, %p : tensor<2x3x8xf32>, tensor<8x4xf32>
  %l = parallax.reduce mean %y axes = [0, 1, 2] : tensor<2x3x4xf32>
  return %l, %y : tensor<f32>, tensor<2x3x4xf32>
}

// -----

// Two lookups of one table (the same ids twice, i32 indices): the
// contributions stay sparse, concatenated (rows = 2 + 3); the rows of a
// sum's gradient are ones, which fold into one constant.
parallax.variable trainable @emb : tensor<10x4xf32> = dense<0.5>
// CHECK-LABEL: func.func @train_step
// CHECK-DAG: %[[ROWS:.*]] = arith.constant dense<1.000000e+00> : tensor<5x4xf32>
// CHECK-DAG: %[[A:.*]] = parallax.cast %{{.*}} : tensor<2xi32> -> tensor<2xi64>
// CHECK-DAG: %[[IDS:.*]] = parallax.concat %arg1, %[[A]] axis = 0 : tensor<3xi64>, tensor<2xi64>
// CHECK: %[[G:.*]] = parallax.row_sparse.pack %[[IDS]], %[[ROWS]] : !parallax.row_sparse<tensor<10x4xf32>, rows = 5>
// CHECK: parallax.apply_gradient @emb, %[[G]]
func.func @forward(%a: tensor<2xi32>, %b: tensor<3xi64>) -> tensor<f32> {
  %e = parallax.read @emb : tensor<10x4xf32>
  %x = parallax.gather %e[%a] axis = 0 : tensor<10x4xf32>, tensor<2xi32>
  %y = parallax.gather %e[%b] axis = 0 : tensor<10x4xf32>, tensor<3xi64>
  %sx = parallax.reduce sum %x axes = [0, 1] : tensor<2x4xf32>
  %sy = parallax.reduce sum %y axes = [0, 1] : tensor<3x4xf32>
  %l = parallax.add %sx, %sy : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}

// -----

// A tied embedding: the table is gathered and also used as the output
// projection, so the sparse and dense contributions add up densely.
parallax.variable trainable @emb : tensor<10x4xf32> = dense<0.5>
// CHECK-LABEL: func.func @train_step
// CHECK: %[[SPARSE:.*]] = parallax.row_sparse.pack
// CHECK: %[[DENSE:.*]] = parallax.row_sparse.to_dense %[[SPARSE]]
// CHECK: %[[SUM:.*]] = parallax.add
// CHECK-SAME: tensor<10x4xf32>, tensor<10x4xf32>
// CHECK: parallax.apply_gradient @emb, %[[SUM]] : tensor<10x4xf32>
func.func @forward(%ids: tensor<3xi64>) -> tensor<f32> {
  %e = parallax.read @emb : tensor<10x4xf32>
  %x = parallax.gather %e[%ids] axis = 0 : tensor<10x4xf32>, tensor<3xi64>
  %logits = parallax.gemm %x, %e transpose_b : tensor<3x4xf32>, tensor<10x4xf32>
  %l = parallax.reduce mean %logits axes = [0, 1] : tensor<3x10xf32>
  return %l : tensor<f32>
}

// -----

// A gather of a computed value (not of a variable) is densified where its
// gradient flows on; frozen variables and integer values get no gradient.
parallax.variable trainable @w : tensor<4x3xf32> = dense<0.5>
parallax.variable @frozen : tensor<3xf32> = dense<1.0>
// CHECK-LABEL: func.func @train_step
// CHECK: parallax.row_sparse.to_dense
// CHECK-NOT: apply_gradient @frozen
// CHECK: parallax.apply_gradient @w, %{{.*}} : tensor<4x3xf32>
// CHECK-NOT: apply_gradient
func.func @forward(%ids: tensor<2xi64>) -> tensor<f32> {
  %w = parallax.read @w : tensor<4x3xf32>
  %f = parallax.read @frozen : tensor<3xf32>
  %t = parallax.tanh %w : tensor<4x3xf32>
  %x = parallax.gather %t[%ids] axis = 0 : tensor<4x3xf32>, tensor<2xi64>
  %y = parallax.mul %x, %f : tensor<2x3xf32>, tensor<3xf32>
  %l = parallax.reduce sum %y axes = [0, 1] : tensor<2x3xf32>
  return %l : tensor<f32>
}

// -----

// A convolution's input gradient: one conv_input_grad (a product and
// col2im) where the convolution is strided or its filter holds more
// elements than its input, else a transposed convolution of dy with the
// flipped filter (a parallax.conv). The filter gradient is a
// conv_filter_grad either way.
parallax.variable trainable @shift : tensor<4x3x8x8xf32> = dense<0.0>
parallax.variable trainable @w1 : tensor<4x3x3x3xf32> = dense<0.5>
parallax.variable trainable @w2 : tensor<4x4x3x3xf32> = dense<0.25>
parallax.variable trainable @w3 : tensor<128x4x1x1xf32> = dense<0.125>
// CHECK-LABEL: func.func @train_step
// CHECK: parallax.conv_input_grad %{{.*}}, %{{.*}} input_spatial = [4, 4] strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] : tensor<4x128x4x4xf32>, tensor<128x4x1x1xf32>
// CHECK: parallax.conv %{{.*}}, %{{.*}} strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<4x4x6x6xf32>, tensor<4x4x3x3xf32>
// CHECK: parallax.conv_input_grad %{{.*}}, %{{.*}} input_spatial = [8, 8] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] : tensor<4x4x4x4xf32>, tensor<4x3x3x3xf32>
// CHECK-NOT: parallax.conv_input_grad
func.func @forward(%x: tensor<4x3x8x8xf32>) -> tensor<f32> {
  %s = parallax.read @shift : tensor<4x3x8x8xf32>
  %w1 = parallax.read @w1 : tensor<4x3x3x3xf32>
  %w2 = parallax.read @w2 : tensor<4x4x3x3xf32>
  %w3 = parallax.read @w3 : tensor<128x4x1x1xf32>
  %t = parallax.add %x, %s : tensor<4x3x8x8xf32>, tensor<4x3x8x8xf32>
  %a = parallax.conv %t, %w1 strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : tensor<4x3x8x8xf32>, tensor<4x3x3x3xf32>
  %b = parallax.conv %a, %w2 strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] groups = 1 : tensor<4x4x4x4xf32>, tensor<4x4x3x3xf32>
  %c = parallax.conv %b, %w3 strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] groups = 1 : tensor<4x4x4x4xf32>, tensor<128x4x1x1xf32>
  %l = parallax.reduce sum %c axes = [0, 1, 2, 3] : tensor<4x128x4x4xf32>
  return %l : tensor<f32>
}

// -----

// An overlapping max pooling's gradient is one max_pool_grad of its input,
// its result and dy (windows that tile the input exactly keep their
// reshaped gradient).
parallax.variable trainable @shift : tensor<2x3x8x8xf32> = dense<0.0>
// CHECK-LABEL: func.func @train_step
// CHECK: %[[X:.*]] = parallax.add
// CHECK: %[[Y:.*]] = parallax.pool max %[[X]] kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] : tensor<2x3x8x8xf32>
// CHECK: parallax.max_pool_grad %[[X]], %[[Y]], %{{.*}} kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
// CHECK: parallax.apply_gradient @shift
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<f32> {
  %s = parallax.read @shift : tensor<2x3x8x8xf32>
  %t = parallax.add %x, %s : tensor<2x3x8x8xf32>, tensor<2x3x8x8xf32>
  %p = parallax.pool max %t kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] : tensor<2x3x8x8xf32>
  %l = parallax.reduce sum %p axes = [0, 1, 2, 3] : tensor<2x3x4x4xf32>
  return %l : tensor<f32>
}
