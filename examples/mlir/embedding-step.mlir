// A hand-written data-parallel training step of a tiny embedding model, in
// the form the distribution pass will produce: the embedding table is
// partitioned over parameter servers (row-sparse gradient, push/pull), the
// dense layer and bias are replicated (allreduce of their gradients).
//
//   logits = mean_rows(emb[ids]) @ fc.weight + fc.bias
//
// scripts/run-example.sh runs the communication passes on it:
//   parallax-opt --parallax-bucket-allreduce --parallax-async-allreduce

module attributes {parallax.world = #parallax.world<workers = 4>} {
  parallax.variable trainable @emb : tensor<1000x16xf32> {distribution = #parallax.distribution<ps, partitions = 4>}
  parallax.variable trainable @fc.weight : tensor<16x4xf32> = dense<0.01> {distribution = #parallax.distribution<allreduce, partitions = 1>}
  parallax.variable trainable @fc.bias : tensor<4xf32> = dense<0.0> {distribution = #parallax.distribution<allreduce, partitions = 1>}

  // One step for a batch of 8 token ids; `dlogits` is the loss gradient.
  func.func @step(%ids: tensor<8xi64>, %dlogits: tensor<1x4xf32>, %lr: tensor<16x4xf32>) {
    // Forward: pull only the looked-up rows of the partitioned table.
    %rows = parallax.pull @emb[%ids : tensor<8xi64>] : tensor<8x16xf32>
    %w = parallax.read @fc.weight : tensor<16x4xf32>

    // Backward (abbreviated): the table's gradient is row-sparse, the dense
    // layer's gradient is dense.
    %zero = arith.constant 0.0 : f32
    %dw_init = tensor.empty() : tensor<16x4xf32>
    %dw_zero = linalg.fill ins(%zero : f32) outs(%dw_init : tensor<16x4xf32>) -> tensor<16x4xf32>
    %hT = tensor.empty() : tensor<16x1xf32>
    %hT_zero = linalg.fill ins(%zero : f32) outs(%hT : tensor<16x1xf32>) -> tensor<16x1xf32>
    %dw = linalg.matmul ins(%hT_zero, %dlogits : tensor<16x1xf32>, tensor<1x4xf32>) outs(%dw_zero : tensor<16x4xf32>) -> tensor<16x4xf32>
    %db = tensor.collapse_shape %dlogits [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %drows = tensor.empty() : tensor<8x16xf32>
    %drows_zero = linalg.fill ins(%zero : f32) outs(%drows : tensor<8x16xf32>) -> tensor<8x16xf32>
    %demb = parallax.row_sparse.pack %ids, %drows_zero : !parallax.row_sparse<tensor<1000x16xf32>, rows = 8>

    // Synchronisation: one allreduce per dense gradient (bucketed and made
    // asynchronous by the passes), a sparse push for the table.
    %gw = parallax.allreduce mean %dw : tensor<16x4xf32>
    %gb = parallax.allreduce mean %db : tensor<4xf32>
    parallax.push @emb, %demb : !parallax.row_sparse<tensor<1000x16xf32>, rows = 8>

    // SGD on the replicated variables.
    %step = arith.mulf %gw, %lr : tensor<16x4xf32>
    %w_new = arith.subf %w, %step : tensor<16x4xf32>
    parallax.assign @fc.weight, %w_new : tensor<16x4xf32>
    %b = parallax.read @fc.bias : tensor<4xf32>
    %b_new = arith.subf %b, %gb : tensor<4xf32>
    parallax.assign @fc.bias, %b_new : tensor<4xf32>
    return
  }
}
