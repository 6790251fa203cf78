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
    Rewrites Parallax compute ops on tensors into upstream ops on tensors:
    elementwise ops (with numpy broadcasting expressed in indexing maps)
    become `linalg.generic`, so that chains of them fuse with upstream
    elementwise fusion; `matmul` and `gemm` become `linalg.matmul` /
    `linalg.batch_matmul` (batch dimensions broadcast and collapsed);
    `transpose` becomes `linalg.transpose`; `reshape` a collapse and an
    expand; `slice`, `concat`, `gather`, `reduce`, `softmax` and
    `log_softmax` become `linalg.generic` / `tensor` ops.

    Precondition: static shapes (as the importer guarantees).
    Postcondition: the ops above are gone. Ops without a lowering yet
    (`conv`, `pool`, `pad`, `tile`, `expand`, `batch_norm`, `layer_norm`,
    the losses, variables and collectives) are left as they are and make
    the pass fail with an error naming them.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // PARALLAX_CONVERSION_PASSES_TD
