//===- Diagnostics.h - Errors of the pipeline after import ------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//
//
// After import every op is located at the ONNX node it came from (a
// NameLoc over the model file), so an error of any later pass can name
// that node. An error in MLIR's own `'dialect.op' op ...` form is an op
// failing its verifier or a pass's internal invariant: a compiler bug,
// reported as one with the way to report it.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DRIVER_DIAGNOSTICS_H
#define PARALLAX_DRIVER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

namespace mlir::parallax {

/// While alive, rewrites the errors of `context` before the handlers
/// installed earlier print them: `node 'NAME': ` in front of the message
/// where the location names an ONNX node and the message does not, and,
/// for an op's own error, a note saying it is a bug in Parallax and how
/// to report it (`tool` names the command).
class PipelineDiagnostics : public ScopedDiagnosticHandler {
public:
  PipelineDiagnostics(MLIRContext *context, StringRef tool);

private:
  std::string tool;
  bool forwarding = false;
};

} // namespace mlir::parallax

#endif // PARALLAX_DRIVER_DIAGNOSTICS_H
