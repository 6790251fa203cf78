//===- InitAll.h - Register everything Parallax tools use ------*- C++ -*-===//
//
// Part of the Parallax project.
//
// The one registration point shared by parallax-opt, parallax-translate and
// parallax-compile: every tool sees the same dialects, extensions, passes
// and pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_INITALL_H
#define PARALLAX_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::parallax {

/// Registers the Parallax dialect, the upstream dialects the pipeline lowers
/// through (func, arith, math, tensor, linalg, bufferization, memref, scf,
/// cf, vector, affine, gpu, nvvm, llvm) and their interface extensions.
void registerAllDialects(DialectRegistry &registry);

/// Registers Parallax's passes and the upstream passes the pipeline uses.
void registerAllPasses();

/// Registers the translations of parallax-translate: ONNX import
/// (--import-onnx) and MLIR (LLVM dialect) to LLVM IR.
void registerAllTranslations();

} // namespace mlir::parallax

#endif // PARALLAX_INITALL_H
