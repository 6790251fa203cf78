//===- parallax-onnx-fuzzer.cpp - libFuzzer target for the importer -------===//
//
// Part of the Parallax project.
//
// Feeds arbitrary bytes to the ONNX importer, as a binary model or (when
// the input starts with `<`) as ONNX text. Any crash, sanitizer report or
// uncaught exception is a bug: bad input must only produce diagnostics.
// Built by scripts/fuzz-importer.sh with clang and -fsanitize=fuzzer,address.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxDialect.h"
#include "parallax/Target/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: nothing uniqued by one input affects the next
  // and memory does not grow over a long run.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler silence(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto buffer =
      llvm::MemoryBuffer::getMemBuffer(bytes, "fuzz-input",
                                       /*RequiresNullTerminator=*/false);
  mlir::parallax::ONNXImportOptions options;
  options.batchSize = 2;
  // External data may only come from an empty directory.
  options.dataDirectory = "/nonexistent-parallax-fuzz-data";
  bool isText = !bytes.empty() && bytes.front() == '<';
  (void)mlir::parallax::importONNXModel(*buffer, "fuzz-input", isText, &context,
                                        options);
  return 0;
}
