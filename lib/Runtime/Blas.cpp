//===- Blas.cpp - Matrix products through oneDNN or OpenBLAS --------------===//
//
// Part of the Parallax project.
//
// The library is loaded by the runtime (CpuKernels.cpp), with the kernels
// the CPU's features call for, and runs single-threaded: a large product
// is cut into tiles that the worker's OpenMP threads (the ones generated
// loops run on) multiply in parallel. The tiles depend on the shapes
// alone, so every element is computed by the same call, and the same
// code, whatever the number of threads: results do not depend on it
// (the libraries' own threading splits by thread count, and their results
// do).
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "CpuKernels.h"
#include "Matrices.h"
#include "Support.h"
#include "Threads.h"

#include <algorithm>
#include <memory>
#include <vector>

using namespace parallax::runtime;

namespace {

/// Multiply-adds per tile to aim for: enough to hide a tile's start.
constexpr int64_t kTileWork = int64_t(1) << 22;
/// At most this many tiles per matrix, with edges of at least kMinEdge
/// rounded to kEdgeMultiple (the kernels' register blocks). Each tile
/// packs its own panels of A and B, so small tiles repack the same
/// operands over and over: with 64-wide tiles a 1024^3 product spent a
/// fifth of its time packing; with 256-wide ones a 2048^3 product still
/// ran at 89% of one sgemm call, and at 92-95% with 512-wide ones. Edges of
/// kLargeEdge are taken where they still make kMinLargeTiles tiles, enough
/// to share among threads; fewer, larger tiles made ResNet-18's and
/// MobileNetV2's steps 9-12% slower on two threads.
constexpr int64_t kMaxTiles = 64, kMinEdge = 256, kEdgeMultiple = 16;
constexpr int64_t kLargeEdge = 512, kMinLargeTiles = 16;

/// Edge length of at least `minEdge` splitting `size` into about `parts`
/// blocks.
int64_t edgeFor(int64_t size, int64_t parts, int64_t minEdge) {
  int64_t edge = ceilDiv(size, std::max<int64_t>(parts, 1));
  return std::max(minEdge, ceilDiv(edge, kEdgeMultiple) * kEdgeMultiple);
}

/// A product cut into fewer tiles than kFewTiles, deep enough for slices
/// of at least kMinSliceDepth, is also cut along its depth (at most
/// kMaxSlices slices, each at least kTileWork): otherwise its one or two
/// tiles keep one thread busy while the others wait (the LM's hidden
/// gradient, 320 x 128 x 100,000, ran on one thread of two). Each slice
/// multiplies into a zeroed partial of its own, and the partials are added
/// to C in slice order: the slices, and so the results, depend on the
/// shapes alone. Partials of more than kMaxPartialBytes are not made.
constexpr int64_t kFewTiles = 4, kMinSliceDepth = 1024, kMaxSlices = 16;
constexpr int64_t kMaxPartialBytes = int64_t(64) << 20;

struct Tile {
  int64_t batch, row, rows, col, cols;
  /// Depth slice: [depthBegin, depthBegin + depth), or all of it.
  int64_t depthBegin = 0, depth = 0;
  /// Where the slice accumulates: C itself, or a partial of rows x cols.
  float *partial = nullptr;
};

struct TileEdges {
  int64_t rows, cols, count;
};

/// Tile edges of at least `minEdge` for C: as close to `wanted` tiles as
/// the edges allow, cut the way that packs the least (every column block
/// packs all of A's rows, every row block all of B's columns).
TileEdges edgesOf(const Matrices &C, int64_t wanted, int64_t minEdge) {
  TileEdges best{C.rows, C.cols, 0};
  int64_t bestPacking = 0;
  for (int64_t colParts = 1; colParts <= wanted; ++colParts) {
    int64_t cols = edgeFor(C.cols, colParts, minEdge);
    int64_t rows = edgeFor(C.rows, ceilDiv(wanted, colParts), minEdge);
    int64_t colBlocks = ceilDiv(C.cols, cols),
            rowBlocks = ceilDiv(C.rows, rows);
    int64_t tiles = std::min(colBlocks * rowBlocks, wanted);
    int64_t packing = colBlocks * C.rows + rowBlocks * C.cols;
    if (tiles > best.count || (tiles == best.count && packing < bestPacking)) {
      best = {rows, cols, tiles};
      bestPacking = packing;
    }
  }
  return best;
}

/// Tiles of C, from the shapes alone (never the thread count).
std::vector<Tile> blocksOf(const Matrices &C, int64_t depth) {
  int64_t work = C.rows * C.cols * depth;
  int64_t wanted = std::clamp(work / kTileWork, int64_t(1), kMaxTiles);
  TileEdges edges = edgesOf(C, wanted, kLargeEdge);
  if (edges.count < kMinLargeTiles)
    edges = edgesOf(C, wanted, kMinEdge);
  int64_t rowEdge = edges.rows, colEdge = edges.cols;
  std::vector<Tile> tiles;
  for (int64_t b = 0; b < C.batch; ++b)
    for (int64_t row = 0; row < C.rows; row += rowEdge)
      for (int64_t col = 0; col < C.cols; col += colEdge)
        tiles.push_back({b, row, std::min(rowEdge, C.rows - row), col,
                         std::min(colEdge, C.cols - col), 0, depth});
  return tiles;
}

/// How many depth slices each block gets (1: none), from the shapes alone.
int64_t slicesOf(const Matrices &C, int64_t depth, int64_t blocks) {
  if (blocks >= kFewTiles)
    return 1;
  int64_t slices = std::min({kMaxSlices, depth / kMinSliceDepth,
                             C.batch * C.rows * C.cols * depth / kTileWork});
  int64_t partialBytes = slices * C.batch * C.rows * C.cols * 4;
  return slices >= 2 && partialBytes <= kMaxPartialBytes ? slices : 1;
}

/// What C holds before the product is added: its old contents, zeros
/// (C's old contents never read), or a bias broadcast along its rows or
/// along its columns.
struct Start {
  enum Kind { Accumulate, Zero, Bias } kind = Accumulate;
  const float *bias = nullptr;
  int64_t biasStride = 0;
  /// bias[j] starts column j of every row (else bias[i] starts row i).
  bool biasPerColumn = true;

  /// Writes the start of `cols` elements of row `row` from column `col`
  /// on; nothing when C accumulates.
  void write(float *out, int64_t row, int64_t col, int64_t cols) const {
    if (kind == Zero)
      std::fill_n(out, cols, 0.0f);
    else if (kind == Bias && biasPerColumn && biasStride == 1)
      std::copy_n(bias + col, cols, out);
    else if (kind == Bias && biasPerColumn)
      for (int64_t j = 0; j < cols; ++j)
        out[j] = bias[(col + j) * biasStride];
    else if (kind == Bias)
      std::fill_n(out, cols, bias[row * biasStride]);
  }
};

/// C = start + A B.
void multiplyMatrices(int64_t rankA, void *a, int64_t rankB, void *b,
                      int64_t rankC, void *c, const Start &start) {
  static const BlasLibrary &blas = requireBlasLibrary();
  Matrices A = viewMatrices(rankA, a), B = viewMatrices(rankB, b),
           C = viewMatrices(rankC, c);
  int64_t depth = A.cols;
  // A product of depth 0 is zero; the libraries would reject the
  // operands' leading dimensions (at least 1).
  if (depth == 0) {
    parallelChunks(C.batch * C.rows, 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        start.write(C.data + (i / C.rows) * C.batchStride +
                        (i % C.rows) * C.leading,
                    i % C.rows, 0, C.cols);
    });
    return;
  }
  std::vector<Tile> blocks = blocksOf(C, depth);
  int64_t slices = slicesOf(C, depth, static_cast<int64_t>(blocks.size()));
  std::vector<Tile> tiles;
  // Each slice overwrites a partial of its own: never zero-filled.
  std::unique_ptr<float[]> partials;
  if (slices == 1) {
    tiles = std::move(blocks);
  } else {
    partials.reset(new float[slices * C.batch * C.rows * C.cols]);
    int64_t sliceDepth = ceilDiv(depth, slices), offset = 0;
    for (const Tile &block : blocks) {
      for (int64_t s = 0; s * sliceDepth < depth; ++s) {
        Tile t = block;
        t.depthBegin = s * sliceDepth;
        t.depth = std::min(sliceDepth, depth - t.depthBegin);
        t.partial = partials.get() + offset;
        offset += block.rows * block.cols;
        tiles.push_back(t);
      }
    }
  }
  auto multiply = [&](const Tile &t) {
    // A is [rows, depth] (stored transposed: [depth, rows]), B is
    // [depth, cols] (stored transposed: [cols, depth]).
    const float *aTile = A.data + t.batch * A.batchStride +
                         t.row * (A.transposed ? 1 : A.leading) +
                         t.depthBegin * (A.transposed ? A.leading : 1);
    const float *bTile = B.data + t.batch * B.batchStride +
                         t.col * (B.transposed ? B.leading : 1) +
                         t.depthBegin * (B.transposed ? 1 : B.leading);
    float *cTile = t.partial ? t.partial
                             : C.data + t.batch * C.batchStride +
                                   t.row * C.leading + t.col;
    int64_t leading = t.partial ? t.cols : C.leading;
    // The bias goes into the tile just before its product, while the tile
    // is in cache: one pass over C less than a broadcast of its own.
    if (start.kind == Start::Bias && !t.partial)
      for (int64_t i = 0; i < t.rows; ++i)
        start.write(cTile + i * leading, t.row + i, t.col, t.cols);
    float beta = start.kind != Start::Zero && !t.partial ? 1.0f : 0.0f;
    blas.gemmFor(t.rows, t.cols, t.depth, A.leading, B.leading, leading)(
        A.transposed, B.transposed, t.rows, t.cols, t.depth, aTile, A.leading,
        bTile, B.leading, beta, cTile, leading);
  };
  parallelTasks(static_cast<int64_t>(tiles.size()),
                [&](int64_t i) { multiply(tiles[i]); });
  if (slices == 1)
    return;
  // C = start + the block's slices in order, row by row of C: every
  // element sums the same partials in the same order on any thread.
  int64_t rowsPerMatrix = C.rows;
  parallelChunks(C.batch * rowsPerMatrix, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t batch = i / rowsPerMatrix, row = i % rowsPerMatrix;
      float *out = C.data + batch * C.batchStride + row * C.leading;
      start.write(out, row, 0, C.cols);
      for (const Tile &t : tiles) {
        if (t.batch != batch || row < t.row || row >= t.row + t.rows)
          continue;
        const float *in = t.partial + (row - t.row) * t.cols;
        for (int64_t j = 0; j < t.cols; ++j)
          out[t.col + j] += in[j];
      }
    }
  });
}

} // namespace

extern "C" void parallax_rt_matmul_f32(int64_t rankA, void *a, int64_t rankB,
                                       void *b, int64_t rankC, void *c) {
  multiplyMatrices(rankA, a, rankB, b, rankC, c, Start{});
}

extern "C" void parallax_rt_matmul_into_f32(int64_t rankA, void *a,
                                            int64_t rankB, void *b,
                                            int64_t rankC, void *c) {
  multiplyMatrices(rankA, a, rankB, b, rankC, c, Start{Start::Zero});
}

extern "C" void parallax_rt_matmul_bias_f32(int64_t rankA, void *a,
                                            int64_t rankB, void *b,
                                            int64_t rankBias, void *bias,
                                            int64_t rankC, void *c,
                                            int64_t perColumn) {
  if (rankBias != 1)
    die("internal error: parallax_rt_matmul_bias_f32 takes a bias of "
        "rank 1, not " +
        std::to_string(rankBias));
  StridedView view = viewDescriptor(1, bias, sizeof(float));
  Start start{Start::Bias, reinterpret_cast<const float *>(view.data),
              view.strides[0], perColumn != 0};
  multiplyMatrices(rankA, a, rankB, b, rankC, c, start);
}
