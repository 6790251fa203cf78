//===- Passes.h - Parallax transformation passes ----------------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_TRANSFORMS_PASSES_H
#define PARALLAX_TRANSFORMS_PASSES_H

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir::parallax {

#define GEN_PASS_DECL
#include "parallax/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parallax/Transforms/Passes.h.inc"

} // namespace mlir::parallax

#endif // PARALLAX_TRANSFORMS_PASSES_H
