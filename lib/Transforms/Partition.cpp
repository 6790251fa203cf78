//===- Partition.cpp - Partition counts of parameter-server variables -----===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/Plan.h"
#include "parallax/Dialect/Parallax/IR/ParallaxOps.h"
#include "parallax/Transforms/Passes.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::parallax {
#define GEN_PASS_DEF_PARALLAXPARTITION
#include "parallax/Transforms/Passes.h.inc"
} // namespace mlir::parallax

using namespace mlir;
using namespace mlir::parallax;

namespace {

struct PartitionPass : parallax::impl::ParallaxPartitionBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (servers < 0) {
      module.emitError() << "servers must not be negative, got "
                         << static_cast<int64_t>(servers);
      return signalPassFailure();
    }
    Cluster cluster;
    cluster.machines = servers;
    llvm::StringMap<int64_t> chosen;
    for (const std::string &entry : overrides) {
      StringRef name, value;
      std::tie(name, value) = StringRef(entry).rsplit('=');
      int64_t partitions;
      if (name.empty() || value.getAsInteger(10, partitions) ||
          partitions < 1) {
        module.emitError() << "bad partition override '" << entry
                           << "': expected name=P with P >= 1";
        return signalPassFailure();
      }
      chosen[name] = partitions;
    }
    for (auto variable : module.getOps<VariableOp>()) {
      DistributionAttr distribution = variable.getDistributionAttr();
      auto it = chosen.find(variable.getSymName());
      bool onServers =
          distribution && distribution.getPlacement() == Placement::PS;
      if (!onServers) {
        if (it != chosen.end()) {
          variable.emitError() << "cannot partition '" << variable.getSymName()
                               << "': it is not placed on parameter servers";
          return signalPassFailure();
        }
        continue;
      }
      RankedTensorType type = variable.getTensorType();
      int64_t rows = type.getRank() ? type.getDimSize(0) : 1;
      int64_t partitions = it != chosen.end() ? it->second
                           : servers          ? defaultPartitions(cluster, rows)
                                              : distribution.getPartitions();
      if (partitions > rows) {
        variable.emitError()
            << "cannot split " << rows << " rows of '" << variable.getSymName()
            << "' into " << partitions << " partitions";
        return signalPassFailure();
      }
      variable.setDistributionAttr(
          DistributionAttr::get(&getContext(), Placement::PS, partitions));
      if (it != chosen.end())
        chosen.erase(it);
    }
    if (!chosen.empty()) {
      module.emitError() << "partition override for unknown variable '"
                         << chosen.begin()->getKey() << "'";
      return signalPassFailure();
    }
  }
};

} // namespace
