//===- Passes.td - Parallax lowering passes ----------------*- tablegen -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PASSES_TD
#define PARALLAX_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertParallaxToLinalg : Pass<"convert-parallax-to-linalg"> {
  let summary = "Lower Parallax compute ops to linalg, tensor, arith and math";
  let description = [{
    Rewrites every Parallax compute op on tensors into upstream ops on
    tensors: elementwise ops (numpy broadcasting expressed in the indexing
    maps) become `linalg.generic`, so chains of them fuse with upstream
    elementwise fusion; `matmul` and `gemm` become `linalg.matmul` /
    `linalg.batch_matmul` (batch dimensions broadcast and collapsed);
    `transpose` becomes `linalg.transpose`; `reshape` a collapse and an
    expand; `slice` a strided `tensor.extract_slice` (reversed by a generic
    for negative strides); `concat` `tensor.insert_slice`s; constant `pad`
    `tensor.pad`; `gather`, `tile`, reflect/edge `pad`, reductions, softmax,
    normalisations, convolution (grouped, dilated, N-d), pooling and the
    classification losses become `linalg.generic`s.

    Precondition: static shapes (as the importer guarantees).
    Postcondition: no compute op remains. Variables, row-sparse values and
    collectives are left for the runtime lowering. Convolutions and matrix
    products are plain loop nests at this point; making them fast (tiling,
    vectorization or BLAS calls) is a separate step.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // PARALLAX_CONVERSION_PASSES_TD
