//===- ONNXImporterTest.cpp - The importer's C++ API ----------------------===//
//
// Part of the Parallax project.
//
// parallax-compile will import in-process through importONNXModel; these
// tests use that API directly, as it will.
//
//===----------------------------------------------------------------------===//

#include "parallax/Target/ONNX/ONNXImporter.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::parallax;

namespace {

constexpr const char *kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
embed (int64[batch, 4] ids) => (float[batch, 4, 3] out)
<float[10, 3] table = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0,
                       0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0,
                       0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0},
 float[3] scale = {1.0, 2.0, 3.0}>
{
  e = Gather (table, ids)
  out = Mul (e, scale)
}
)";

class ONNXImporterTest : public ::testing::Test {
protected:
  ONNXImporterTest()
      : handler(&context, [this](Diagnostic &diag) {
          diagnostics.push_back(diag.str());
          return success();
        }) {}

  OwningOpRef<ModuleOp> import(StringRef text,
                               const ONNXImportOptions &options) {
    auto buffer = llvm::MemoryBuffer::getMemBuffer(text, "model.onnxtext");
    return importONNXModel(*buffer, "model.onnxtext", /*isText=*/true, &context,
                           options);
  }

  MLIRContext context;
  ScopedDiagnosticHandler handler;
  std::vector<std::string> diagnostics;
};

TEST_F(ONNXImporterTest, VariablesAndBoundShapes) {
  ONNXImportOptions options;
  options.batchSize = 5;
  options.frozen.insert("scale");
  OwningOpRef<ModuleOp> module = import(kModel, options);
  ASSERT_TRUE(module) << (diagnostics.empty() ? "" : diagnostics.front());

  auto table = module->lookupSymbol<VariableOp>("table");
  auto scale = module->lookupSymbol<VariableOp>("scale");
  ASSERT_TRUE(table && scale);
  EXPECT_TRUE(table.getTrainable());
  EXPECT_FALSE(scale.getTrainable());
  EXPECT_EQ(table.getTensorType().getShape(), ArrayRef<int64_t>({10, 3}));

  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  ASSERT_TRUE(forward);
  EXPECT_EQ(forward.getArgumentTypes()[0],
            RankedTensorType::get({5, 4}, IntegerType::get(&context, 64)));
  EXPECT_EQ(forward.getResultTypes()[0],
            RankedTensorType::get({5, 4, 3}, Float32Type::get(&context)));
  // The embedding lookup reads the variable through a gather on axis 0.
  int gathers = 0;
  forward.walk([&](GatherOp gather) {
    ++gathers;
    EXPECT_EQ(gather.getAxis(), 0u);
    EXPECT_TRUE(gather.getData().getDefiningOp<ReadOp>());
  });
  EXPECT_EQ(gathers, 1);
}

TEST_F(ONNXImporterTest, UnboundDimensionIsReported) {
  EXPECT_FALSE(import(kModel, ONNXImportOptions()));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].find("graph input 'ids' dimension 0 ('batch') "
                                "is dynamic"),
            std::string::npos);
}

TEST_F(ONNXImporterTest, BindingsByName) {
  ONNXImportOptions options;
  options.dimensionBindings["batch"] = 7;
  OwningOpRef<ModuleOp> module = import(kModel, options);
  ASSERT_TRUE(module);
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  EXPECT_EQ(cast<RankedTensorType>(forward.getArgumentTypes()[0]).getShape(),
            ArrayRef<int64_t>({7, 4}));
}

TEST_F(ONNXImporterTest, MalformedInputNeverCrashes) {
  ONNXImportOptions options;
  options.batchSize = 1;
  for (StringRef text : {"", "<", "<ir_version: 8>", "garbage (", "\x08\x03"}) {
    diagnostics.clear();
    EXPECT_FALSE(import(text, options)) << text.str();
    EXPECT_FALSE(diagnostics.empty()) << text.str();
  }
}

} // namespace
