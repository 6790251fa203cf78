//===- PartitionFit.cpp - The paper's model of step time vs partitions ----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/PartitionFit.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <set>

using namespace mlir::parallax;

std::optional<PartitionFit>
mlir::parallax::fitPartitions(llvm::ArrayRef<PartitionSample> samples) {
  std::set<int64_t> distinct;
  for (const PartitionSample &s : samples)
    distinct.insert(s.partitions);
  if (distinct.size() < 3)
    return std::nullopt;
  // Normal equations (X^T X) [b a c] = X^T t for rows [1/P, P-1, 1].
  double m[3][4] = {};
  for (const PartitionSample &s : samples) {
    double p = static_cast<double>(s.partitions);
    double row[3] = {1.0 / p, p - 1.0, 1.0};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j)
        m[i][j] += row[i] * row[j];
      m[i][3] += row[i] * s.stepSeconds;
    }
  }
  // Gaussian elimination with partial pivoting.
  for (int col = 0; col < 3; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 3; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col]))
        pivot = r;
    if (std::fabs(m[pivot][col]) < 1e-300)
      return std::nullopt;
    std::swap(m[col], m[pivot]);
    for (int r = 0; r < 3; ++r) {
      if (r == col)
        continue;
      double factor = m[r][col] / m[col][col];
      for (int k = col; k < 4; ++k)
        m[r][k] -= factor * m[col][k];
    }
  }
  return PartitionFit{m[1][3] / m[1][1], m[0][3] / m[0][0], m[2][3] / m[2][2]};
}

int64_t
mlir::parallax::choosePartitions(llvm::ArrayRef<PartitionSample> samples,
                                 const std::optional<PartitionFit> &fit,
                                 int64_t maxPartitions) {
  if (!fit) {
    const PartitionSample *best = nullptr;
    for (const PartitionSample &s : samples)
      if (!best || s.stepSeconds < best->stepSeconds)
        best = &s;
    return best ? best->partitions : 1;
  }
  int64_t chosen = 1;
  for (int64_t p = 2; p <= maxPartitions; ++p)
    if (fit->at(p) < fit->at(chosen))
      chosen = p;
  return chosen;
}

llvm::json::Value
mlir::parallax::toJSON(llvm::ArrayRef<PartitionSample> samples,
                       const std::optional<PartitionFit> &fit, int64_t chosen) {
  llvm::json::Array measured;
  for (const PartitionSample &s : samples)
    measured.push_back(llvm::json::Object{{"partitions", s.partitions},
                                          {"step_s", s.stepSeconds}});
  llvm::json::Value fitted = nullptr;
  if (fit)
    fitted = llvm::json::Object{{"a", fit->a}, {"b", fit->b}, {"c", fit->c}};
  return llvm::json::Object{{"samples", std::move(measured)},
                            {"fit", std::move(fitted)},
                            {"chosen", chosen}};
}
