//===- CollectivesToRuntime.cpp - Dense collectives to MPI runtime calls --===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "parallax/Conversion/Passes.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_CONVERTPARALLAXCOLLECTIVES
#include "parallax/Conversion/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// The variable whose update or push consumes `value` (through a few
/// elementwise or row-sparse ops), to account traffic under its name.
std::string trafficName(Value value, StringRef fallback) {
  SmallVector<Value> work{value};
  for (unsigned visited = 0; !work.empty() && visited < 16; ++visited) {
    Value next = work.pop_back_val();
    for (Operation *user : next.getUsers()) {
      if (auto update = dyn_cast<UpdateOp>(user))
        return update.getVariable().str();
      if (auto apply = dyn_cast<ApplyGradientOp>(user))
        return apply.getVariable().str();
      if (auto push = dyn_cast<PushOp>(user))
        return push.getVariable().str();
      llvm::append_range(work, user->getResults());
    }
  }
  return fallback.str();
}

struct ConvertParallaxCollectivesPass
    : parallax::impl::ConvertParallaxCollectivesBase<
          ConvertParallaxCollectivesPass> {
  ModuleOp module;
  int64_t nextBucket = 0;
  /// The bucket and result buffers of each started AllReduce.
  DenseMap<Value, std::pair<int64_t, SmallVector<Value>>> started;
  SmallVector<Operation *> lowered;

  void runOnOperation() override {
    // A pass instance may run on several modules (a pass manager reused,
    // parallax-compile's trial runs): nothing carries over.
    module = getOperation();
    nextBucket = 0;
    started.clear();
    lowered.clear();
    WalkResult result = module.walk([&](Operation *op) -> WalkResult {
      OpBuilder builder(op);
      if (auto start = dyn_cast<AllReduceStartOp>(op)) {
        FailureOr<int64_t> bucket =
            startAllReduce(builder, op, start.getReduction(), start.getInputs(),
                           start.getHandle());
        if (failed(bucket))
          return WalkResult::interrupt();
        // Its handle is used until the wait is lowered.
        lowered.push_back(op);
        return WalkResult::advance();
      }
      if (auto wait = dyn_cast<AllReduceWaitOp>(op)) {
        waitAllReduce(builder, op, wait.getHandle(), wait.getResults());
        op->erase();
        return WalkResult::advance();
      }
      if (auto allreduce = dyn_cast<AllReduceOp>(op)) {
        Value handle = allreduce.getResult(0); // any key unique to the op
        if (failed(startAllReduce(builder, op, allreduce.getReduction(),
                                  allreduce.getInputs(), handle)))
          return WalkResult::interrupt();
        waitAllReduce(builder, op, handle, allreduce.getResults());
        op->erase();
        return WalkResult::advance();
      }
      if (auto gather = dyn_cast<AllGatherOp>(op))
        return lowerAllGather(builder, gather);
      if (auto broadcast = dyn_cast<BroadcastOp>(op))
        return lowerBroadcast(builder, broadcast);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    for (Operation *start : lowered) {
      if (!start->use_empty()) {
        start->emitError("allreduce_start whose handle has no "
                         "parallax.allreduce_wait");
        return signalPassFailure();
      }
      start->erase();
    }
  }

  func::CallOp call(OpBuilder &b, Location loc, abi::Function callee,
                    ValueRange args) {
    return callRuntime(b, module, loc, callee, args);
  }

  FailureOr<int64_t> startAllReduce(OpBuilder &b, Operation *op,
                                    ReductionKind reduction, ValueRange inputs,
                                    Value key) {
    Location loc = op->getLoc();
    int64_t bucket = nextBucket++;
    Value id = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bucket));
    SmallVector<Value> buffers;
    for (auto [i, input] : llvm::enumerate(inputs)) {
      auto type = cast<RankedTensorType>(input.getType());
      if (!type.getElementType().isF32())
        return op->emitError() << "the runtime reduces f32 tensors only, input "
                               << i << " is " << type;
      Value result = freshBuffer(b, loc, type);
      buffers.push_back(result);
      Value consumer;
      if (!isa<AllReduceStartOp>(op))
        consumer = op->getResult(i);
      else
        for (Operation *user : key.getUsers())
          if (auto wait = dyn_cast<AllReduceWaitOp>(user))
            consumer = wait.getResult(i);
      std::string name =
          consumer ? trafficName(consumer, "allreduce") : "allreduce";
      call(b, loc, abi::Function::allreduce_add_f32,
           {id, runtimeString(b, module, loc, name),
            readOnlyBuffer(b, loc, input), unrankedMemRef(b, loc, result)});
    }
    Value kind = arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(static_cast<int32_t>(reduction)));
    static_assert(
        static_cast<int>(ReductionKind::Sum) == PARALLAX_RT_REDUCE_SUM &&
            static_cast<int>(ReductionKind::Mean) == PARALLAX_RT_REDUCE_MEAN &&
            static_cast<int>(ReductionKind::Max) == PARALLAX_RT_REDUCE_MAX &&
            static_cast<int>(ReductionKind::Min) == PARALLAX_RT_REDUCE_MIN,
        "#parallax.reduction's values are the runtime's");
    call(b, loc, abi::Function::allreduce_start, {id, kind});
    started[key] = {bucket, buffers};
    return bucket;
  }

  void waitAllReduce(OpBuilder &b, Operation *op, Value key,
                     ValueRange results) {
    Location loc = op->getLoc();
    auto &[bucket, buffers] = started[key];
    Value id = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bucket));
    call(b, loc, abi::Function::allreduce_wait, {id});
    for (auto [result, buffer] : llvm::zip_equal(results, buffers))
      result.replaceAllUsesWith(bufferContents(b, loc, buffer));
    started.erase(key);
  }

  WalkResult lowerAllGather(OpBuilder &b, AllGatherOp gather) {
    Location loc = gather.getLoc();
    auto type = cast<RankedTensorType>(gather.getType());
    std::optional<abi::Function> callee = abi::allGather(type.getElementType());
    if (!type.hasStaticShape() || !callee)
      return gather.emitError()
             << "the runtime gathers statically shaped tensors of f32, f64, "
                "f16 or integers only, not "
             << type;
    Value result = freshBuffer(b, loc, type);
    call(b, loc, *callee,
         {runtimeString(b, module, loc,
                        trafficName(gather.getResult(), "allgather")),
          readOnlyBuffer(b, loc, gather.getInput()),
          unrankedMemRef(b, loc, result)});
    gather.replaceAllUsesWith(bufferContents(b, loc, result));
    gather.erase();
    return WalkResult::advance();
  }

  WalkResult lowerBroadcast(OpBuilder &b, BroadcastOp broadcast) {
    Location loc = broadcast.getLoc();
    auto type = cast<RankedTensorType>(broadcast.getType());
    std::optional<abi::Function> callee = abi::broadcast(type.getElementType());
    if (!callee)
      return broadcast.emitError()
             << "the runtime broadcasts tensors of f32, f64, f16 or integers "
                "only, not "
             << type;
    Value result = freshBuffer(b, loc, type);
    Value root = arith::ConstantOp::create(
        b, loc, b.getI64IntegerAttr(broadcast.getRoot()));
    call(b, loc, *callee,
         {readOnlyBuffer(b, loc, broadcast.getInput()),
          unrankedMemRef(b, loc, result), root});
    broadcast.replaceAllUsesWith(bufferContents(b, loc, result));
    broadcast.erase();
    return WalkResult::advance();
  }
};

} // namespace
