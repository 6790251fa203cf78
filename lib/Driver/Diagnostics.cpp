//===- Diagnostics.cpp - Errors of the pipeline after import --------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Driver/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace mlir::parallax;

/// The ONNX node `loc` names, or "".
static std::string nodeOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string node = nodeOf(inner); !node.empty())
        return node;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return nodeOf(callSite.getCallee());
  return "";
}

PipelineDiagnostics::PipelineDiagnostics(MLIRContext *context, StringRef tool)
    : ScopedDiagnosticHandler(context), tool(tool.str()) {
  setHandler(
      [this](Diagnostic &diag) -> LogicalResult {
        if (forwarding || diag.getSeverity() != DiagnosticSeverity::Error)
          return failure();
        std::string message = diag.str();
        std::string node = nodeOf(diag.getLocation());
        // MLIR's form for an op's own errors: its verifier, or emitOpError.
        static const llvm::Regex opError(
            "^'[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z0-9_.]+' op ");
        bool internal = opError.match(message);
        bool named = node.empty() || StringRef(message).starts_with("node '");
        if (named && !internal)
          return failure();
        forwarding = true;
        {
          InFlightDiagnostic error = emitError(diag.getLocation());
          if (!named)
            error << "node '" << node << "': ";
          error << message;
          for (Diagnostic &note : diag.getNotes())
            error.attachNote(note.getLocation()) << note.str();
          if (internal)
            error.attachNote()
                << "this is a bug in Parallax, not in the model: please report "
                   "it with the model and the command line; `"
                << this->tool
                << " ... --mlir-print-ir-after-failure` prints the IR of the "
                   "pass that failed";
        }
        forwarding = false;
        return success();
      });
}
