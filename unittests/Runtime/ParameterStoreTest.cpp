//===- ParameterStoreTest.cpp - Push, pull and collectives on MPI ---------===//
//
// Part of the Parallax project.
//
// Runs under mpirun (ctest starts it with 4 ranks, and with 2 simulated
// machines of 2 ranks): every rank pushes and pulls as generated code
// does, and checks the result against what one worker would compute from
// all the ranks' gradients. Partition ranges are uneven, rows repeat within
// and across ranks, and some ranks touch no row at all. Built a second
// time with PARALLAX_TEST_GPU_COLLECTIVES (ParallaxGpuCollectivesTests),
// its collectives go through a GPU program's NCCL path on the fake driver
// and NCCL of test/FakeCudaDriver.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include "Comm.h"
#include "CommThread.h"
#include "DeviceCollectives.h"
#include "Optimizers.h"
#include "ParameterStore.h"
#include "Partitions.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

using namespace parallax::runtime;

namespace {

/// A strided memref descriptor of rank R over a vector, as MLIR lays it out.
template <typename T, int R> struct Memref {
  T *allocated, *aligned;
  int64_t offset = 0, sizes[R], strides[R];
  Memref(std::vector<T> &data, std::array<int64_t, R> shape)
      : allocated(data.data()), aligned(data.data()) {
    int64_t stride = 1;
    for (int d = R - 1; d >= 0; --d) {
      sizes[d] = shape[d];
      strides[d] = stride;
      stride *= shape[d];
    }
  }
};

constexpr int64_t rows = 10, width = 3;
constexpr double lr = 0.5;
// lr, momentum, beta1, beta2, epsilon, weight_decay, lr_decay, nesterov.
constexpr ParallaxHyperParameters sgd{lr, 0, 0, 0, 0, 0, 0, 0};
constexpr ParallaxHyperParameters adagrad{lr, 0, 0, 0, 1e-10, 0, 0, 0};

std::vector<float> initialTable() {
  std::vector<float> table(rows * width);
  for (size_t i = 0; i < table.size(); ++i)
    table[i] = 0.1f * i;
  return table;
}

/// Rank r's row-sparse gradient: rows repeat within a rank (row 7 twice on
/// rank 1) and across ranks (row 2); rank 3 touches no row.
void gradientOf(int rank, std::vector<int64_t> &ids,
                std::vector<float> &values) {
  static const std::vector<std::vector<int64_t>> idsByRank = {
      {2, 9}, {7, 2, 7}, {0, 2}, {}};
  ids = idsByRank[rank % 4];
  values.clear();
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t j = 0; j < width; ++j)
      values.push_back(1.0f + rank + 0.25f * i + 0.5f * j);
}

/// The sum over every rank's gradient rows, per row.
std::map<int64_t, std::vector<double>> summedGradient() {
  std::map<int64_t, std::vector<double>> sum;
  for (int r = 0; r < world().size; ++r) {
    std::vector<int64_t> ids;
    std::vector<float> values;
    gradientOf(r, ids, values);
    for (size_t i = 0; i < ids.size(); ++i) {
      auto &row = sum[ids[i]];
      row.resize(width, 0.0);
      for (int64_t j = 0; j < width; ++j)
        row[j] += values[i * width + j];
    }
  }
  return sum;
}

std::vector<float> pullAll(std::vector<float> &table, int64_t partitions,
                           int64_t first) {
  std::vector<int64_t> every(rows);
  for (int64_t i = 0; i < rows; ++i)
    every[i] = rows - 1 - i; // any order
  std::vector<float> pulled(rows * width);
  Memref<float, 2> w(table, {rows, width}), out(pulled, {rows, width});
  Memref<int64_t, 1> ids(every, {rows});
  parallax_rt_pull_rows_f32("table", partitions, first, 2, &w, 1, &ids, 2,
                            &out);
  std::vector<float> byRow(rows * width);
  for (int64_t i = 0; i < rows; ++i)
    std::copy_n(pulled.begin() + i * width, width,
                byRow.begin() + every[i] * width);
  return byRow;
}

TEST(PartitioningTest, UnevenRangesCoverEveryRowOnce) {
  for (int64_t n : {1, 7, 10, 33})
    for (int64_t p = 1; p <= n; ++p) {
      Partitioning parts(n, p, 1);
      EXPECT_EQ(parts.begin(0), 0);
      EXPECT_EQ(parts.end(p - 1), n);
      for (int64_t q = 0; q < p; ++q) {
        int64_t size = parts.end(q) - parts.begin(q);
        EXPECT_TRUE(size == n / p || size == n / p + 1);
        for (int64_t row = parts.begin(q); row < parts.end(q); ++row)
          ASSERT_EQ(parts.partitionOf(row), q) << n << " rows, " << p;
      }
    }
  Partitioning parts(10, 4, 3);
  EXPECT_EQ(parts.ownerOf(0, 4), 3);
  EXPECT_EQ(parts.ownerOf(1, 4), 0);
  EXPECT_EQ(parts.ownerOfRow(9, 4), 2);
}

TEST(PartitioningTest, RepeatedRowsAreSummed) {
  std::vector<int64_t> ids{5, 1, 5, 0};
  std::vector<float> values{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(sumRepeatedRows(ids, values, 2), 3);
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 5}));
  EXPECT_EQ(values, (std::vector<float>{7, 8, 3, 4, 6, 8}));
}

class ParameterStoreTest : public ::testing::TestWithParam<int64_t> {};

// Partition counts 1..5 over 10 rows: uneven ranges, more partitions than
// ranks, first servers other than 0.
TEST_P(ParameterStoreTest, SparseSgdPushEqualsOneWorker) {
  int64_t partitions = GetParam(), first = partitions % 3;
  std::vector<float> table = initialTable();
  std::vector<int64_t> ids;
  std::vector<float> values;
  gradientOf(world().rank, ids, values);
  Memref<float, 2> w(table, {rows, width});
  Memref<int64_t, 1> idView(ids, {static_cast<int64_t>(ids.size())});
  Memref<float, 2> valueView(values, {static_cast<int64_t>(ids.size()), width});
  parallax_rt_load_batch(0);
  parallax_rt_push_sgd_sparse_f32("table", partitions, first, 2, &w, 1, &idView,
                                  2, &valueView, &sgd);
  std::vector<float> expected = initialTable();
  for (auto &[row, sum] : summedGradient())
    for (int64_t j = 0; j < width; ++j)
      expected[row * width + j] -= lr * sum[j] / world().size;
  std::vector<float> pulled = pullAll(table, partitions, first);
  for (int64_t i = 0; i < rows * width; ++i)
    EXPECT_NEAR(pulled[i], expected[i], 1e-5) << "element " << i;
}

TEST_P(ParameterStoreTest, SparseAdagradKeepsStateOnServers) {
  int64_t partitions = GetParam(), first = 1;
  std::vector<float> table = initialTable(), sum(rows * width, 0.0f);
  std::vector<int64_t> ids;
  std::vector<float> values;
  gradientOf(world().rank, ids, values);
  Memref<float, 2> w(table, {rows, width}), s(sum, {rows, width});
  Memref<int64_t, 1> idView(ids, {static_cast<int64_t>(ids.size())});
  Memref<float, 2> valueView(values, {static_cast<int64_t>(ids.size()), width});
  parallax_rt_load_batch(0);
  for (int step = 0; step < 2; ++step)
    parallax_rt_push_adagrad_sparse_f32("table", partitions, first, 2, &w, 2,
                                        &s, 1, &idView, 2, &valueView,
                                        &adagrad);
  std::vector<float> expected = initialTable(), expectedSum(rows * width, 0);
  for (int step = 0; step < 2; ++step)
    for (auto &[row, total] : summedGradient())
      for (int64_t j = 0; j < width; ++j) {
        double g = total[j] / world().size;
        expectedSum[row * width + j] += g * g;
        expected[row * width + j] -=
            lr * g / (std::sqrt(expectedSum[row * width + j]) + 1e-10);
      }
  // The checkpoint's view: every row, streamed to rank 0 in row order.
  auto streamed = [&](const char *name, const std::vector<float> &data) {
    std::vector<float> all;
    EXPECT_TRUE(
        streamPartitionsToRoot(name, partitions, first, data.data(), rows,
                               width, [&](const float *piece, int64_t floats) {
                                 all.insert(all.end(), piece, piece + floats);
                                 return true;
                               }));
    return all;
  };
  table = streamed("table", table);
  sum = streamed("table.sum", sum);
  if (world().rank != 0)
    return;
  ASSERT_EQ(table.size(), static_cast<size_t>(rows * width));
  ASSERT_EQ(sum.size(), static_cast<size_t>(rows * width));
  for (int64_t i = 0; i < rows * width; ++i) {
    EXPECT_NEAR(table[i], expected[i], 1e-5) << "element " << i;
    EXPECT_NEAR(sum[i], expectedSum[i], 1e-4) << "element " << i;
  }
}

// Every rule with state and weight decay, two steps: the servers' rows and
// state (streamed to rank 0, as a checkpoint reads them) equal the host's
// kernel applied to the averaged rows. In ParallaxGpuCollectivesTests the
// servers are the GPUs' kernels (DeviceParameterStore.cpp).
TEST_P(ParameterStoreTest, EveryRuleOnServersEqualsTheHostKernel) {
  int64_t partitions = GetParam(), first = 2;
  const rowkernels::Rule rules[] = {rowkernels::Sgd, rowkernels::Momentum,
                                    rowkernels::Adagrad, rowkernels::Adam,
                                    rowkernels::AdamW};
  for (rowkernels::Rule rule : rules) {
    std::string name = "table" + std::to_string(static_cast<int>(rule));
    std::vector<float> table = initialTable(), s0(rows * width, 0.25f),
                       s1(rows * width, 0.5f);
    std::vector<float> expected = table, e0 = s0, e1 = s1;
    std::vector<int64_t> ids;
    std::vector<float> values;
    gradientOf(world().rank, ids, values);
    for (int64_t step = 1; step <= 2; ++step) {
      Hyper h{0.1f, 0.9f, 0.8f, 0.95f, 1e-3f, 0.01f, 0.0f, step == 2, step};
      pushSparseGradient(rule, name.c_str(), partitions, first,
                         {table.data(), {s0.data(), s1.data()}}, rows, width,
                         ids.data(), static_cast<int64_t>(ids.size()),
                         values.data(), h);
      flushPushes();
      for (auto &[row, sum] : summedGradient()) {
        std::vector<float> g(width);
        for (int64_t j = 0; j < width; ++j)
          g[j] = static_cast<float>(sum[j]) / world().size;
        Slots at =
            Slots{expected.data(), {e0.data(), e1.data()}}.offset(row * width);
        hostKernel(rule)(at, g.data(), width, h);
      }
    }
    auto streamed = [&](const std::string &what,
                        const std::vector<float> &data) {
      std::vector<float> all;
      EXPECT_TRUE(streamPartitionsToRoot(
          what.c_str(), partitions, first, data.data(), rows, width,
          [&](const float *piece, int64_t floats) {
            all.insert(all.end(), piece, piece + floats);
            return true;
          }));
      return all;
    };
    table = streamed(name, table);
    s0 = streamed(name + ".s0", s0);
    s1 = streamed(name + ".s1", s1);
    if (world().rank != 0)
      continue;
    for (int64_t i = 0; i < rows * width; ++i) {
      EXPECT_NEAR(table[i], expected[i], 1e-5) << name << " element " << i;
      EXPECT_NEAR(s0[i], e0[i], 1e-5) << name << " state 0, element " << i;
      EXPECT_NEAR(s1[i], e1[i], 1e-5) << name << " state 1, element " << i;
    }
  }
}

TEST_P(ParameterStoreTest, DenseSgdPushAndWholePull) {
  int64_t partitions = GetParam(), first = 2;
  std::vector<float> table = initialTable(), gradient(rows * width);
  for (int64_t i = 0; i < rows * width; ++i)
    gradient[i] = (world().rank + 1) * 0.01f * i;
  Memref<float, 2> w(table, {rows, width}), g(gradient, {rows, width});
  parallax_rt_push_sgd_f32("table", partitions, first, 2, &w, 2, &g, &sgd);
  parallax_rt_pull_f32("table", partitions, first, 2, &w);
  double n = world().size, rankSum = n * (n + 1) / 2;
  for (int64_t i = 0; i < rows * width; ++i)
    EXPECT_NEAR(table[i], 0.1f * i - lr * rankSum * 0.01 * i / n, 1e-5);
}

/// Three variables of different widths and partitionings pushed in one
/// step (one exchange at the step's flush), then pulled together (one
/// exchange for the three, ids repeated and in any order): each equals
/// what one worker computes from every rank's rows.
TEST(ParameterStoreBatchTest, SeveralVariablesInOneExchange) {
  const World &wld = world();
  struct Table {
    const char *name;
    int64_t rows, width, partitions, first;
    std::vector<float> data;
  };
  std::vector<Table> tables = {
      {"a", 10, 3, 3, 1, {}}, {"b", 7, 1, 2, 0, {}}, {"c", 13, 5, 4, 2, {}}};
  auto gradientIds = [](const Table &t, int rank) {
    // Repeated rows within a rank, a negative id, rank 3 touches nothing.
    if (rank % 4 == 3)
      return std::vector<int64_t>{};
    return std::vector<int64_t>{(rank * 3) % t.rows, t.rows - 1,
                                (rank * 3) % t.rows, -2};
  };
  auto gradientValue = [](int rank, size_t i, int64_t j) {
    return 0.5f + rank + 0.25f * i + 0.125f * j;
  };
  for (Table &t : tables) {
    t.data.resize(t.rows * t.width);
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = 0.01f * i;
    std::vector<int64_t> ids = gradientIds(t, wld.rank);
    std::vector<float> values;
    for (size_t i = 0; i < ids.size(); ++i)
      for (int64_t j = 0; j < t.width; ++j)
        values.push_back(gradientValue(wld.rank, i, j));
    Memref<float, 2> w(t.data, {t.rows, t.width});
    Memref<int64_t, 1> idView(ids, {static_cast<int64_t>(ids.size())});
    Memref<float, 2> valueView(values,
                               {static_cast<int64_t>(ids.size()), t.width});
    parallax_rt_push_sgd_sparse_f32(t.name, t.partitions, t.first, 2, &w, 1,
                                    &idView, 2, &valueView, &sgd);
  }
  // As generated code does: the pushes go after the last one, while a
  // dense bucket is in flight; the pull waits for them.
  parallax_rt_push_send();
  std::vector<float> dense(1 << 18, 1.0f), denseOut(dense.size());
  Memref<float, 1> denseIn(dense, {static_cast<int64_t>(dense.size())}),
      denseRef(denseOut, {static_cast<int64_t>(dense.size())});
  parallax_rt_allreduce_add_f32(40, "dense", 1, &denseIn, 1, &denseRef);
  parallax_rt_allreduce_start(40, PARALLAX_RT_REDUCE_SUM);
  parallax_rt_allreduce_wait(40);
  EXPECT_EQ(denseOut.back(), static_cast<float>(wld.size));
  std::vector<std::vector<int64_t>> requested;
  std::vector<std::vector<float>> pulled;
  for (const Table &t : tables) {
    requested.emplace_back();
    for (int64_t i = 0; i < t.rows; ++i)
      requested.back().push_back((i * 5 + wld.rank) % t.rows);
    requested.back().push_back(requested.back().front());
    pulled.emplace_back(requested.back().size() * t.width, -1.0f);
  }
  for (size_t v = 0; v < tables.size(); ++v) {
    Table &t = tables[v];
    Memref<float, 2> w(t.data, {t.rows, t.width});
    Memref<int64_t, 1> ids(requested[v],
                           {static_cast<int64_t>(requested[v].size())});
    Memref<float, 2> out(pulled[v],
                         {static_cast<int64_t>(requested[v].size()), t.width});
    parallax_rt_pull_rows_request_f32(t.name, t.partitions, t.first, 2, &w, 1,
                                      &ids, 2, &out);
  }
  parallax_rt_pull_rows_complete();
  for (size_t v = 0; v < tables.size(); ++v) {
    const Table &t = tables[v];
    std::vector<double> expected(t.rows * t.width);
    for (size_t i = 0; i < expected.size(); ++i)
      expected[i] = 0.01f * i;
    for (int r = 0; r < wld.size; ++r) {
      std::vector<int64_t> ids = gradientIds(t, r);
      for (size_t i = 0; i < ids.size(); ++i) {
        int64_t row = ids[i] < 0 ? ids[i] + t.rows : ids[i];
        for (int64_t j = 0; j < t.width; ++j)
          expected[row * t.width + j] -= lr * gradientValue(r, i, j) / wld.size;
      }
    }
    for (size_t i = 0; i < requested[v].size(); ++i)
      for (int64_t j = 0; j < t.width; ++j)
        EXPECT_NEAR(pulled[v][i * t.width + j],
                    expected[requested[v][i] * t.width + j], 1e-5)
            << t.name << " row " << requested[v][i];
  }
}

/// Dense variables on servers pushed in one step, beside a sparse one,
/// go in one exchange: every partition to its owner, which averages and
/// applies the optimizer (Adagrad's state stays with it), then every
/// updated partition to every rank. After the exchange every rank holds
/// every row as one worker computes it, and the pulls that follow move
/// nothing. The first pull of a run, before any push, broadcasts what
/// each owner holds. Two rounds: a few floats (one MPI reduce-scatter and
/// allgather), then the ring's sizes; partitions are uneven and some
/// ranks serve nothing.
TEST(ParameterStoreBatchTest, DensePushesInOneExchangeLeaveEveryRowEverywhere) {
  const World &wld = world();
  struct Dense {
    std::string name;
    int64_t rows, width, partitions, first;
    bool adagrad;
    std::vector<float> data, sum;
  };
  auto gradientValue = [](int rank, int64_t i, int step) {
    return 0.01f * (rank + 1) * ((i % 17) - 8) + 0.5f * step;
  };
  std::vector<Dense> all = {{"dense.a", 10, 3, 3, 1, true, {}, {}},
                            {"dense.b", 7, 1, 1, 2, false, {}, {}},
                            {"dense.c", 5000, 8, 4, 0, false, {}, {}}};
  for (Dense &d : all) {
    d.data.resize(d.rows * d.width);
    d.sum.assign(d.data.size(), 0.0f);
    Partitioning parts(d.rows, d.partitions, d.first);
    // As loaded at start-up: a rank holds only the partitions it serves.
    for (int64_t p = 0; p < parts.partitions; ++p)
      for (int64_t i = parts.begin(p) * d.width; i < parts.end(p) * d.width;
           ++i)
        d.data[i] = parts.ownerOf(p, wld.size) == wld.rank ? 0.01f * i : -7;
  }
  auto pull = [&](Dense &d) {
    Memref<float, 2> w(d.data, {d.rows, d.width});
    parallax_rt_pull_f32(d.name.c_str(), d.partitions, d.first, 2, &w);
  };
  auto expectOneWorker = [&](const Dense &d, const std::vector<double> &e,
                             const char *when) {
    for (size_t i = 0; i < e.size(); ++i)
      ASSERT_NEAR(d.data[i], e[i], 1e-4 * (1 + std::abs(e[i])))
          << d.name << " element " << i << " on rank " << wld.rank << " "
          << when;
  };
  std::vector<std::vector<double>> expected, expectedSum;
  for (Dense &d : all) {
    pull(d);
    expected.emplace_back(d.data.size());
    expectedSum.emplace_back(d.data.size(), 0.0);
    for (size_t i = 0; i < d.data.size(); ++i)
      expected.back()[i] = 0.01f * i;
    expectOneWorker(d, expected.back(), "after the first pull");
  }
  for (int step = 0; step < 2; ++step) {
    // Step 0 pushes a and b (a few floats), step 1 all three (the ring).
    size_t pushed = step == 0 ? 2 : 3;
    std::vector<std::vector<float>> gradients(pushed);
    for (size_t v = 0; v < pushed; ++v) {
      Dense &d = all[v];
      std::vector<float> &g = gradients[v];
      for (int64_t i = 0; i < d.rows * d.width; ++i)
        g.push_back(gradientValue(wld.rank, i, step));
      Memref<float, 2> w(d.data, {d.rows, d.width}), gv(g, {d.rows, d.width});
      if (d.adagrad) {
        Memref<float, 2> state(d.sum, {d.rows, d.width});
        parallax_rt_push_adagrad_f32(d.name.c_str(), d.partitions, d.first, 2,
                                     &w, 2, &state, 2, &gv, &adagrad);
      } else {
        parallax_rt_push_sgd_f32(d.name.c_str(), d.partitions, d.first, 2, &w,
                                 2, &gv, &sgd);
      }
      g.assign(g.size(), 1e9f); // the push keeps a copy
      // One worker on every rank's gradient.
      for (int64_t i = 0; i < d.rows * d.width; ++i) {
        double mean = 0;
        for (int r = 0; r < wld.size; ++r)
          mean += gradientValue(r, i, step) / double(wld.size);
        if (d.adagrad) {
          expectedSum[v][i] += mean * mean;
          expected[v][i] -= lr * mean / (std::sqrt(expectedSum[v][i]) + 1e-10);
        } else {
          expected[v][i] -= lr * mean;
        }
      }
    }
    // A sparse push in the same exchange.
    std::vector<float> table = initialTable();
    std::vector<int64_t> ids;
    std::vector<float> values;
    gradientOf(wld.rank, ids, values);
    Memref<float, 2> tw(table, {rows, width});
    Memref<int64_t, 1> idView(ids, {static_cast<int64_t>(ids.size())});
    Memref<float, 2> valueView(values,
                               {static_cast<int64_t>(ids.size()), width});
    parallax_rt_push_sgd_sparse_f32("dense.sparse", 2, 1, 2, &tw, 1, &idView, 2,
                                    &valueView, &sgd);
    parallax_rt_push_send();
    flushPushes();
    takeStepTraffic();
    for (size_t v = 0; v < all.size(); ++v)
      expectOneWorker(all[v], expected[v], "after the exchange");
    for (Dense &d : all)
      pull(d);
    for (const auto &[variable, traffic] : takeStepTraffic()) {
      if (variable.rfind("dense.", 0) == 0) {
        EXPECT_EQ(traffic.sent + traffic.received, 0)
            << variable << ": a pull after the exchange moved bytes";
      }
    }
    for (size_t v = 0; v < all.size(); ++v)
      expectOneWorker(all[v], expected[v], "after the pull");
    std::map<int64_t, std::vector<double>> sum = summedGradient();
    std::vector<float> mine = pullAll(table, 2, 1);
    for (const auto &[row, rowSum] : sum)
      for (int64_t j = 0; j < width; ++j)
        EXPECT_NEAR(mine[row * width + j],
                    0.1f * (row * width + j) - lr * rowSum[j] / wld.size, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Partitions, ParameterStoreTest,
                         ::testing::Values(1, 2, 3, 4, 5));

TEST(CollectivesTest, BucketedMeanAndAllGather) {
  const World &wld = world();
  std::vector<float> a{1.0f * wld.rank, 2.0f}, b{3.0f, 4.0f * wld.rank, 5.0f};
  std::vector<float> ra(2), rb(3);
  Memref<float, 1> ia(a, {2}), ib(b, {3}), oa(ra, {2}), ob(rb, {3});
  parallax_rt_allreduce_add_f32(0, "a", 1, &ia, 1, &oa);
  parallax_rt_allreduce_add_f32(0, "b", 1, &ib, 1, &ob);
  parallax_rt_allreduce_start(0, /*mean=*/1);
  parallax_rt_allreduce_wait(0);
  double meanRank = (wld.size - 1) / 2.0;
  EXPECT_FLOAT_EQ(ra[0], meanRank);
  EXPECT_FLOAT_EQ(ra[1], 2.0f);
  EXPECT_FLOAT_EQ(rb[1], 4.0f * meanRank);

  std::vector<int64_t> mine{wld.rank, 10 + wld.rank}, all(2 * wld.size);
  Memref<int64_t, 1> in(mine, {2}), out(all, {2 * wld.size});
  parallax_rt_allgather_i64("ids", 1, &in, 1, &out);
  for (int r = 0; r < wld.size; ++r) {
    EXPECT_EQ(all[2 * r], r);
    EXPECT_EQ(all[2 * r + 1], 10 + r);
  }
}

// --parallax-allreduce-in-place passes a gradient's buffer as its own
// result: one worker leaves it as it is, several write the reduction into
// it.
TEST(CollectivesTest, GradientReducedIntoItsOwnBuffer) {
  const World &wld = world();
  std::vector<float> g(1000);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = static_cast<float>(i) + wld.rank;
  Memref<float, 1> view(g, {static_cast<int64_t>(g.size())});
  parallax_rt_allreduce_add_f32(70, "g", 1, &view, 1, &view);
  parallax_rt_allreduce_start(70, PARALLAX_RT_REDUCE_SUM);
  parallax_rt_allreduce_wait(70);
  float ranks = (wld.size - 1) * wld.size / 2.0f;
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_FLOAT_EQ(g[i], i * wld.size + ranks) << "element " << i;
}

/// Rank r's value at element i: small integers, so that a sum is exact
/// in any order.
float elementOf(int rank, int64_t i) {
  return static_cast<float>((i * 7 + rank * 3) % 23) - 11.0f;
}

/// Buckets below and above the ring's threshold, with counts that do not
/// divide among the ranks, chunks of several ring segments (one chunk a
/// segment longer than the others: a rank then sends more segments than
/// it receives, or fewer), every reduction, several buckets in flight at
/// once and waited for out of order: each result equals what one worker
/// computes from every rank's values.
TEST(CollectivesTest, BucketsOfEverySizeAndReduction) {
  const World &wld = world();
  const std::vector<int64_t> counts = {1,
                                       5,
                                       kRingMinBytes / 4 - 1,
                                       kRingMinBytes / 4,
                                       kRingMinBytes / 4 * 3 + 1,
                                       1 << 20,
                                       2 * kRingSegmentFloats * wld.size + 1};
  for (int32_t reduction : {PARALLAX_RT_REDUCE_SUM, PARALLAX_RT_REDUCE_MEAN,
                            PARALLAX_RT_REDUCE_MAX, PARALLAX_RT_REDUCE_MIN}) {
    std::vector<std::vector<float>> in, out;
    std::vector<Memref<float, 1>> inRef, outRef;
    for (int64_t count : counts) {
      in.emplace_back(count);
      out.emplace_back(count, -1.0f);
      for (int64_t i = 0; i < count; ++i)
        in.back()[i] = elementOf(wld.rank, i);
    }
    for (size_t b = 0; b < in.size(); ++b) {
      inRef.emplace_back(in[b], std::array<int64_t, 1>{counts[b]});
      outRef.emplace_back(out[b], std::array<int64_t, 1>{counts[b]});
    }
    for (size_t b = 0; b < in.size(); ++b) {
      parallax_rt_allreduce_add_f32(10 + b, "g", 1, &inRef[b], 1, &outRef[b]);
      parallax_rt_allreduce_start(10 + b, reduction);
    }
    for (size_t b = in.size(); b-- > 0;)
      parallax_rt_allreduce_wait(10 + b);
    for (size_t b = 0; b < in.size(); ++b) {
      int64_t wrong = 0;
      for (int64_t i = 0; i < counts[b]; ++i) {
        float expected = elementOf(0, i);
        double sum = 0;
        for (int r = 0; r < wld.size; ++r) {
          float v = elementOf(r, i);
          sum += v;
          if (reduction == PARALLAX_RT_REDUCE_MAX)
            expected = std::max(expected, v);
          if (reduction == PARALLAX_RT_REDUCE_MIN)
            expected = std::min(expected, v);
        }
        if (reduction == PARALLAX_RT_REDUCE_SUM)
          expected = static_cast<float>(sum);
        if (reduction == PARALLAX_RT_REDUCE_MEAN)
          expected = static_cast<float>(sum) * (1.0f / wld.size);
        wrong += out[b][i] != expected;
      }
      EXPECT_EQ(wrong, 0) << "reduction " << reduction << ", " << counts[b]
                          << " elements";
    }
  }
}

/// `values` hashed bit for bit, gathered from every rank: equal where every
/// rank holds the same bits.
std::vector<uint64_t> hashesOfEveryRank(const std::vector<float> &values) {
  uint64_t hash = 1469598103934665603ull;
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
  }
  std::vector<uint64_t> hashes(world().size);
  MPI_Allgather(&hash, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T,
                world().comm);
  return hashes;
}

/// A ring's sums of inexact values still leave every rank with the same
/// bits (replicated variables stay replicas).
TEST(CollectivesTest, RingLeavesEveryRankTheSameBits) {
  const World &wld = world();
  const int64_t count = 100003;
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = 1.0f / static_cast<float>(1 + (i + 13 * wld.rank) % 997);
  allreduceInPlace(values.data(), count, PARALLAX_RT_REDUCE_SUM,
                   wld.collectives);
  std::vector<uint64_t> hashes = hashesOfEveryRank(values);
  for (int r = 1; r < wld.size; ++r)
    EXPECT_EQ(hashes[r], hashes[0]) << "rank " << r;
}

/// Buckets are reduced by machine exactly where there are several machines
/// of the same number of ranks, more than one (PARALLAX_RANKS_PER_MACHINE
/// makes them), and --verbose says so; inexact sums still leave every rank
/// the same bits, close to the exact sum; the traffic counted is what each
/// rank moves.
TEST(CollectivesTest, BucketsByMachineWhereMachinesAreAlike) {
  const World &wld = world();
  int g = wld.localSize, m = wld.machines;
  const char *perMachine = std::getenv("PARALLAX_RANKS_PER_MACHINE");
  bool alike = perMachine && wld.size % std::atoi(perMachine) == 0;
  bool expected = alike && m > 1 && g > 1;
  EXPECT_EQ(wld.machinesAlike(), expected);
  if (!commThreadEnabled())
    GTEST_SKIP() << describeCommunication();
  // Chunks across machines both above and below the ring's threshold.
  for (int64_t count : {int64_t{100003}, kRingMinBytes / 4}) {
    // Two variables in one bucket: the first tenth, and the rest.
    int64_t first = count / 10;
    std::vector<float> gradientA(first), gradientB(count - first);
    for (int64_t i = 0; i < count; ++i)
      (i < first ? gradientA[i] : gradientB[i - first]) =
          1.0f / static_cast<float>(1 + (i + 13 * wld.rank) % 997);
    std::vector<float> resultA(first), resultB(count - first);
    Memref<float, 1> inA(gradientA, {first}), inB(gradientB, {count - first}),
        outA(resultA, {first}), outB(resultB, {count - first});
    takeStepTraffic();
    parallax_rt_allreduce_add_f32(30, "a", 1, &inA, 1, &outA);
    parallax_rt_allreduce_add_f32(30, "b", 1, &inB, 1, &outB);
    parallax_rt_allreduce_start(30, PARALLAX_RT_REDUCE_SUM);
    parallax_rt_allreduce_wait(30);
    int64_t counted = 0;
    for (const auto &[variable, traffic] : takeStepTraffic()) {
      EXPECT_EQ(traffic.sent, traffic.received) << variable;
      counted += traffic.sent;
    }
    std::vector<float> values = resultA;
    values.insert(values.end(), resultB.begin(), resultB.end());
    std::vector<uint64_t> hashes = hashesOfEveryRank(values);
    for (int r = 1; r < wld.size; ++r)
      EXPECT_EQ(hashes[r], hashes[0]) << "rank " << r << ", " << count;
    int64_t far = 0;
    for (int64_t i = 0; i < count; ++i) {
      double exact = 0;
      for (int r = 0; r < wld.size; ++r)
        exact += 1.0 / (1 + (i + 13 * r) % 997);
      far += std::abs(values[i] - exact) > 1e-6 * exact;
    }
    EXPECT_EQ(far, 0) << count << " elements";
    // By machine a rank moves 2 (G-1)/G + 2 (M-1)/(M G) = 2 (N-1)/N of the
    // bytes, as around one ring.
    int64_t bytes = count * 4, n = wld.size;
    EXPECT_NEAR(counted, 2 * (n - 1) * bytes / n, 2) << count << " elements";
    EXPECT_EQ(describeCommunication().find("machines first") !=
                  std::string::npos,
              expected);
  }
}

/// The dense parameter store's reduce-scatter and allgather over every
/// rank, by machine where machines are alike, with segments of unequal
/// sizes (one empty): each rank's segment ends up summed over every rank,
/// and the allgather gives every rank each segment as its owner left it.
/// Small integers, so that every sum is exact in any order.
TEST(CollectivesTest, SegmentsByMachineReduceAndGather) {
  const World &wld = world();
  for (int64_t scale : {int64_t{1}, int64_t{40}}) { // under and over 64 KiB
    std::vector<int64_t> counts;
    for (int r = 0; r < wld.size; ++r)
      counts.push_back(r == 1 ? 0 : scale * (500 + 333 * r));
    std::vector<int64_t> offsets = displacements(counts);
    int64_t total = offsets.back() + counts.back();
    std::vector<float> data(total);
    for (int64_t i = 0; i < total; ++i)
      data[i] = elementOf(wld.rank, i);
    for (bool byThread : {false, true}) {
      std::vector<float> values = data;
      // The pushes' thread's communicators (on that thread where it runs),
      // or the main thread's.
      MPI_Comm all = byThread ? wld.pushes : wld.comm,
               machine = byThread ? wld.pushesLocal : wld.local,
               across = byThread ? wld.pushesAcross : wld.across;
      // False where the communication thread's job did not finish.
      auto run = [&](std::function<void()> collective) {
        if (!byThread || !commThreadEnabled()) {
          collective();
          return true;
        }
        return waitForCommJob(CommLane::Pushes,
                              submitToCommThread(CommLane::Pushes, collective),
                              120.0);
      };
      ASSERT_TRUE(run([&] {
        reduceScatterByMachine(values.data(), counts, all, machine, across,
                               pollCommRequests);
      }));
      int64_t wrong = 0;
      for (int64_t i = offsets[wld.rank];
           i < offsets[wld.rank] + counts[wld.rank]; ++i) {
        float sum = 0;
        for (int r = 0; r < wld.size; ++r)
          sum += elementOf(r, i);
        wrong += values[i] != sum;
      }
      EXPECT_EQ(wrong, 0) << "reduce-scatter, scale " << scale;
      // The owner's update: its segment becomes 1000 + its rank.
      std::fill_n(values.begin() + offsets[wld.rank], counts[wld.rank],
                  1000.0f + wld.rank);
      ASSERT_TRUE(run([&] {
        allgatherByMachine(values.data(), counts, all, machine, across,
                           pollCommRequests);
      }));
      wrong = 0;
      for (int r = 0; r < wld.size; ++r)
        for (int64_t i = offsets[r]; i < offsets[r] + counts[r]; ++i)
          wrong += values[i] != 1000.0f + r;
      EXPECT_EQ(wrong, 0) << "allgather, scale " << scale;
    }
  }
}

/// The communication thread completes a large AllReduce while the main
/// thread makes no MPI call at all (it only blocks on the job). Without
/// the thread nothing would drive the transfer and the wait would end
/// only at its 120 s limit.
TEST(CollectivesTest, CommThreadProgressesWithoutMainThreadMPICalls) {
  const World &wld = world();
  if (!commThreadEnabled())
    GTEST_SKIP() << describeCommunication();
  std::vector<float> values(4 << 20, 1.0f);
  uint64_t ticket = submitToCommThread(CommLane::Buckets, [&] {
    allreduceInPlace(values.data(), values.size(), PARALLAX_RT_REDUCE_SUM,
                     wld.collectives);
  });
  ASSERT_TRUE(waitForCommJob(CommLane::Buckets, ticket, 120.0));
  EXPECT_EQ(values.front(), static_cast<float>(wld.size));
  EXPECT_EQ(values.back(), static_cast<float>(wld.size));
}

TEST(CollectivesTest, MachinesFollowTheOverride) {
  const World &wld = world();
  if (const char *perMachine = std::getenv("PARALLAX_RANKS_PER_MACHINE")) {
    int g = std::atoi(perMachine);
    EXPECT_EQ(wld.machine, wld.rank / g);
    EXPECT_EQ(wld.localRank, wld.rank % g);
    EXPECT_EQ(wld.machines, (wld.size + g - 1) / g);
  } else {
    EXPECT_EQ(wld.machines, 1); // one host
  }
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
#ifdef PARALLAX_TEST_GPU_COLLECTIVES
  // As a GPU program's driver does when it loads.
  setDeviceCollectivesFactory(makeNcclCollectives);
#endif
  initWorld(&argc, &argv);
#ifdef PARALLAX_TEST_GPU_COLLECTIVES
  // The test says which way its ranks must communicate.
  const char *expected = std::getenv("PARALLAX_EXPECT_GPU_COMM");
  if (!expected || (deviceCollectives() != nullptr) !=
                       (std::strcmp(expected, "nccl") == 0)) {
    std::fprintf(stderr,
                 "rank %d: expected PARALLAX_EXPECT_GPU_COMM=%s, "
                 "got %s\n",
                 world().rank, expected ? expected : "(unset)",
                 deviceCollectives() ? "NCCL" : "MPI");
    return 1;
  }
#endif
  // Only rank 0 prints the report; every rank's failures fail its exit code.
  if (world().rank != 0)
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()
            ->listeners()
            .default_result_printer());
  int status = RUN_ALL_TESTS();
  int worst = status;
  if (world().mpi)
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, world().comm);
  finalizeWorld();
  return worst;
}
