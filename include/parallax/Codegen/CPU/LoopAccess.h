//===- LoopAccess.h - How a linalg op's loops walk memory -------*- C++ -*-===//
//
// Part of the Parallax project. Shared by the CPU passes that reorder or
// split loops for LLVM's vectorizer.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CODEGEN_CPU_LOOPACCESS_H
#define PARALLAX_CODEGEN_CPU_LOOPACCESS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::parallax {

/// Whether every operand of `op` walks memory contiguously along loop
/// `loop`: the loop moves only the operand's innermost index, by one, or
/// none of its indices. With `maxInputStep` above one, inputs may move
/// their innermost index by up to that many elements (a strided
/// convolution's window), which LLVM's vectorizer reads as interleaved
/// loads or gathers.
bool isContiguousAlong(linalg::GenericOp op, unsigned loop,
                       int64_t maxInputStep = 1);

/// The coefficient of loop `loop` in `expr`, an index over `loops` loops,
/// or nullopt where `expr` is not a linear function of the loops.
std::optional<int64_t> coefficientOf(AffineExpr expr, unsigned loop,
                                     unsigned loops);

/// Whether `op` accumulates: one output whose body yields `addf(out, x)`
/// with `reassoc`, `x` not depending on `out`.
bool isReassociableSum(linalg::GenericOp op);

} // namespace mlir::parallax

#endif // PARALLAX_CODEGEN_CPU_LOOPACCESS_H
