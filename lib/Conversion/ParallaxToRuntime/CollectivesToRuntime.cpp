//===- CollectivesToRuntime.cpp - Dense collectives to MPI runtime calls --===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_CONVERTPARALLAXCOLLECTIVES
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// An in-flight allreduce is its bucket number and its result buffers.
struct HandleTypeConverter : TypeConverter {
  HandleTypeConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](AllReduceHandleType type, SmallVectorImpl<Type> &parts) {
      parts.push_back(IntegerType::get(type.getContext(), 64));
      for (Type result : type.getResultTypes()) {
        auto tensor = cast<RankedTensorType>(result);
        parts.push_back(
            MemRefType::get(tensor.getShape(), tensor.getElementType()));
      }
      return success();
    });
  }
};

/// Each allreduce (synchronous or started) is one bucket of the runtime,
/// numbered in module order before the rewrite.
using BucketNumbers = DenseMap<Operation *, int64_t>;

template <typename OpT> struct CollectivePattern : OpConversionPattern<OpT> {
  CollectivePattern(const TypeConverter &converter, MLIRContext *context,
                    ModuleOp module, const BucketNumbers &buckets)
      : OpConversionPattern<OpT>(converter, context), module(module),
        buckets(buckets) {}

  func::CallOp call(OpBuilder &b, Location loc, abi::Function callee,
                    ValueRange args) const {
    return callRuntime(b, module, loc, callee, args);
  }

  /// Adds each input to the bucket of `op` with a fresh result buffer and
  /// starts it; returns the bucket number and the buffers.
  SmallVector<Value> startAllReduce(OpBuilder &b, Operation *op,
                                    ReductionKind reduction, ValueRange inputs,
                                    ArrayRef<StringRef> names) const {
    Location loc = op->getLoc();
    Value id =
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(buckets.at(op)));
    SmallVector<Value> handle{id};
    for (auto [input, name] : llvm::zip_equal(inputs, names)) {
      Value result =
          freshBuffer(b, loc, cast<RankedTensorType>(input.getType()));
      handle.push_back(result);
      call(b, loc, abi::Function::allreduce_add_f32,
           {id, runtimeString(b, module, loc, name),
            readOnlyBuffer(b, loc, input), unrankedMemRef(b, loc, result)});
    }
    static_assert(
        static_cast<int>(ReductionKind::Sum) == PARALLAX_RT_REDUCE_SUM &&
            static_cast<int>(ReductionKind::Mean) == PARALLAX_RT_REDUCE_MEAN &&
            static_cast<int>(ReductionKind::Max) == PARALLAX_RT_REDUCE_MAX &&
            static_cast<int>(ReductionKind::Min) == PARALLAX_RT_REDUCE_MIN,
        "#parallax.reduction's values are the runtime's");
    Value kind = arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(static_cast<int32_t>(reduction)));
    call(b, loc, abi::Function::allreduce_start, {id, kind});
    return handle;
  }

  /// Waits for the bucket of `handle` and returns views of its results.
  SmallVector<Value> waitAllReduce(OpBuilder &b, Location loc,
                                   ValueRange handle) const {
    call(b, loc, abi::Function::allreduce_wait, {handle.front()});
    SmallVector<Value> results;
    for (Value buffer : handle.drop_front())
      results.push_back(bufferContents(b, loc, buffer));
    return results;
  }

  ModuleOp module;
  const BucketNumbers &buckets;
};

struct AllReduceStartLowering : CollectivePattern<AllReduceStartOp> {
  using CollectivePattern::CollectivePattern;
  LogicalResult
  matchAndRewrite(AllReduceStartOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> handle =
        startAllReduce(rewriter, op, op.getReduction(), adaptor.getInputs(),
                       op.getTrafficNames());
    rewriter.replaceOpWithMultiple(op, {handle});
    return success();
  }
};

struct AllReduceWaitLowering : CollectivePattern<AllReduceWaitOp> {
  using CollectivePattern::CollectivePattern;
  LogicalResult
  matchAndRewrite(AllReduceWaitOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, waitAllReduce(rewriter, op.getLoc(), adaptor.getHandle()));
    return success();
  }
};

/// A synchronous allreduce: its bucket's start, then at once its wait.
struct AllReduceLowering : CollectivePattern<AllReduceOp> {
  using CollectivePattern::CollectivePattern;
  LogicalResult
  matchAndRewrite(AllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> handle =
        startAllReduce(rewriter, op, op.getReduction(), adaptor.getInputs(),
                       op.getTrafficNames());
    rewriter.replaceOp(op, waitAllReduce(rewriter, op.getLoc(), handle));
    return success();
  }
};

struct AllGatherLowering : CollectivePattern<AllGatherOp> {
  using CollectivePattern::CollectivePattern;
  LogicalResult
  matchAndRewrite(AllGatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value result = freshBuffer(rewriter, loc, type);
    call(rewriter, loc, *abi::allGather(type.getElementType()),
         {runtimeString(rewriter, module, loc,
                        op.getVariable().value_or("allgather")),
          readOnlyBuffer(rewriter, loc, adaptor.getInput()),
          unrankedMemRef(rewriter, loc, result)});
    rewriter.replaceOp(op, bufferContents(rewriter, loc, result));
    return success();
  }
};

struct BroadcastLowering : CollectivePattern<BroadcastOp> {
  using CollectivePattern::CollectivePattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value result = freshBuffer(rewriter, loc, type);
    Value root = arith::ConstantOp::create(
        rewriter, loc, rewriter.getI64IntegerAttr(op.getRoot()));
    call(rewriter, loc, *abi::broadcast(type.getElementType()),
         {readOnlyBuffer(rewriter, loc, adaptor.getInput()),
          unrankedMemRef(rewriter, loc, result), root});
    rewriter.replaceOp(op, bufferContents(rewriter, loc, result));
    return success();
  }
};

struct WorkersLowering : CollectivePattern<WorkersOp> {
  using CollectivePattern::CollectivePattern;
  LogicalResult
  matchAndRewrite(WorkersOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op,
        call(rewriter, op.getLoc(), abi::Function::workers, {})->getResults());
    return success();
  }
};

/// What the runtime cannot do, diagnosed before anything is rewritten (the
/// patterns then cannot fail); numbers the buckets.
FailureOr<BucketNumbers> checkAndNumber(ModuleOp module) {
  BucketNumbers buckets;
  auto f32Only = [](Operation *op, TypeRange types) -> LogicalResult {
    for (auto [i, type] : llvm::enumerate(types))
      if (!cast<RankedTensorType>(type).getElementType().isF32())
        return op->emitError() << "the runtime reduces f32 tensors only, input "
                               << i << " is " << type;
    return success();
  };
  WalkResult result = module.walk([&](Operation *op) -> WalkResult {
    if (isa<AllReduceOp, AllReduceStartOp>(op)) {
      buckets[op] = buckets.size();
      return f32Only(op, op->getOperandTypes());
    }
    if (auto gather = dyn_cast<AllGatherOp>(op)) {
      auto type = cast<RankedTensorType>(gather.getType());
      if (!type.hasStaticShape() || !abi::allGather(type.getElementType()))
        return gather.emitError()
               << "the runtime gathers statically shaped tensors of f32, f64, "
                  "f16 or integers only, not "
               << type;
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      auto type = cast<RankedTensorType>(broadcast.getType());
      if (!abi::broadcast(type.getElementType()))
        return broadcast.emitError()
               << "the runtime broadcasts tensors of f32, f64, f16 or "
                  "integers only, not "
               << type;
    }
    return success();
  });
  if (result.wasInterrupted())
    return failure();
  return buckets;
}

/// The collectives become runtime calls by patterns under a 1:N type
/// conversion: a started allreduce's handle is its bucket number and result
/// buffers, so the wait needs nothing but its operand.
struct ConvertParallaxCollectivesPass
    : parallax::impl::ConvertParallaxCollectivesBase<
          ConvertParallaxCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<BucketNumbers> buckets = checkAndNumber(module);
    if (failed(buckets))
      return signalPassFailure();

    HandleTypeConverter converter;
    RewritePatternSet patterns(ctx);
    patterns
        .add<AllReduceStartLowering, AllReduceWaitLowering, AllReduceLowering,
             AllGatherLowering, BroadcastLowering, WorkersLowering>(
            converter, ctx, module, *buckets);
    ConversionTarget target(*ctx);
    target.addIllegalOp<AllReduceOp, AllReduceStartOp, AllReduceWaitOp,
                        AllGatherOp, BroadcastOp, WorkersOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
