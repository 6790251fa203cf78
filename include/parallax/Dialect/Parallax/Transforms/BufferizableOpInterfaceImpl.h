//===- BufferizableOpInterfaceImpl.h - Bufferizing Parallax ops -*- C++ -*-===//
//-*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DIALECT_PARALLAX_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define PARALLAX_DIALECT_PARALLAX_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace parallax {
/// One-shot bufferization of the Parallax ops that live until it
/// (`parallax.library_call`).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace parallax
} // namespace mlir

#endif // PARALLAX_DIALECT_PARALLAX_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
