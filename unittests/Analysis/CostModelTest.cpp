//===- CostModelTest.cpp - The communication cost model -------------------===//
//
// Part of the Parallax project.
//
// Every formula against values computed by hand from the paper's table
// (../shared/PARALLAX-PAPER.md) for a 1 MB variable on 4 machines.
//
//===----------------------------------------------------------------------===//

#include "parallax/Analysis/CostModel.h"
#include "parallax/Analysis/PartitionFit.h"

#include <gtest/gtest.h>

using namespace mlir::parallax;

namespace {

Cluster fourMachines() {
  Cluster c;
  c.machines = 4;
  c.bandwidth = 1e9; // 1 GB/s
  c.latency = 1e-5;
  return c;
}

TEST(CostModelTest, DenseAllReduceAndBalancedPSMoveTheSameBytes) {
  Cluster c = fourMachines();
  double w = 1e6;
  // 4w(N-1)/N = 4 * 1e6 * 3 / 4.
  EXPECT_DOUBLE_EQ(allReduceTransfer(c, w).bytes, 3e6);
  EXPECT_EQ(allReduceTransfer(c, w).rounds, 6);
  EXPECT_DOUBLE_EQ(psTransfer(c, w, 1.0, 4).bytes, 3e6);
  EXPECT_DOUBLE_EQ(psTransfer(c, w, 1.0, 16).bytes, 3e6);
  // One server holds it: 2w(N-1) at that server.
  EXPECT_DOUBLE_EQ(psTransfer(c, w, 1.0, 1).bytes, 6e6);
}

TEST(CostModelTest, SparsePSBeatsAllGatherByAboutHalfTheMachines) {
  Cluster c = fourMachines();
  double w = 1e6, alpha = 0.01;
  // PS spread: 4·alpha·w(N-1)/N; AllGatherv: 2·alpha·w(N-1).
  EXPECT_DOUBLE_EQ(psTransfer(c, w, alpha, 4).bytes, 3e4);
  EXPECT_DOUBLE_EQ(allGatherTransfer(c, w, alpha).bytes, 6e4);
  EXPECT_EQ(allGatherTransfer(c, w, alpha).rounds, 3);
  // Two servers of four: 2·alpha·w((S-1) + (M-1))/S = 2e4 * 4 / 2.
  EXPECT_DOUBLE_EQ(psTransfer(c, w, alpha, 2).bytes, 4e4);
}

TEST(CostModelTest, SecondsAddBandwidthAndLatency) {
  Cluster c = fourMachines();
  Transfer t = allReduceTransfer(c, 1e6);
  // Sends and receives overlap: 3e6 / 2 bytes at 1 GB/s, 6 rounds of 10 us.
  EXPECT_DOUBLE_EQ(t.seconds(c), 1.5e-3 + 6e-5);
}

TEST(CostModelTest, RowsTravelWithTheirIds) {
  Cluster c = fourMachines();
  // 1000 rows of 1 KB, alpha 0.01 per machine: 10 rows of 1 KB + 8 bytes.
  double w = 1e6;
  EXPECT_DOUBLE_EQ(psTransfer(c, w, 0.01, 4, true, 1000).bytes,
                   3 * 0.01 * (w + 8000));
  EXPECT_DOUBLE_EQ(allGatherTransfer(c, w, 0.01, 1000).bytes,
                   6 * 0.01 * (w + 8000));
  // A dense variable on servers moves whole partitions, no ids.
  EXPECT_DOUBLE_EQ(psTransfer(c, w, 1.0, 4, false, 1000).bytes, 3e6);
}

TEST(CostModelTest, RoundsAreTheRuntimes) {
  Cluster c = fourMachines();
  // Below the ring's threshold one MPI_Iallreduce: log2(4) rounds.
  EXPECT_EQ(allReduceTransfer(c, kRingMinBytes - 4).rounds, 2);
  EXPECT_EQ(allReduceTransfer(c, kRingMinBytes).rounds, 6);
  // Rows: counts, then ids and rows, pushed; counts, ids, rows pulled.
  EXPECT_EQ(psTransfer(c, 1e6, 0.5, 4).rounds, 5);
  // Dense variables on servers: a reduce-scatter and an allgather, around
  // the ring from kRingMinBytes on, else MPI's (a tree reduce, a scatter,
  // a one-round allgather).
  EXPECT_EQ(psTransfer(c, 1e6, 1.0, 4, /*sparse=*/false).rounds, 6);
  EXPECT_EQ(psTransfer(c, 1e3, 1.0, 4, /*sparse=*/false).rounds, 4);
  EXPECT_EQ(densePsRounds(c, kRingMinBytes), 6);
  EXPECT_EQ(densePsRounds(Cluster(), kRingMinBytes), 0);
  // Several workers per machine gather their rows on one first.
  c.workersPerMachine = 2;
  EXPECT_EQ(psTransfer(c, 1e6, 0.5, 4).rounds, 7);
  EXPECT_EQ(treeRounds(1), 0);
  EXPECT_EQ(treeRounds(2), 1);
  EXPECT_EQ(treeRounds(5), 3);
  EXPECT_EQ(treeRounds(8), 3);
}

TEST(CostModelTest, LargeAllReducesGoByMachine) {
  // 4 machines of 2 workers: a ring within each machine (2 rounds), each
  // worker's half across the 4 machines (6 rounds); the NIC carries
  // 4w(4-1)/4, a worker's link 4w(2-1)/2 + 4(w/2)(4-1)/4.
  Cluster c = fourMachines();
  c.workersPerMachine = 2;
  Transfer t = allReduceTransfer(c, 1e6);
  EXPECT_DOUBLE_EQ(t.bytes, 3e6);
  EXPECT_DOUBLE_EQ(t.localBytes, 2e6 + 1.5e6);
  EXPECT_EQ(t.rounds, 2 + 6);
  // A share under the ring's threshold crosses machines in a tree.
  EXPECT_EQ(allReduceTransfer(c, kRingMinBytes).rounds, 2 + 2);
  // The paper's 8 x 6: 10 + 14 rounds where one ring over 48 takes 94.
  c.machines = 8;
  c.workersPerMachine = 6;
  EXPECT_DOUBLE_EQ(allReduceTransfer(c, 48e6).bytes, 4 * 48e6 * 7 / 8);
  EXPECT_EQ(allReduceTransfer(c, 48e6).rounds, 24);
}

TEST(CostModelTest, SmallCollectivesGoOverEveryRank) {
  // 4 machines of 2 workers: a small AllReduce is one MPI collective over
  // the 8 ranks, a machine's two next to each other, so its NIC carries
  // 4w(8-1)/8 in ceil(log2 8) rounds, and so do small dense variables on
  // servers (plus a scatter and an allgather).
  Cluster c = fourMachines();
  c.workersPerMachine = 2;
  EXPECT_EQ(allReduceTransfer(c, kRingMinBytes - 4).rounds, 3);
  EXPECT_DOUBLE_EQ(allReduceTransfer(c, kRingMinBytes - 4).bytes,
                   4 * (kRingMinBytes - 4) * 7 / 8);
  EXPECT_EQ(densePsRounds(c, kRingMinBytes - 4), 5);
  // From kRingMinBytes the dense PS exchange goes by machine too: 2(2-1)
  // rounds within a machine, then MPI's collectives across the 4 for a
  // worker's half (under kRingMinBytes), or the ring (2(4-1)).
  EXPECT_EQ(densePsRounds(c, kRingMinBytes), 2 + 2 + 2);
  EXPECT_EQ(densePsRounds(c, 2 * kRingMinBytes), 2 + 6);
  // The workers of one machine reduce through its memory.
  c.machines = 1;
  c.workersPerMachine = 4;
  EXPECT_EQ(allReduceTransfer(c, 1e6).bytes, 0);
  EXPECT_EQ(allReduceTransfer(c, 1e6).rounds, 0);
}

TEST(CostModelTest, OneMachineMovesNothing) {
  Cluster c;
  EXPECT_EQ(allReduceTransfer(c, 1e6).bytes, 0);
  EXPECT_EQ(psTransfer(c, 1e6, 1.0, 1).bytes, 0);
  EXPECT_EQ(allGatherTransfer(c, 1e6, 1.0).bytes, 0);
  EXPECT_EQ(psTransfer(c, 1e6, 1.0, 1).seconds(c), 0);
}

TEST(CostModelTest, ParsesClusterSpecs) {
  std::string error;
  std::optional<Cluster> c = Cluster::parse(
      "machines=8,workers-per-machine=6,bandwidth=100Gbps,latency=5us", {},
      error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->machines, 8);
  EXPECT_EQ(c->workers(), 48);
  EXPECT_DOUBLE_EQ(c->bandwidth, 12.5e9);
  EXPECT_DOUBLE_EQ(c->latency, 5e-6);
  c = Cluster::parse("bandwidth=1.25GB/s", {}, error);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->machines, 1);
  EXPECT_DOUBLE_EQ(c->bandwidth, 1.25e9);

  EXPECT_FALSE(Cluster::parse("machines=0", {}, error));
  EXPECT_EQ(error, "bad value '0' for cluster field 'machines' (a positive "
                   "integer)");
  EXPECT_FALSE(Cluster::parse("bandwidth=10", {}, error));
  EXPECT_EQ(error, "bad value '10' for cluster field 'bandwidth' (e.g. "
                   "10Gbps, 100Mbps, 1.25GB/s)");
  EXPECT_FALSE(Cluster::parse("gpus=4", {}, error));
  EXPECT_EQ(error, "unknown cluster field 'gpus' (expected machines, "
                   "workers-per-machine, bandwidth, latency, local-bandwidth)");
  c = Cluster::parse("local-bandwidth=10GB/s", {}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_DOUBLE_EQ(c->localBandwidth, 1e10);
  EXPECT_FALSE(Cluster::parse("local-bandwidth=fast", {}, error));
  EXPECT_EQ(error, "bad value 'fast' for cluster field 'local-bandwidth' "
                   "(e.g. 10Gbps, 100Mbps, 1.25GB/s)");
}

TEST(CostModelTest, LinksWithinAMachine) {
  // 4 machines of 2 workers, NICs of 1 GB/s, local links of 0.5 GB/s.
  Cluster c = fourMachines();
  c.workersPerMachine = 2;
  double w = 1e6;
  // By machine: the NIC carries 4w(4-1)/4, a worker's link 3.5w; the
  // slower link decides.
  Transfer byMachine = allReduceTransfer(c, w);
  EXPECT_DOUBLE_EQ(byMachine.seconds(c), 3e6 / 2 / 1e9 + 8 * 1e-5);
  c.localBandwidth = 0.5e9;
  EXPECT_DOUBLE_EQ(byMachine.seconds(c), 3.5e6 / 2 / 0.5e9 + 8 * 1e-5);
  // Rows summed on a machine's first worker: the other worker's half of
  // the machine's rows (alpha 0.1) comes in.
  EXPECT_DOUBLE_EQ(psTransfer(c, w, 0.1, 4, true, 0).localBytes, 0.05 * w);
  // The allgather: a worker's half goes to the other, whose half comes.
  EXPECT_DOUBLE_EQ(allGatherTransfer(c, w, 0.1).localBytes, 0.1 * w);
  // A dense variable on servers goes by machine, as the AllReduce.
  EXPECT_DOUBLE_EQ(psTransfer(c, w, 1.0, 4, false).localBytes, 3.5e6);
  // One worker per machine: no local link.
  c.workersPerMachine = 1;
  EXPECT_EQ(allReduceTransfer(c, w).localBytes, 0);
  EXPECT_EQ(psTransfer(c, w, 0.1, 4).localBytes, 0);
  EXPECT_EQ(allGatherTransfer(c, w, 0.1).localBytes, 0);
}

} // namespace

// The partition search's model t(P) = b/P + a(P-1) + c: recovered exactly
// from samples of it, and its minimum (sqrt(b/a) + 1 rounded to the better
// neighbour) chosen.
TEST(PartitionFitTest, RecoversTheModelAndItsMinimum) {
  std::vector<PartitionSample> samples;
  for (int64_t p : {1, 2, 4, 8, 16})
    samples.push_back({p, 8e-3 / p + 1e-4 * (p - 1) + 2e-3});
  std::optional<PartitionFit> fit = fitPartitions(samples);
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR(fit->b, 8e-3, 1e-12);
  EXPECT_NEAR(fit->a, 1e-4, 1e-12);
  EXPECT_NEAR(fit->c, 2e-3, 1e-12);
  // d/dP: -b/P^2 + a = 0 at P = sqrt(80) ~ 8.9.
  EXPECT_EQ(choosePartitions(samples, fit, 16), 9);
  EXPECT_EQ(choosePartitions(samples, fit, 4), 4);
}

TEST(PartitionFitTest, TooFewSamplesPickTheFastest) {
  std::vector<PartitionSample> samples{{1, 3e-3}, {2, 2e-3}};
  EXPECT_FALSE(fitPartitions(samples).has_value());
  EXPECT_EQ(choosePartitions(samples, std::nullopt, 8), 2);
}
