//===- Blas.cpp - Matrix products through OpenBLAS ------------------------===//
//
// Part of the Parallax project.
//
// OpenBLAS is loaded by the runtime (CpuKernels.cpp), with the kernels
// the CPU's features call for, and runs single-threaded: a large product
// is cut into tiles that the worker's OpenMP threads (the ones generated
// loops run on) multiply in parallel. The tiles depend on the shapes
// alone, so every element is computed by the same call, and the same
// code, whatever the number of threads: results do not depend on it
// (OpenBLAS's own threading splits by thread count, and its results do).
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "CpuKernels.h"
#include "Matrices.h"
#include "Support.h"
#include "Threads.h"

#include <vector>

using namespace parallax::runtime;

namespace {

CBLAS_TRANSPOSE transposeOf(const Matrices &m) {
  return m.transposed ? CblasTrans : CblasNoTrans;
}

/// Multiply-adds per tile to aim for: enough to hide a tile's start.
constexpr int64_t kTileWork = int64_t(1) << 22;
/// At most this many tiles per matrix, and tile edges of at least
/// kMinEdge rounded to kEdgeMultiple (the kernels' register blocks). Each
/// tile packs its own panels of A and B, so small tiles repack the same
/// operands over and over: with 64-wide tiles a 1024^3 product spent a
/// fifth of its time packing.
constexpr int64_t kMaxTiles = 64, kMinEdge = 256, kEdgeMultiple = 16;

/// Edge length splitting `size` into about `parts` blocks.
int64_t edgeFor(int64_t size, int64_t parts) {
  int64_t edge = ceilDiv(size, std::max<int64_t>(parts, 1));
  return std::max(kMinEdge, ceilDiv(edge, kEdgeMultiple) * kEdgeMultiple);
}

struct Tile {
  int64_t batch, row, rows, col, cols;
};

/// Tiles of C, from the shapes alone (never the thread count): as close
/// to work / kTileWork of them as the edges allow, cut the way that packs
/// the least (every column block packs all of A's rows, every row block
/// all of B's columns).
std::vector<Tile> tilesOf(const Matrices &C, int64_t depth) {
  int64_t work = C.rows * C.cols * depth;
  int64_t wanted = std::clamp(work / kTileWork, int64_t(1), kMaxTiles);
  int64_t rowEdge = C.rows, colEdge = C.cols;
  int64_t bestTiles = 0, bestPacking = 0;
  for (int64_t colParts = 1; colParts <= wanted; ++colParts) {
    int64_t cols = edgeFor(C.cols, colParts);
    int64_t rows = edgeFor(C.rows, ceilDiv(wanted, colParts));
    int64_t colBlocks = ceilDiv(C.cols, cols),
            rowBlocks = ceilDiv(C.rows, rows);
    int64_t tiles = std::min(colBlocks * rowBlocks, wanted);
    int64_t packing = colBlocks * C.rows + rowBlocks * C.cols;
    if (tiles > bestTiles || (tiles == bestTiles && packing < bestPacking)) {
      bestTiles = tiles;
      bestPacking = packing;
      rowEdge = rows;
      colEdge = cols;
    }
  }
  std::vector<Tile> tiles;
  for (int64_t b = 0; b < C.batch; ++b)
    for (int64_t row = 0; row < C.rows; row += rowEdge)
      for (int64_t col = 0; col < C.cols; col += colEdge)
        tiles.push_back({b, row, std::min(rowEdge, C.rows - row), col,
                         std::min(colEdge, C.cols - col)});
  return tiles;
}

} // namespace

extern "C" void parallax_rt_matmul_f32(int64_t rankA, void *a, int64_t rankB,
                                       void *b, int64_t rankC, void *c) {
  static const SgemmFn sgemm = requireBlasLibrary().sgemm;
  Matrices A = viewMatrices(rankA, a), B = viewMatrices(rankB, b),
           C = viewMatrices(rankC, c);
  std::vector<Tile> tiles = tilesOf(C, A.cols);
  auto multiply = [&](const Tile &t) {
    // A is [rows, depth] (stored transposed: [depth, rows]), B is
    // [depth, cols] (stored transposed: [cols, depth]).
    const float *aTile = A.data + t.batch * A.batchStride +
                         t.row * (A.transposed ? 1 : A.leading);
    const float *bTile = B.data + t.batch * B.batchStride +
                         t.col * (B.transposed ? B.leading : 1);
    float *cTile = C.data + t.batch * C.batchStride + t.row * C.leading + t.col;
    sgemm(CblasRowMajor, transposeOf(A), transposeOf(B), t.rows, t.cols, A.cols,
          1.0f, aTile, A.leading, bTile, B.leading, 1.0f, cTile, C.leading);
  };
  parallelChunks(static_cast<int64_t>(tiles.size()), 1,
                 [&](int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end; ++i)
                     multiply(tiles[i]);
                 });
}
