//===- PartitionSearch.cpp - Partition counts from timed trial runs -------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Driver/PartitionSearch.h"
#include "parallax/Analysis/PartitionFit.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::parallax;

int64_t mlir::parallax::largestPartitionCount(const Plan &plan) {
  int64_t most = std::max<int64_t>(4, 2 * plan.cluster.workers());
  bool any = false;
  for (const VariablePlan &v : plan.variables)
    if (v.placement == Placement::PS) {
      any = true;
      most = std::min<int64_t>(most, v.shape.empty() ? 1 : v.shape.front());
    }
  return any ? most : 0;
}

std::string mlir::parallax::searchPartitionCounts(
    ModuleOp module, const Plan &plan, TrainingPipelineOptions &training,
    const EmitOptions &emit, const TrialRun &trial, llvm::json::Value &report) {
  int64_t most = largestPartitionCount(plan);
  if (most == 0) {
    llvm::errs() << "parallax-compile: no variable is on parameter servers: "
                    "no partitions to search\n";
    return "";
  }
  auto setPartitions = [&](TrainingPipelineOptions &options,
                           int64_t partitions) {
    options.partition.overrides.clear();
    for (const VariablePlan &v : plan.variables)
      if (v.placement == Placement::PS)
        options.partition.overrides.push_back(v.name + "=" +
                                              std::to_string(partitions));
  };
  SmallString<128> program;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("parallax-trial", "", program))
    return "cannot create a temporary file: " + ec.message();
  llvm::FileRemover removeProgram(program);
  EmitOptions executable = emit;
  executable.kind = EmitKind::Executable;
  std::vector<PartitionSample> samples;
  for (int64_t partitions = 1; partitions <= most; partitions *= 2) {
    OwningOpRef<ModuleOp> candidate = module.clone();
    TrainingPipelineOptions options = training;
    setPartitions(options, partitions);
    PassManager pm(module.getContext());
    buildTrainingLoweringPipeline(pm, options);
    if (failed(pm.run(*candidate)))
      return "lowering the trial program with " + std::to_string(partitions) +
             " partitions failed";
    if (std::string problem = emitProgram(*candidate, program, executable);
        !problem.empty())
      return problem;
    std::string error;
    std::optional<double> seconds = timeSteps(program, trial, error);
    if (!seconds)
      return "--search-partitions: " + error;
    llvm::errs() << llvm::formatv(
        "parallax-compile: {0} partitions: {1:f3} ms/step\n", partitions,
        *seconds * 1e3);
    samples.push_back({partitions, *seconds});
  }
  std::optional<PartitionFit> fit = fitPartitions(samples);
  int64_t chosen = choosePartitions(samples, fit, most);
  if (fit)
    llvm::errs() << llvm::formatv("parallax-compile: fit t(P) = {0:e2}/P + "
                                  "{1:e2}(P-1) + {2:e2} s: {3} partitions\n",
                                  fit->b, fit->a, fit->c, chosen);
  setPartitions(training, chosen);
  report.getAsObject()->try_emplace("partition_search",
                                    toJSON(samples, fit, chosen));
  return "";
}
