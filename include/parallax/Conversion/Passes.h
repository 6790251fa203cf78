//===- Passes.h - Parallax lowering passes ----------------------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PASSES_H
#define PARALLAX_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "parallax/Transforms/Passes.h"

namespace mlir::parallax {

#define GEN_PASS_DECL
#include "parallax/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parallax/Conversion/Passes.h.inc"

} // namespace mlir::parallax

#endif // PARALLAX_CONVERSION_PASSES_H
