//===- ParallelizeKernels.cpp - Large loop nests across threads -----------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Kernels.h"
#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXPARALLELIZEKERNELS
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Chunks of the outermost loop shared among threads: enough to balance
/// any thread count up to a few dozen, few enough that a chunk's call
/// costs nothing beside its work. Fixed, so that the code each point runs
/// does not depend on the thread count.
constexpr int64_t kChunks = 256;
/// Equal chunks are preferred down to this many (or the extent, if less).
constexpr int64_t kMinEqualChunks = 16;

/// The loop a kernel shares out: the outermost parallel loop of more than
/// one iteration. Reduction loops around it (a batch norm's sums over N
/// of NCHW) then run inside each chunk: a chunk writes only the outputs of
/// its slice, each summed in the same order as without threads.
struct SharedLoop {
  unsigned position;
  int64_t extent;
};

/// `op`'s shared loop, when its whole nest is static and has at least
/// `minIterations` points.
std::optional<SharedLoop> sharedLoopOf(linalg::LinalgOp op,
                                       int64_t minIterations) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  if (ShapedType::getNumElements(ranges) < minIterations)
    return std::nullopt;
  bool insideReduction = false;
  for (auto [position, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (ranges[position] <= 1)
      continue;
    if (type != utils::IteratorType::parallel) {
      insideReduction = true;
      continue;
    }
    if (insideReduction) {
      // Chunks must write disjoint outputs, and have work within them.
      int64_t inner = ShapedType::getNumElements(
          ArrayRef<int64_t>(ranges).drop_front(position + 1));
      unsigned dim = position;
      bool disjoint = llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &o) {
        AffineMap map = op.getMatchingIndexingMap(&o);
        return map.isProjectedPermutation() && map.isFunctionOfDim(dim);
      });
      if (!disjoint || inner < kMinPointsInsideSharedLoop)
        return std::nullopt;
    }
    return SharedLoop{static_cast<unsigned>(position), ranges[position]};
  }
  return std::nullopt;
}

/// `op` alone in a kernel of --parallax-outline-kernels: besides it, the
/// function holds only constants and its return.
bool isAloneInKernel(linalg::LinalgOp op) {
  auto kernel = dyn_cast<func::FuncOp>(op->getParentOp());
  if (!kernel || !kernel.getBody().hasOneBlock())
    return false;
  return llvm::all_of(kernel.getBody().front(), [&](Operation &other) {
    return &other == op.getOperation() || isa<func::ReturnOp>(other) ||
           other.hasTrait<OpTrait::ConstantLike>();
  });
}

struct ParallelizeKernelsPass
    : parallax::impl::ParallaxParallelizeKernelsBase<ParallelizeKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, SharedLoop>> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics() || !isAloneInKernel(op))
        return;
      if (std::optional<SharedLoop> loop = sharedLoopOf(op, minIterations))
        candidates.emplace_back(op, *loop);
    });
    SymbolTable symbols(getOperation());
    for (auto [op, loop] : candidates)
      if (failed(parallelize(op, loop, symbols))) {
        op->emitError("internal error: cannot build the loop nest of this "
                      "op to share it among threads");
        return signalPassFailure();
      }
  }

  /// The kernel K(args) becomes
  ///   scf.parallel over chunks { K.chunk(args, begin) }
  /// where K.chunk runs the op's loop nest with its shared loop limited
  /// to [begin, begin + size): chunks of one static size, so that LLVM
  /// sees each chunk's trip count. Where the extent has no divisor that
  /// makes enough chunks, the last chunk is shorter and K.chunk takes its
  /// end too. K.chunk is a function of its own, not inlined, so that LLVM
  /// still sees its memrefs as arguments (with the kernel's noalias
  /// pointers) rather than as values loaded from OpenMP's closure, which
  /// it could not vectorize without overlap checks.
  LogicalResult parallelize(linalg::LinalgOp op, SharedLoop loop,
                            SymbolTable &symbols) {
    auto kernel = cast<func::FuncOp>(op->getParentOp());
    Location loc = op.getLoc();
    IRRewriter rewriter(&getContext());
    Type indexType = rewriter.getIndexType();
    // A transpose by tiles keeps whole tiles in each chunk; one with partial
    // tiles, only where the chunks share out another loop.
    bool transposable = isTileTransposable(op);
    bool tiledLoop = transposable && isTiledTransposeDim(op, loop.position);
    bool byTiles = transposable && !(tiledLoop && hasTransposeRemainder(op));
    int64_t unit = byTiles && tiledLoop ? kTransposeTile : 1;
    int64_t units = loop.extent / unit;
    int64_t chunks = mostEqualParts(units, kChunks);
    bool equal = chunks >= std::min<int64_t>(units, kMinEqualChunks);
    if (!equal)
      chunks = llvm::divideCeil(units, llvm::divideCeil(units, kChunks));
    int64_t chunkSize = unit * llvm::divideCeil(units, chunks);

    auto chunk = cast<func::FuncOp>(kernel->clone());
    chunk.setSymName((kernel.getSymName() + ".chunk").str());
    symbols.insert(chunk, std::next(Block::iterator(kernel)));
    unsigned arity = chunk.getNumArguments();
    unsigned bounds = equal ? 1 : 2;
    SmallVector<unsigned> positions(bounds, arity);
    SmallVector<Type> types(bounds, indexType);
    SmallVector<DictionaryAttr> attributes(bounds, DictionaryAttr());
    SmallVector<Location> locations(bounds, loc);
    if (failed(chunk.insertArguments(positions, types, attributes, locations)))
      return failure();
    linalg::LinalgOp inChunk;
    chunk.walk([&](linalg::LinalgOp found) { inChunk = found; });
    rewriter.setInsertionPoint(inChunk);
    // One scf.for per loop of the op, outermost first (a transpose's by
    // tiles of registers).
    scf::ForOp shared;
    if (byTiles) {
      FailureOr<SmallVector<scf::ForOp>> tiles =
          transposeByTiles(rewriter, inChunk);
      if (failed(tiles))
        return failure();
      shared = (*tiles)[loop.position];
    } else {
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, inChunk);
      if (failed(loops) || loops->size() != op.getNumLoops())
        return failure();
      shared = dyn_cast<scf::ForOp>((*loops)[loop.position]);
    }
    if (!shared)
      return failure();
    Value first = chunk.getArgument(arity);
    Value last = chunk.getArgument(arity + bounds - 1);
    if (equal) {
      rewriter.setInsertionPoint(shared);
      last = arith::AddIOp::create(
          rewriter, loc, first,
          arith::ConstantIndexOp::create(rewriter, loc, chunkSize));
    }
    shared.setLowerBound(first);
    shared.setUpperBound(last);
    rewriter.eraseOp(inChunk);

    rewriter.setInsertionPoint(op);
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    Value zero = constant(0), one = constant(1), size = constant(chunkSize);
    auto parallel =
        scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                ValueRange{constant(chunks)}, ValueRange{one});
    rewriter.setInsertionPoint(parallel.getBody()->getTerminator());
    Value begin = arith::MulIOp::create(rewriter, loc,
                                        parallel.getInductionVars()[0], size);
    SmallVector<Value> arguments(kernel.getArguments());
    arguments.push_back(begin);
    if (!equal) {
      Value next = arith::AddIOp::create(rewriter, loc, begin, size);
      arguments.push_back(
          arith::MinSIOp::create(rewriter, loc, next, constant(loop.extent)));
    }
    func::CallOp::create(rewriter, loc, chunk, arguments);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace
