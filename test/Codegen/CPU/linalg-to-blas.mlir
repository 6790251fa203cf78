// RUN: parallax-opt %s --parallax-linalg-to-blas | FileCheck %s
// RUN: parallax-opt %s --parallax-linalg-to-blas=cublas | FileCheck %s --check-prefix=CUBLAS

// --target cuda: the same products through cuBLAS, the same operands.
// CUBLAS: func.func private @parallax_rt_cuda_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
// CUBLAS-LABEL: func.func @products
// CUBLAS-COUNT-2: call @parallax_rt_cuda_matmul_f32
// CUBLAS-NOT: call @parallax_rt_matmul_f32

// f32 products on memrefs with contiguous rows call the runtime's BLAS.
// CHECK: func.func private @parallax_rt_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
// CHECK-LABEL: func.func @products
// CHECK: %[[A:.*]] = memref.cast %arg0 : memref<4x8xf32> to memref<*xf32>
// CHECK: %[[B:.*]] = memref.cast %arg1 : memref<8x3xf32> to memref<*xf32>
// CHECK: %[[C:.*]] = memref.cast %arg2 : memref<4x3xf32> to memref<*xf32>
// CHECK: call @parallax_rt_matmul_f32(%[[A]], %[[B]], %[[C]])
// CHECK: call @parallax_rt_matmul_f32
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.batch_matmul
func.func @products(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>,
                    %ba: memref<2x4x8xf32>, %bb: memref<2x8x3xf32>, %bc: memref<2x4x3xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x4x8xf32>, memref<2x8x3xf32>) outs(%bc : memref<2x4x3xf32>)
  return
}

// Integer products and tensors stay as they are.
// CHECK-LABEL: func.func @others
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xi32>, memref<8x3xi32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x3xf32>)
func.func @others(%a: memref<4x8xi32>, %b: memref<8x3xi32>, %c: memref<4x3xi32>,
                  %ta: tensor<4x8xf32>, %tb: tensor<8x3xf32>, %tc: tensor<4x3xf32>) -> tensor<4x3xf32> {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x3xi32>) outs(%c : memref<4x3xi32>)
  %0 = linalg.matmul ins(%ta, %tb : tensor<4x8xf32>, tensor<8x3xf32>) outs(%tc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// An operand only a transpose fills is read through a transposed view of
// the transpose's source (BLAS reads it transposed): the copy and its
// buffer go.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref.alloc
// CHECK: %[[VIEW:.*]] = memref.transpose %arg1 (d0, d1) -> (d1, d0) : memref<3x8xf32> to memref<8x3xf32, strided<[1, 8]>>
// CHECK: %[[B:.*]] = memref.cast %[[VIEW]] : memref<8x3xf32, strided<[1, 8]>> to memref<*xf32>
// CHECK: call @parallax_rt_matmul_f32(%{{.*}}, %[[B]], %{{.*}})
func.func @transposed(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>) {
  %wt = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%wt : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// The copy stays when the source may change before the product: written
// by an op, or by a call (the runtime updates variables in place).
// CHECK-LABEL: func.func @source_written
// CHECK: linalg.transpose
// CHECK: linalg.fill
// CHECK: call @parallax_rt_matmul_f32
// CHECK-LABEL: func.func @call_between
// CHECK: linalg.transpose
// CHECK: call @update
// CHECK: call @parallax_rt_matmul_f32
func.func @source_written(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %wt = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%wt : memref<8x3xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%w : memref<3x8xf32>)
  linalg.matmul ins(%a, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}
func.func private @update(memref<3x8xf32>)
func.func @call_between(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>) {
  %wt = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%wt : memref<8x3xf32>) permutation = [1, 0]
  func.call @update(%w) : (memref<3x8xf32>) -> ()
  linalg.matmul ins(%a, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// Runtime calls write what RuntimeABI.def says: the memrefs passed to them,
// and the buffers a runtime call of the function retains (a bucket's
// results, a pushed variable and its state). A weight's transpose for a
// forward product and for its input gradient is a view across a bucket's
// calls and other products; it stays a copy where the weight was pushed
// (the exchange may write it at any later runtime call), passed to a call,
// or is an argument of the function (main may have registered it).
// CHECK-LABEL: func.func @runtime_calls_between
// CHECK: %[[W:.*]] = memref.get_global @w
// CHECK-NOT: linalg.transpose
// CHECK: memref.transpose %[[W]] (d0, d1) -> (d1, d0)
// CHECK: call @parallax_rt_matmul_f32
// CHECK: call @parallax_rt_allreduce_add_f32
// CHECK: call @parallax_rt_allreduce_wait
// CHECK: memref.transpose %[[W]] (d0, d1) -> (d1, d0)
// CHECK: call @parallax_rt_matmul_f32
// CHECK-LABEL: func.func @pushed_between
// CHECK: call @parallax_rt_push_sgd_f32
// CHECK: linalg.transpose
// CHECK: call @parallax_rt_allreduce_wait
// CHECK-LABEL: func.func @passed_between
// CHECK: linalg.transpose
// CHECK: call @parallax_rt_update_sgd_f32
// CHECK-LABEL: func.func @argument_across_runtime_call
// CHECK: linalg.transpose
// CHECK: call @parallax_rt_allreduce_wait
memref.global "private" @w : memref<3x8xf32> = dense<1.0>
func.func private @parallax_rt_allreduce_add_f32(i64, !llvm.ptr, memref<*xf32>, memref<*xf32> {parallax.retained})
func.func private @parallax_rt_allreduce_wait(i64)
func.func private @parallax_rt_push_sgd_f32(!llvm.ptr, i64, i64, memref<*xf32> {parallax.retained}, memref<*xf32>, !llvm.ptr)
func.func private @parallax_rt_update_sgd_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, !llvm.ptr)
func.func @runtime_calls_between(%a: memref<4x8xf32>, %c: memref<4x3xf32>, %g: memref<4x3xf32>, %name: !llvm.ptr) {
  %c0 = arith.constant 0 : i64
  %w = memref.get_global @w : memref<3x8xf32>
  %wt = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%wt : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  %out = memref.alloc() : memref<4x3xf32>
  %gu = memref.cast %g : memref<4x3xf32> to memref<*xf32>
  %ou = memref.cast %out : memref<4x3xf32> to memref<*xf32>
  func.call @parallax_rt_allreduce_add_f32(%c0, %name, %gu, %ou) : (i64, !llvm.ptr, memref<*xf32>, memref<*xf32>) -> ()
  func.call @parallax_rt_allreduce_wait(%c0) : (i64) -> ()
  %dx = memref.alloc() : memref<4x3xf32>
  linalg.matmul ins(%a, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%dx : memref<4x3xf32>)
  return
}
func.func @pushed_between(%a: memref<4x8xf32>, %c: memref<4x3xf32>, %grad: memref<3x8xf32>, %name: !llvm.ptr, %hyper: !llvm.ptr) {
  %c1 = arith.constant 1 : i64
  %w2 = memref.get_global @w : memref<3x8xf32>
  %wu = memref.cast %w2 : memref<3x8xf32> to memref<*xf32>
  %gu = memref.cast %grad : memref<3x8xf32> to memref<*xf32>
  func.call @parallax_rt_push_sgd_f32(%name, %c1, %c1, %wu, %gu, %hyper) : (!llvm.ptr, i64, i64, memref<*xf32>, memref<*xf32>, !llvm.ptr) -> ()
  %w = memref.get_global @w : memref<3x8xf32>
  %wt = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%wt : memref<8x3xf32>) permutation = [1, 0]
  func.call @parallax_rt_allreduce_wait(%c1) : (i64) -> ()
  linalg.matmul ins(%a, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}
func.func @passed_between(%a: memref<4x8xf32>, %c: memref<4x3xf32>, %grad: memref<3x8xf32>, %name: !llvm.ptr, %hyper: !llvm.ptr) {
  %w = memref.get_global @w : memref<3x8xf32>
  %wt = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%wt : memref<8x3xf32>) permutation = [1, 0]
  %wu = memref.cast %w : memref<3x8xf32> to memref<*xf32>
  %gu = memref.cast %grad : memref<3x8xf32> to memref<*xf32>
  func.call @parallax_rt_update_sgd_f32(%name, %wu, %gu, %hyper) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, !llvm.ptr) -> ()
  linalg.matmul ins(%a, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}
func.func @argument_across_runtime_call(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>) {
  %c0 = arith.constant 0 : i64
  %wt = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%wt : memref<8x3xf32>) permutation = [1, 0]
  func.call @parallax_rt_allreduce_wait(%c0) : (i64) -> ()
  linalg.matmul ins(%a, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// Bufferization may give several transposes one buffer (CSE merged their
// tensor.empty ops): each product reads the transpose just before it, which
// nothing else reads, so each is a view and buffer and copies go.
// CHECK-LABEL: func.func @shared_buffer
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref.alloc
// CHECK: memref.transpose %arg1
// CHECK: call @parallax_rt_matmul_f32
// CHECK: memref.transpose %arg2
// CHECK: call @parallax_rt_matmul_f32
func.func @shared_buffer(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %v: memref<3x8xf32>, %c: memref<4x3xf32>, %d: memref<4x3xf32>) {
  %t = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.transpose ins(%v : memref<3x8xf32>) outs(%t : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%d : memref<4x3xf32>)
  return
}

// Two products reading one transposed buffer (CSE merged a filter's
// transposes for a pixel-major convolution and for its input gradient)
// both read the transposed view: the copy and its buffer go. A call that
// ends the program (the runtime's index check) between them writes
// nothing a later op reads.
// CHECK-LABEL: func.func @read_twice
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref.alloc
// CHECK: memref.transpose %arg1
// CHECK: call @parallax_rt_matmul_f32
// CHECK: call @parallax_rt_index_out_of_range
// CHECK: memref.transpose %arg1
// CHECK: call @parallax_rt_matmul_f32
func.func private @parallax_rt_index_out_of_range(i64) attributes {passthrough = ["noreturn", "cold"]}
func.func @read_twice(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>, %d: memref<4x3xf32>, %bad: i1, %i: i64) {
  %t = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  scf.if %bad {
    func.call @parallax_rt_index_out_of_range(%i) : (i64) -> ()
  }
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%d : memref<4x3xf32>)
  return
}

// The copy stays when another op reads it too, or when the source may
// change before the second product (a call that returns may write it).
// CHECK-LABEL: func.func @read_by_another_op
// CHECK: linalg.transpose
// CHECK: call @parallax_rt_matmul_f32
// CHECK: linalg.copy
// CHECK-LABEL: func.func @written_before_the_second
// CHECK: linalg.transpose
// CHECK: call @parallax_rt_matmul_f32
// CHECK: call @update
// CHECK: call @parallax_rt_matmul_f32
func.func @read_by_another_op(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>, %e: memref<8x3xf32>) {
  %t = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.copy ins(%t : memref<8x3xf32>) outs(%e : memref<8x3xf32>)
  return
}
func.func @written_before_the_second(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>, %d: memref<4x3xf32>) {
  %t = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  func.call @update(%w) : (memref<3x8xf32>) -> ()
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%d : memref<4x3xf32>)
  return
}

// Bufferization may reuse the transposed buffer for a later result: a fill
// overwrites it after the product, so the transpose is a view; the buffer
// stays for the later product.
// CHECK-LABEL: func.func @reused_after
// CHECK-NOT: linalg.transpose
// CHECK: %[[T:.*]] = memref.alloc() : memref<8x3xf32>
// CHECK: memref.transpose %arg1
// CHECK: call @parallax_rt_matmul_f32
// CHECK-NOT: linalg.fill
// CHECK: %[[T2:.*]] = memref.cast %[[T]]
// CHECK: call @parallax_rt_matmul_into_f32(%{{.*}}, %{{.*}}, %[[T2]])
// CHECK: linalg.copy ins(%[[T]]
func.func @reused_after(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>, %x: memref<8x4xf32>, %y: memref<4x3xf32>, %out: memref<8x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.fill ins(%zero : f32) outs(%t : memref<8x3xf32>)
  linalg.matmul ins(%x, %y : memref<8x4xf32>, memref<4x3xf32>) outs(%t : memref<8x3xf32>)
  linalg.copy ins(%t : memref<8x3xf32>) outs(%out : memref<8x3xf32>)
  return
}

// A later op that accumulates into the buffer reads what the transpose
// wrote: the transpose stays.
// CHECK-LABEL: func.func @accumulated_after
// CHECK: linalg.transpose
// CHECK: call @parallax_rt_matmul_f32
// CHECK: call @parallax_rt_matmul_f32
func.func @accumulated_after(%a: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>, %x: memref<8x4xf32>, %y: memref<4x3xf32>, %out: memref<8x3xf32>) {
  %t = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%x, %y : memref<8x4xf32>, memref<4x3xf32>) outs(%t : memref<8x3xf32>)
  linalg.copy ins(%t : memref<8x3xf32>) outs(%out : memref<8x3xf32>)
  return
}

// A product whose zero-filled output only a transpose reads (a weight
// gradient (X^T dY)^T) writes the transpose's destination directly as
// B^T A^T: the transpose and the product's own buffer go.
// CHECK-LABEL: func.func @transposed_output
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[DY:.*]]: memref<4x3xf32>, %[[OUT:.*]]: memref<3x8xf32>)
// CHECK: %[[D:.*]] = memref.alloc() : memref<3x8xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[DYT:.*]] = memref.transpose %[[DY]] (d0, d1) -> (d1, d0) : memref<4x3xf32> to memref<3x4xf32, strided<[1, 3]>>
// CHECK: %[[XTT:.*]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0)
// CHECK: %[[B:.*]] = memref.cast %[[XTT]]
// CHECK: %[[C:.*]] = memref.cast %[[D]]
// CHECK: call @parallax_rt_matmul_into_f32(%{{.*}}, %[[B]], %[[C]])
// CHECK-NOT: linalg.transpose
// CHECK: linalg.copy ins(%[[D]]
func.func @transposed_output(%x: memref<4x8xf32>, %dy: memref<4x3xf32>, %out: memref<3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<8x4xf32>
  linalg.transpose ins(%x : memref<4x8xf32>) outs(%xt : memref<8x4xf32>) permutation = [1, 0]
  %c = memref.alloc() : memref<8x3xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x3xf32>)
  linalg.matmul ins(%xt, %dy : memref<8x4xf32>, memref<4x3xf32>) outs(%c : memref<8x3xf32>)
  %d = memref.alloc() : memref<3x8xf32>
  linalg.transpose ins(%c : memref<8x3xf32>) outs(%d : memref<3x8xf32>) permutation = [1, 0]
  linalg.copy ins(%d : memref<3x8xf32>) outs(%out : memref<3x8xf32>)
  return
}

// The transpose stays when its destination is used before it (here by
// a fill for an earlier value), or when something else reads the output.
// The first product accumulates (another fill comes between it and its
// own); the second overwrites its zero-filled buffer.
// CHECK-LABEL: func.func @transposed_output_kept
// CHECK: call @parallax_rt_matmul_f32
// CHECK: linalg.transpose
// CHECK: call @parallax_rt_matmul_into_f32
// CHECK: linalg.copy
// CHECK: linalg.transpose
func.func @transposed_output_kept(%a: memref<8x4xf32>, %b: memref<4x3xf32>, %out: memref<3x8xf32>, %out2: memref<8x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x3xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x3xf32>)
  %d = memref.alloc() : memref<3x8xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<3x8xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x3xf32>) outs(%c : memref<8x3xf32>)
  linalg.transpose ins(%c : memref<8x3xf32>) outs(%d : memref<3x8xf32>) permutation = [1, 0]
  %e = memref.alloc() : memref<8x3xf32>
  linalg.fill ins(%zero : f32) outs(%e : memref<8x3xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x3xf32>) outs(%e : memref<8x3xf32>)
  linalg.copy ins(%e : memref<8x3xf32>) outs(%out2 : memref<8x3xf32>)
  %f = memref.alloc() : memref<3x8xf32>
  linalg.transpose ins(%e : memref<8x3xf32>) outs(%f : memref<3x8xf32>) permutation = [1, 0]
  linalg.copy ins(%d : memref<3x8xf32>) outs(%out : memref<3x8xf32>)
  linalg.copy ins(%f : memref<3x8xf32>) outs(%out : memref<3x8xf32>)
  return
}

// The language model's decoder: one buffer holds W^T for the forward
// product (a view of W) and then the weight gradient's (X^T dY), which is
// written transposed into the gradient's buffer; the buffer goes.
// CHECK-LABEL: func.func @decoder
// CHECK-NOT: linalg.transpose
// CHECK: call @parallax_rt_matmul_f32
// CHECK: call @parallax_rt_matmul_into_f32
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref<8x3xf32>
// CHECK: return
func.func @decoder(%x: memref<4x8xf32>, %w: memref<3x8xf32>, %y: memref<4x3xf32>, %dy: memref<4x3xf32>, %dw: memref<3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t : memref<8x3xf32>) permutation = [1, 0]
  linalg.matmul ins(%x, %t : memref<4x8xf32>, memref<8x3xf32>) outs(%y : memref<4x3xf32>)
  %xt = memref.alloc() : memref<8x4xf32>
  linalg.transpose ins(%x : memref<4x8xf32>) outs(%xt : memref<8x4xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%t : memref<8x3xf32>)
  linalg.matmul ins(%xt, %dy : memref<8x4xf32>, memref<4x3xf32>) outs(%t : memref<8x3xf32>)
  %g = memref.alloc() : memref<3x8xf32>
  linalg.transpose ins(%t : memref<8x3xf32>) outs(%g : memref<3x8xf32>) permutation = [1, 0]
  linalg.copy ins(%g : memref<3x8xf32>) outs(%dw : memref<3x8xf32>)
  return
}

// A product into a buffer zero-filled for it alone overwrites the buffer
// instead (C = A B): the fill's pass over C goes. Views and allocations
// between the two are no reads.
// CHECK-LABEL: func.func @zero_filled
// CHECK-NOT: linalg.fill
// CHECK: call @parallax_rt_matmul_into_f32
// CHECK-NOT: linalg.fill
// CHECK: call @parallax_rt_matmul_into_f32
// CHECK: return
func.func @zero_filled(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %out: memref<4x3xf32>,
                       %ba: memref<2x4x8xf32>, %bb: memref<2x8x3xf32>, %bout: memref<2x4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x3xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
  %other = memref.alloc() : memref<4x3xf32>
  %view = memref.collapse_shape %c [[0, 1]] : memref<4x3xf32> into memref<12xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.copy ins(%c : memref<4x3xf32>) outs(%out : memref<4x3xf32>)
  %bc = memref.alloc() : memref<2x4x3xf32>
  linalg.fill ins(%zero : f32) outs(%bc : memref<2x4x3xf32>)
  linalg.batch_matmul ins(%ba, %bb : memref<2x4x8xf32>, memref<2x8x3xf32>) outs(%bc : memref<2x4x3xf32>)
  linalg.copy ins(%bc : memref<2x4x3xf32>) outs(%bout : memref<2x4x3xf32>)
  return
}

// The fill stays, and the product accumulates onto it, when it is not
// zero, when something may read the zeros before the product, or when it
// fills another buffer than the product's output (here a view of it).
// CHECK-LABEL: func.func @fill_kept
// CHECK: linalg.fill
// CHECK: call @parallax_rt_matmul_f32
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: call @parallax_rt_matmul_f32
// CHECK: linalg.fill
// CHECK: call @parallax_rt_matmul_f32
// CHECK-NOT: matmul_into
func.func @fill_kept(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>, %d: memref<4x3xf32>,
                     %e: memref<4x3xf32>, %out: memref<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  linalg.fill ins(%zero : f32) outs(%d : memref<4x3xf32>)
  linalg.copy ins(%d : memref<4x3xf32>) outs(%out : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%d : memref<4x3xf32>)
  %flat = memref.collapse_shape %e [[0, 1]] : memref<4x3xf32> into memref<12xf32>
  linalg.fill ins(%zero : f32) outs(%flat : memref<12xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%e : memref<4x3xf32>)
  return
}

// A product into a buffer filled for it alone with a broadcast bias (a
// layer's bias, as --parallax-fold-bias-into-products leaves it) starts
// each tile from the bias instead: the broadcast's pass over C goes. The
// language model's decoder broadcasts along the columns of a batch of
// sequences that the product's output collapses; a bias along the rows
// passes per_column = 0.
// CHECK-LABEL: func.func @bias_started
// CHECK-SAME: (%[[X:.*]]: memref<6x8xf32>, %[[W:.*]]: memref<8x5xf32>, %[[BIAS:.*]]: memref<5xf32>, %[[ROWBIAS:.*]]: memref<6xf32>
// CHECK: %[[LOGITS:.*]] = memref.alloc() : memref<2x3x5xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[C:.*]] = memref.collapse_shape %[[LOGITS]]
// CHECK-DAG: %[[CB:.*]] = memref.cast %[[BIAS]] : memref<5xf32> to memref<*xf32>
// CHECK-DAG: %[[CC:.*]] = memref.cast %[[C]] : memref<6x5xf32> to memref<*xf32>
// CHECK-DAG: %[[COLUMNS:.*]] = arith.constant 1 : i64
// CHECK: call @parallax_rt_matmul_bias_f32(%{{.*}}, %{{.*}}, %[[CB]], %[[CC]], %[[COLUMNS]])
// CHECK: %[[CR:.*]] = memref.cast %[[ROWBIAS]]
// CHECK: %[[ROWS:.*]] = arith.constant 0 : i64
// CHECK: call @parallax_rt_matmul_bias_f32(%{{.*}}, %{{.*}}, %[[CR]], %{{.*}}, %[[ROWS]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @bias_started(%x: memref<6x8xf32>, %w: memref<8x5xf32>, %bias: memref<5xf32>, %rowbias: memref<6xf32>,
                        %out: memref<2x3x5xf32>, %out2: memref<6x5xf32>) {
  %logits = memref.alloc() : memref<2x3x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bias : memref<5xf32>) outs(%logits : memref<2x3x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %c = memref.collapse_shape %logits [[0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
  linalg.matmul ins(%x, %w : memref<6x8xf32>, memref<8x5xf32>) outs(%c : memref<6x5xf32>)
  linalg.copy ins(%logits : memref<2x3x5xf32>) outs(%out : memref<2x3x5xf32>)
  %r = memref.alloc() : memref<6x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%rowbias : memref<6xf32>) outs(%r : memref<6x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.matmul ins(%x, %w : memref<6x8xf32>, memref<8x5xf32>) outs(%r : memref<6x5xf32>)
  linalg.copy ins(%r : memref<6x5xf32>) outs(%out2 : memref<6x5xf32>)
  return
}

// The broadcast stays, and the product accumulates onto it, when
// something may read it before the product, when it does more than copy
// the bias, or when the bias runs along a dimension that the product's
// output merges with another.
// CHECK-LABEL: func.func @bias_kept
// CHECK: linalg.generic
// CHECK: linalg.copy
// CHECK: call @parallax_rt_matmul_f32
// CHECK: linalg.generic
// CHECK: call @parallax_rt_matmul_f32
// CHECK: linalg.generic
// CHECK: call @parallax_rt_matmul_f32
// CHECK-NOT: matmul_bias
func.func @bias_kept(%x: memref<6x8xf32>, %w: memref<8x5xf32>, %bias: memref<5xf32>, %seqbias: memref<3xf32>,
                     %out: memref<6x5xf32>) {
  %c = memref.alloc() : memref<6x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<5xf32>) outs(%c : memref<6x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.copy ins(%c : memref<6x5xf32>) outs(%out : memref<6x5xf32>)
  linalg.matmul ins(%x, %w : memref<6x8xf32>, memref<8x5xf32>) outs(%c : memref<6x5xf32>)
  %d = memref.alloc() : memref<6x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<5xf32>) outs(%d : memref<6x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    %twice = arith.addf %in, %in : f32
    linalg.yield %twice : f32
  }
  linalg.matmul ins(%x, %w : memref<6x8xf32>, memref<8x5xf32>) outs(%d : memref<6x5xf32>)
  %e = memref.alloc() : memref<2x3x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%seqbias : memref<3xf32>) outs(%e : memref<2x3x5xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  %ec = memref.collapse_shape %e [[0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
  linalg.matmul ins(%x, %w : memref<6x8xf32>, memref<8x5xf32>) outs(%ec : memref<6x5xf32>)
  return
}
