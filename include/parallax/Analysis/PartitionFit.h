//===- PartitionFit.h - Step time against partitions ------------*- C++ -*-===//
//
// Part of the Parallax project.
//
// Parallax's partition search times a few training steps at partition
// counts P = 1, 2, 4, ... and fits t(P) = b/P + a(P-1) + c: b is the work
// that spreads over the partitions (server-side updates, the busiest
// server's traffic), a the per-partition overhead (one more message per
// push and pull), c the rest of the step.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_ANALYSIS_PARTITIONFIT_H
#define PARALLAX_ANALYSIS_PARTITIONFIT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::parallax {

struct PartitionSample {
  int64_t partitions;
  double stepSeconds;
};

struct PartitionFit {
  double a, b, c;
  double at(double partitions) const {
    return b / partitions + a * (partitions - 1) + c;
  }
};

/// Least-squares fit of t(P) = b/P + a(P-1) + c; std::nullopt with fewer
/// than three distinct partition counts.
std::optional<PartitionFit>
fitPartitions(llvm::ArrayRef<PartitionSample> samples);

/// The partition count in [1, maxPartitions] the fit predicts fastest, or
/// the fastest sample when there is no fit.
int64_t choosePartitions(llvm::ArrayRef<PartitionSample> samples,
                         const std::optional<PartitionFit> &fit,
                         int64_t maxPartitions);

/// {"samples": [{"partitions", "step_s"}...], "fit": {"a", "b", "c"} | null,
///  "chosen": P}
llvm::json::Value toJSON(llvm::ArrayRef<PartitionSample> samples,
                         const std::optional<PartitionFit> &fit,
                         int64_t chosen);

} // namespace mlir::parallax

#endif // PARALLAX_ANALYSIS_PARTITIONFIT_H
