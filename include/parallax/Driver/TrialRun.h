//===- TrialRun.h - Timing a distributed program's steps --------*- C++ -*-===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_DRIVER_TRIALRUN_H
#define PARALLAX_DRIVER_TRIALRUN_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::parallax {

struct TrialRun {
  int64_t workers;
  /// The launcher command line before the program, e.g. "mpirun -np 4";
  /// empty: mpirun on this machine (more ranks than cores allowed).
  std::string launcher;
  std::string data;
  int64_t steps, warmup;
};

/// Launches `program` (a training program) on the trial's data for its
/// steps and returns the mean step time after the warm-up steps, or
/// std::nullopt with `error` set.
std::optional<double> timeSteps(llvm::StringRef program, const TrialRun &trial,
                                std::string &error);

} // namespace mlir::parallax

#endif // PARALLAX_DRIVER_TRIALRUN_H
