//===- Passes.h - Parallax GPU code generation passes -----------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CODEGEN_GPU_PASSES_H
#define PARALLAX_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::parallax {

#define GEN_PASS_DECL
#include "parallax/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parallax/Codegen/GPU/Passes.h.inc"

} // namespace mlir::parallax

#endif // PARALLAX_CODEGEN_GPU_PASSES_H
