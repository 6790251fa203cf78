//===- CommunicationPassesTest.cpp - allreduce bucketing and overlap ------===//
//
// Part of the Parallax project.
//
// Drives the communication passes through the C++ PassManager API, as
// parallax-compile does, on programmatically built IR.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/InitAll.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Builds `func @step(%g0, ..., %gN-1)` returning the allreduced gradients,
/// each of `elements` f32 values and reduced by its own allreduce.
OwningOpRef<ModuleOp> buildGradientReduction(MLIRContext &context,
                                             ArrayRef<int64_t> elements) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> types;
  for (int64_t n : elements)
    types.push_back(RankedTensorType::get({n}, builder.getF32Type()));
  auto func = func::FuncOp::create(builder, loc, "step",
                                   builder.getFunctionType(types, types));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  SmallVector<Value> reduced;
  for (BlockArgument gradient : body->getArguments())
    reduced.push_back(AllReduceOp::create(builder, loc, ReductionKind::Mean,
                                          ValueRange{gradient},
                                          /*variables=*/nullptr)
                          .getResult(0));
  func::ReturnOp::create(builder, loc, reduced);
  return module;
}

/// Number of tensors reduced by each allreduce of `module`, in order.
std::vector<size_t> bucketSizes(ModuleOp module) {
  std::vector<size_t> sizes;
  module.walk([&](AllReduceOp op) { sizes.push_back(op.getNumOperands()); });
  return sizes;
}

class CommunicationPassesTest : public ::testing::Test {
protected:
  CommunicationPassesTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadDialect<ParallaxDialect, func::FuncDialect>();
  }
  MLIRContext context;
};

TEST_F(CommunicationPassesTest, BucketsRespectTheByteBound) {
  // 4 KiB, 4 KiB, 4 KiB, 16 KiB into 10 KiB buckets: [2], [1], [1].
  OwningOpRef<ModuleOp> module =
      buildGradientReduction(context, {1024, 1024, 1024, 4096});
  PassManager pm(&context);
  pm.addPass(createParallaxBucketAllReduce(
      ParallaxBucketAllReduceOptions{/*bucketBytes=*/10 << 10}));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(bucketSizes(*module), (std::vector<size_t>{2, 1, 1}));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(CommunicationPassesTest, OneBucketWhenEverythingFits) {
  OwningOpRef<ModuleOp> module =
      buildGradientReduction(context, {16, 32, 64, 128});
  PassManager pm(&context);
  pm.addPass(createParallaxBucketAllReduce());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(bucketSizes(*module), (std::vector<size_t>{4}));
}

TEST_F(CommunicationPassesTest, AsyncSplitPairsEveryStartWithOneWait) {
  OwningOpRef<ModuleOp> module = buildGradientReduction(context, {8, 8, 8});
  PassManager pm(&context);
  pm.addPass(createParallaxAsyncAllReduce());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_TRUE(bucketSizes(*module).empty());
  std::vector<StringRef> order;
  module->walk([&](Operation *op) {
    if (isa<AllReduceStartOp, AllReduceWaitOp>(op))
      order.push_back(op->getName().stripDialect());
  });
  // All three reductions are in flight before the first wait.
  EXPECT_EQ(order, (std::vector<StringRef>{
                       "allreduce_start", "allreduce_start", "allreduce_start",
                       "allreduce_wait", "allreduce_wait", "allreduce_wait"}));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(CommunicationPassesTest, CollectivesAreNeverTreatedAsPure) {
  OwningOpRef<ModuleOp> module = buildGradientReduction(context, {8});
  module->walk([](AllReduceOp op) { EXPECT_TRUE(mayCommunicate(op)); });
  module->walk([](func::ReturnOp op) { EXPECT_FALSE(mayCommunicate(op)); });
}

} // namespace
