//===- DiagnosticsTest.cpp - Errors of the pipeline after import ----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Driver/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Emits `message` at `loc` under PipelineDiagnostics and returns what the
/// handler installed before it (the tools' printer) prints.
std::string printed(MLIRContext &context, Location loc, StringRef message) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler printer(sourceMgr, &context, os);
  PipelineDiagnostics pipeline(&context, "parallax-compile");
  emitError(loc) << message;
  return text;
}

Location nodeLoc(MLIRContext &context, StringRef node) {
  return NameLoc::get(StringAttr::get(&context, node),
                      FileLineColLoc::get(&context, "model.onnx", 0, 0));
}

TEST(PipelineDiagnosticsTest, NamesTheNodeOfAPassError) {
  MLIRContext context;
  std::string text = printed(context, nodeLoc(context, "/net/conv1/Conv"),
                             "cannot place this variable");
  EXPECT_NE(text.find("error: node '/net/conv1/Conv': cannot place this "
                      "variable"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("bug in Parallax"), std::string::npos) << text;
}

TEST(PipelineDiagnosticsTest, CallsAnOpErrorACompilerBug) {
  MLIRContext context;
  std::string text =
      printed(context, nodeLoc(context, "/net/pool/MaxPool"),
              "'linalg.generic' op inferred input/output operand #1 has "
              "shape's dimension #0 to be 131072, but found 73728");
  EXPECT_NE(text.find("error: node '/net/pool/MaxPool': 'linalg.generic' op "
                      "inferred"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("note: this is a bug in Parallax, not in the model"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("--mlir-print-ir-after-failure"), std::string::npos)
      << text;
}

TEST(PipelineDiagnosticsTest, LeavesOtherErrorsAlone) {
  MLIRContext context;
  // Already naming its node, or at no node: printed as emitted.
  std::string named = printed(context, nodeLoc(context, "/a/Gather"),
                              "node '/a/Gather': index out of range");
  EXPECT_NE(named.find("error: node '/a/Gather': index out of range"),
            std::string::npos)
      << named;
  EXPECT_EQ(named.find("node '/a/Gather': node"), std::string::npos) << named;
  std::string plain =
      printed(context, FileLineColLoc::get(&context, "model.onnx", 0, 0),
              "workers must be positive, got 0");
  EXPECT_NE(plain.find("model.onnx:0:0: error: workers must be positive"),
            std::string::npos)
      << plain;
}

} // namespace
