//===- ONNXImporter.h - Import ONNX models into Parallax --------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_TARGET_ONNX_ONNXIMPORTER_H
#define PARALLAX_TARGET_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir::parallax {

/// How an ONNX model is imported.
struct ONNXImportOptions {
  /// Values of symbolic dimensions, by dim_param name (`--bind NAME=VALUE`),
  /// and of dimension D of graph input INPUT, by "INPUT:D" (symbolic or
  /// not; before --batch-size).
  llvm::StringMap<int64_t> dimensionBindings;
  /// Binds the leading dimension of every graph input (`--batch-size`).
  std::optional<int64_t> batchSize;
  /// Float initializers imported as frozen constants instead of trainable
  /// variables (`--freeze`).
  llvm::StringSet<> frozen;
  /// Directory of external tensor data; empty means the model's directory.
  std::string dataDirectory;
  /// Import float initializers as variables without their values (shapes
  /// only; the data is never read): for planning (`--plan-only`).
  bool shapesOnly = false;
  /// Import trainable float initializers of a binary model as variables
  /// marked `parallax.from_model`, without their values (never read): the
  /// program loads them from the model file when it starts. The module
  /// records the model's absolute path (`parallax.model`). Ignored for text
  /// models and with `dataDirectory` set (their weights are embedded).
  bool weightsFromModel = false;
  /// Initializers and constants larger than this are stored as resource
  /// blobs rather than as dense text.
  int64_t resourceBlobThresholdBytes = 1024;
  /// The seed of random draws (training-mode Dropout's masks), `--seed`;
  /// programs may replace it when they run.
  int64_t randomSeed = 0;
};

/// Sets the shape bindings of `options` from command-line values: `--bind
/// NAME=VALUE` strings and `--batch-size` (std::nullopt when not given).
/// Returns a message naming the offending option, or "" on success.
std::string setShapeBindings(ONNXImportOptions &options,
                             llvm::ArrayRef<std::string> bindings,
                             std::optional<int64_t> batchSize);

/// Imports the ONNX model in `buffer` (binary protobuf, or ONNX text format
/// when `isText`) into a module holding one `parallax.variable` per float
/// initializer and `func.func @forward` computing the graph outputs from
/// the graph inputs. `filename` names the model in diagnostics and locates
/// external data. Reports every problem as an MLIR diagnostic and returns
/// null on failure.
OwningOpRef<ModuleOp> importONNXModel(const llvm::MemoryBuffer &buffer,
                                      llvm::StringRef filename, bool isText,
                                      MLIRContext *context,
                                      const ONNXImportOptions &options);

/// Whether a model file is in ONNX text format: by its extension
/// (`.onnxtext` / `.onnx`) or, without one, by its first characters.
bool isONNXText(llvm::StringRef filename, llvm::StringRef contents);

/// Registers `--import-onnx` and its options with parallax-translate.
void registerONNXImportTranslation();

} // namespace mlir::parallax

#endif // PARALLAX_TARGET_ONNX_ONNXIMPORTER_H
