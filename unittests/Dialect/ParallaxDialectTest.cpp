//===- ParallaxDialectTest.cpp - C++ API of the Parallax dialect ----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::parallax;

namespace {

class ParallaxDialectTest : public ::testing::Test {
protected:
  ParallaxDialectTest() : builder(&context) {
    context.loadDialect<ParallaxDialect, func::FuncDialect>();
    // Collect diagnostics instead of printing them.
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [this](Diagnostic &diag) {
          diagnostics.push_back(diag.str());
          return success();
        });
  }

  /// A diagnostic emitter for the getChecked builders.
  function_ref<InFlightDiagnostic()> emitError() { return emitErrorAtUnknown; }

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  MLIRContext context;
  OpBuilder builder;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::string> diagnostics;
  std::function<InFlightDiagnostic()> emitErrorAtUnknown = [this] {
    return mlir::emitError(builder.getUnknownLoc());
  };
};

TEST_F(ParallaxDialectTest, RowSparseTypeComponents) {
  auto type = RowSparseType::get(tensor({1000, 16, 4}), 32);
  EXPECT_EQ(type.getIndicesType(),
            RankedTensorType::get({32}, builder.getI64Type()));
  EXPECT_EQ(type.getValuesType(), tensor({32, 16, 4}));
  EXPECT_EQ(type.getElementType(), builder.getF32Type());
}

TEST_F(ParallaxDialectTest, RowSparseTypeRejectsScalarsAndDynamicShapes) {
  EXPECT_FALSE(RowSparseType::getChecked(emitError(), tensor({}), 4));
  EXPECT_FALSE(RowSparseType::getChecked(emitError(),
                                         tensor({ShapedType::kDynamic, 4}), 4));
  EXPECT_FALSE(RowSparseType::getChecked(emitError(), tensor({8, 4}), -1));
  ASSERT_EQ(diagnostics.size(), 3u);
  EXPECT_NE(diagnostics[0].find("rank >= 1"), std::string::npos);
  EXPECT_NE(diagnostics[1].find("statically shaped"), std::string::npos);
  EXPECT_NE(diagnostics[2].find("non-negative"), std::string::npos);
}

TEST_F(ParallaxDialectTest, DistributionAttrPartitionRules) {
  auto check = [&](Placement placement, int64_t partitions) {
    return static_cast<bool>(DistributionAttr::getChecked(
        emitError(), &context, placement, partitions));
  };
  EXPECT_TRUE(check(Placement::PS, 8));
  EXPECT_TRUE(check(Placement::AllReduce, 1));
  EXPECT_FALSE(check(Placement::AllReduce, 2));
  EXPECT_FALSE(check(Placement::PS, 0));
  EXPECT_EQ(diagnostics.size(), 2u);
}

TEST_F(ParallaxDialectTest, StaticWorkersComeFromTheModule) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, builder.getUnknownLoc(), "step",
                                   builder.getFunctionType({}, {}));
  EXPECT_EQ(ParallaxDialect::getStaticWorkers(func), std::nullopt);
  (*module)->setAttr(ParallaxDialect::getWorldAttrName(),
                     WorldAttr::get(&context, 4));
  EXPECT_EQ(ParallaxDialect::getStaticWorkers(func), 4);
  EXPECT_EQ(ParallaxDialect::getStaticWorkers(*module), 4);
}

TEST_F(ParallaxDialectTest, VariableReadAndPushVerify) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  Location loc = builder.getUnknownLoc();
  builder.setInsertionPointToEnd(module->getBody());
  RankedTensorType tableType = tensor({100, 8});
  auto table = VariableOp::create(
      builder, loc, "emb", tableType, DenseElementsAttr::get(tableType, 0.5f),
      /*trainable=*/true, /*state=*/false, /*statistics=*/false,
      DistributionAttr::get(&context, Placement::PS, 4),
      /*sparsity=*/nullptr);
  auto func = func::FuncOp::create(builder, loc, "step",
                                   builder.getFunctionType({}, {}));
  builder.setInsertionPointToEnd(func.addEntryBlock());
  Value read = ReadOp::create(builder, loc, tableType, "emb");
  func::ReturnOp::create(builder, loc);
  EXPECT_TRUE(succeeded(verify(*module))) << diagnostics.front();
  EXPECT_EQ(read.getType(), table.getType());

  // Shrinking the variable breaks the read.
  table.setTypeAttr(TypeAttr::get(tensor({50, 8})));
  table.removeInitialValueAttr();
  EXPECT_TRUE(failed(verify(*module)));
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_NE(diagnostics.back().find("does not match the type"),
            std::string::npos);
}

} // namespace
