//===- RandomNumbers.h - Counter-based random draws -------------*- C++ -*-===//
//
// Part of the Parallax project.
//
// `parallax.random_uniform` as one linalg.generic computing Philox4x32-10
// (Salmon et al., SC 2011, the generator of cuRAND and of PyTorch's CUDA
// dropout) of each element's counter: no generator state, so every element
// is drawn independently, the same on any number of workers, in any order
// and on any target. The runtime supplies the seed and the global index of
// the worker's first example.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_CONVERSION_PARALLAXTORUNTIME_RANDOMNUMBERS_H
#define PARALLAX_CONVERSION_PARALLAXTORUNTIME_RANDOMNUMBERS_H

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::parallax {

/// The tensor of uniform numbers `op` draws, built at the builder's point.
Value emitRandomUniform(OpBuilder &builder, ModuleOp module,
                        RandomUniformOp op);

} // namespace mlir::parallax

#endif // PARALLAX_CONVERSION_PARALLAXTORUNTIME_RANDOMNUMBERS_H
