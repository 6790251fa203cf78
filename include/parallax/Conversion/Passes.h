//===- Passes.h - Parallax lowering passes ----------------------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PASSES_H
#define PARALLAX_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::parallax {

#define GEN_PASS_DECL
#include "parallax/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parallax/Conversion/Passes.h.inc"

/// Registers `parallax-lower-to-llvm`: the compute-op lowering, one-shot
/// bufferization and the conversion of everything to the LLVM dialect.
void registerParallaxLoweringPipelines();

} // namespace mlir::parallax

#endif // PARALLAX_CONVERSION_PASSES_H
