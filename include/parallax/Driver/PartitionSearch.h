//===- PartitionSearch.h - Partitions from trial runs -----------*- C++ -*-===//
//
// Part of the Parallax project.
//
// parallax-compile --search-partitions: builds and times the program with
// every parameter-server variable at P = 1, 2, 4, ... partitions, fits the
// paper's model t(P) = b/P + a(P-1) + c (include/parallax/Analysis/
// PartitionFit.h), and keeps the fastest P.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DRIVER_PARTITIONSEARCH_H
#define PARALLAX_DRIVER_PARTITIONSEARCH_H

#include "parallax/Analysis/Plan.h"
#include "parallax/Driver/Emit.h"
#include "parallax/Driver/TrialRun.h"
#include "parallax/Pipelines/Pipelines.h"

#include "llvm/Support/JSON.h"

namespace mlir::parallax {

/// The most partitions the search considers: twice the workers (at least
/// 4), never more than the rows of the smallest variable on servers; 0 when
/// no variable is on servers. It tries 1, 2, 4, ... up to it, and the fit
/// may choose any count up to it.
int64_t largestPartitionCount(const Plan &plan);

/// Searches for the planned `module` (after the gradient pipeline): each
/// candidate is lowered with `training` (its partition overrides set to
/// the candidate), emitted as an executable with `emit`, and timed with
/// `trial`; progress goes to stderr. On success sets `training`'s overrides
/// to the chosen count and adds `partition_search` to `report` (a plan
/// report object). Returns "" or what went wrong.
std::string searchPartitionCounts(ModuleOp module, const Plan &plan,
                                  TrainingPipelineOptions &training,
                                  const EmitOptions &emit,
                                  const TrialRun &trial,
                                  llvm::json::Value &report);

} // namespace mlir::parallax

#endif // PARALLAX_DRIVER_PARTITIONSEARCH_H
