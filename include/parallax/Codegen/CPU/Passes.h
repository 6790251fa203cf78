//===- Passes.h - Parallax CPU code generation passes -----------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CODEGEN_CPU_PASSES_H
#define PARALLAX_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::parallax {

#define GEN_PASS_DECL
#include "parallax/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parallax/Codegen/CPU/Passes.h.inc"

/// `add(matmul(A, B, fill(0)), broadcast(bias))` -> `matmul(A, B,
/// broadcast(bias))` (--parallax-fold-bias-into-products).
void populateFoldBiasIntoProductsPatterns(RewritePatternSet &patterns);

} // namespace mlir::parallax

#endif // PARALLAX_CODEGEN_CPU_PASSES_H
