//===- BucketAllReduce.cpp - Merge allreduces into buckets ----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXBUCKETALLREDUCE
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

int64_t getTensorBytes(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() *
         llvm::divideCeil(shaped.getElementTypeBitWidth(), 8);
}

/// A run of allreduces of one block, all with the same reduction, that can
/// be merged at the position of the last one.
class Bucket {
public:
  explicit Bucket(int64_t capacity) : capacity(capacity) {}

  /// Adds `op` to the bucket, emitting the bucket first if `op` does not fit.
  void add(AllReduceOp op) {
    int64_t opBytes = 0;
    for (Type type : op.getInputs().getTypes())
      opBytes += getTensorBytes(type);
    if (!ops.empty() && (op.getReduction() != ops.front().getReduction() ||
                         bytes + opBytes > capacity))
      emit();
    ops.push_back(op);
    bytes += opBytes;
    for (Value result : op.getResults())
      pendingResults.insert(result);
  }

  /// Returns true if `op` (or an op nested in it) uses a result of a
  /// pending allreduce, which therefore must be emitted before `op`.
  bool isUsedBy(Operation *op) const {
    if (pendingResults.empty())
      return false;
    WalkResult walk = op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (pendingResults.contains(operand))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return walk.wasInterrupted();
  }

  /// Replaces the pending allreduces by one at the position of the last.
  void emit() {
    if (ops.size() > 1) {
      SmallVector<Value> inputs;
      SmallVector<StringRef> variables;
      SmallVector<Location> locs;
      bool named = false;
      for (AllReduceOp op : ops) {
        llvm::append_range(inputs, op.getInputs());
        llvm::append_range(variables, op.getTrafficNames());
        named |= op.getVariables().has_value();
        locs.push_back(op.getLoc());
      }
      AllReduceOp last = ops.back();
      OpBuilder builder(last);
      auto merged = AllReduceOp::create(
          builder, builder.getFusedLoc(locs), last.getReduction(), inputs,
          named ? builder.getStrArrayAttr(variables) : ArrayAttr());
      ValueRange results = merged.getResults();
      for (AllReduceOp op : ops) {
        unsigned count = op.getNumResults();
        op.replaceAllUsesWith(results.take_front(count));
        results = results.drop_front(count);
        op.erase();
      }
    }
    ops.clear();
    pendingResults.clear();
    bytes = 0;
  }

private:
  int64_t capacity;
  SmallVector<AllReduceOp> ops;
  llvm::SmallPtrSet<Value, 16> pendingResults;
  int64_t bytes = 0;
};

struct BucketAllReducePass
    : public parallax::impl::ParallaxBucketAllReduceBase<BucketAllReducePass> {
  using Base::Base;

  void runOnOperation() override {
    if (bucketBytes <= 0) {
      getOperation()->emitError()
          << "bucket-bytes must be positive, got " << bucketBytes.getValue();
      return signalPassFailure();
    }
    getOperation()->walk([&](Block *block) { bucketBlock(*block); });
  }

  void bucketBlock(Block &block) {
    Bucket bucket(bucketBytes);
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (bucket.isUsedBy(&op))
        bucket.emit();
      if (auto allReduce = dyn_cast<AllReduceOp>(op))
        bucket.add(allReduce);
      else if (mayCommunicate(&op))
        bucket.emit();
    }
    bucket.emit();
  }
};

} // namespace
