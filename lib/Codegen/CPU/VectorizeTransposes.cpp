//===- VectorizeTransposes.cpp - Transposes by tiles of registers ---------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Codegen/CPU/Kernels.h"
#include "parallax/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXVECTORIZETRANSPOSES
#include "parallax/Codegen/CPU/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Whether `type` is static with a unit innermost stride.
bool innermostContiguous(MemRefType type) {
  if (!type.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// The output dimension that the input's innermost one becomes, where
/// `op` qualifies (see the pass's description).
std::optional<int64_t> tiledOutputDim(linalg::TransposeOp op) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  auto in = cast<MemRefType>(op.getInput().getType());
  auto out = cast<MemRefType>(op.getInit().getType());
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = perm.size();
  if (rank < 2 || perm.back() == rank - 1 ||
      !in.getElementType().isIntOrFloat() ||
      in.getElementType().getIntOrFloatBitWidth() != 32 ||
      !innermostContiguous(in) || !innermostContiguous(out))
    return std::nullopt;
  int64_t q = llvm::find(perm, rank - 1) - perm.begin();
  if (out.getDimSize(rank - 1) < kTransposeTile ||
      out.getDimSize(q) < kTransposeTile)
    return std::nullopt;
  return q;
}

} // namespace

bool mlir::parallax::isTileTransposable(linalg::LinalgOp op) {
  auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation());
  return transpose && tiledOutputDim(transpose).has_value();
}

bool mlir::parallax::isTiledTransposeDim(linalg::LinalgOp op,
                                         int64_t position) {
  auto transpose = cast<linalg::TransposeOp>(op.getOperation());
  int64_t last = transpose.getPermutation().size() - 1;
  return position == last || position == *tiledOutputDim(transpose);
}

bool mlir::parallax::hasTransposeRemainder(linalg::LinalgOp op) {
  auto transpose = cast<linalg::TransposeOp>(op.getOperation());
  auto out = cast<MemRefType>(transpose.getInit().getType());
  int64_t last = out.getRank() - 1, q = *tiledOutputDim(transpose);
  return out.getDimSize(last) % kTransposeTile ||
         out.getDimSize(q) % kTransposeTile;
}

FailureOr<SmallVector<scf::ForOp>>
mlir::parallax::transposeByTiles(RewriterBase &rewriter, linalg::LinalgOp op) {
  auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation());
  std::optional<int64_t> q =
      transpose ? tiledOutputDim(transpose) : std::nullopt;
  if (!q)
    return failure();
  Location loc = op.getLoc();
  ArrayRef<int64_t> perm = transpose.getPermutation();
  Value input = transpose.getInput(), output = transpose.getInit();
  auto outType = cast<MemRefType>(output.getType());
  int64_t rank = perm.size(), last = rank - 1;
  Type elementType = outType.getElementType();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  DenseMap<int64_t, Value> constants;
  auto constant = [&](int64_t value) -> Value {
    Value &c = constants[value];
    if (!c)
      c = arith::ConstantIndexOp::create(rewriter, loc, value);
    return c;
  };
  SmallVector<Value> offsets;
  for (int64_t i = 0; i < kTransposeTile; ++i)
    offsets.push_back(constant(i));
  // Zeros for the missing rows of partial tiles, and masks of their first
  // lanes.
  auto rowType = VectorType::get({kTransposeTile}, elementType);
  Value vectorZeros = arith::ConstantOp::create(rewriter, loc, rowType,
                                                rewriter.getZeroAttr(rowType));
  auto maskType = VectorType::get({kTransposeTile}, rewriter.getI1Type());
  DenseMap<int64_t, Value> masks;
  for (int64_t extent : {outType.getDimSize(last), outType.getDimSize(*q)}) {
    int64_t lanes = extent % kTransposeTile;
    if (lanes && !masks.count(lanes)) {
      SmallVector<bool> first(kTransposeTile, false);
      std::fill_n(first.begin(), lanes, true);
      masks[lanes] = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(maskType, first));
    }
  }
  // `base` + i within a tile.
  auto plus = [&](Value base, int64_t i) -> Value {
    return i ? arith::AddIOp::create(rewriter, loc, base, offsets[i])
             : base;
  };
  // One loop per output dimension: the others outermost, in order, then the
  // two tiled ones, stepping by a tile over their whole tiles; the rows and
  // columns past them, as partial tiles after those.
  Value tileStep = constant(kTransposeTile);
  SmallVector<Value> extents, tiledExtents;
  for (int64_t extent : outType.getShape()) {
    extents.push_back(constant(extent));
    tiledExtents.push_back(constant(extent - extent % kTransposeTile));
  }
  auto isTiled = [&](int64_t d) { return d == last || d == *q; };
  SmallVector<scf::ForOp> loops(rank);
  SmallVector<Value> at(rank);
  auto loopOver = [&](Value lower, Value upper, Value step) {
    auto loop = scf::ForOp::create(rewriter, loc, lower, upper, step);
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    return loop;
  };
  for (int64_t d = 0; d < rank; ++d)
    if (!isTiled(d)) {
      loops[d] = loopOver(offsets[0], extents[d], offsets[1]);
      at[d] = loops[d].getInductionVar();
    }
  OpBuilder::InsertPoint outer = rewriter.saveInsertionPoint();
  for (int64_t d = 0; d < rank; ++d)
    if (isTiled(d)) {
      loops[d] = loopOver(offsets[0], tiledExtents[d], tileStep);
      at[d] = loops[d].getInductionVar();
    }
  // A tile at (at[last], at[q]) of `across` output columns (input rows)
  // and `down` output rows (input columns): the input's rows, one per
  // element of the output's innermost dimension, joined into one vector,
  // shuffled into its transpose, and stored as rows of the output's
  // innermost dimension. One-dimensional shuffles, which LLVM's x86 backend
  // turns into unpack and permute instructions. A partial tile (at the end
  // of a dimension that is not a multiple of a tile) reads and writes
  // through masks, its missing rows zeros that are never stored.
  auto emitTile = [&](ArrayRef<Value> at, int64_t across, int64_t down) {
    SmallVector<Value> from(rank);
    for (int64_t d = 0; d < rank; ++d)
      from[perm[d]] = at[d];
    SmallVector<Value> parts;
    for (int64_t i = 0; i < kTransposeTile; ++i) {
      SmallVector<Value> index(from);
      index[perm[last]] = plus(at[last], i);
      if (i >= across)
        parts.push_back(vectorZeros);
      else if (down == kTransposeTile)
        parts.push_back(
            vector::LoadOp::create(rewriter, loc, rowType, input, index));
      else
        parts.push_back(
            vector::MaskedLoadOp::create(rewriter, loc, rowType, input, index,
                                         masks.lookup(down), vectorZeros));
    }
    while (parts.size() > 1) {
      SmallVector<Value> joined;
      for (size_t i = 0; i < parts.size(); i += 2) {
        int64_t width = cast<VectorType>(parts[i].getType()).getNumElements();
        joined.push_back(vector::ShuffleOp::create(
            rewriter, loc, parts[i], parts[i + 1],
            llvm::to_vector(llvm::seq<int64_t>(0, 2 * width))));
      }
      parts = std::move(joined);
    }
    SmallVector<int64_t> transposeMask;
    for (int64_t j = 0; j < kTransposeTile; ++j)
      for (int64_t i = 0; i < kTransposeTile; ++i)
        transposeMask.push_back(i * kTransposeTile + j);
    Value tile = vector::ShuffleOp::create(rewriter, loc, parts[0], parts[0],
                                           transposeMask);
    for (int64_t j = 0; j < down; ++j) {
      SmallVector<Value> index(at);
      index[*q] = plus(at[*q], j);
      Value row = vector::ShuffleOp::create(
          rewriter, loc, tile, tile,
          llvm::to_vector(llvm::seq<int64_t>(j * kTransposeTile,
                                             (j + 1) * kTransposeTile)));
      if (across == kTransposeTile)
        vector::StoreOp::create(rewriter, loc, row, output, index);
      else
        vector::MaskedStoreOp::create(rewriter, loc, output, index,
                                      masks.lookup(across), row);
    }
  };
  emitTile(at, kTransposeTile, kTransposeTile);
  // The partial tiles past the whole ones: a column of them at the end of
  // the output's innermost dimension, a row at the end of the other, and
  // their corner.
  ArrayRef<int64_t> shape = outType.getShape();
  int64_t acrossLeft = shape[last] % kTransposeTile,
          downLeft = shape[*q] % kTransposeTile;
  auto partialTiles = [&](int64_t across, int64_t down) {
    if (!across || !down)
      return;
    rewriter.restoreInsertionPoint(outer);
    SmallVector<Value> tileAt(at);
    for (int64_t d : {std::min(last, *q), std::max(last, *q)}) {
      int64_t extent = d == last ? across : down;
      if (extent == kTransposeTile) {
        tileAt[d] =
            loopOver(offsets[0], tiledExtents[d], tileStep).getInductionVar();
      } else {
        tileAt[d] = tiledExtents[d];
      }
    }
    emitTile(tileAt, across, down);
  };
  partialTiles(acrossLeft, kTransposeTile);
  partialTiles(kTransposeTile, downLeft);
  partialTiles(acrossLeft, downLeft);
  return loops;
}

namespace {

struct VectorizeTransposesPass
    : parallax::impl::ParallaxVectorizeTransposesBase<
          VectorizeTransposesPass> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> transposes;
    getOperation()->walk([&](linalg::TransposeOp op) {
      if (isTileTransposable(op))
        transposes.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::TransposeOp op : transposes) {
      if (failed(transposeByTiles(rewriter, op))) {
        op->emitError("internal error: cannot transpose this op by tiles");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
