//===- DeviceParameterStore.cpp - Push and pull of rows on the GPUs -------===//
//
// Part of the Parallax project.
//
// The parameter store of a GPU program whose workers communicate through
// NCCL. Its partitions are the owners' device memory (each rank keeps the
// variable's buffer, as on the CPU; the rows it serves are current), and
// no row goes through the host:
// - a push is summed by row on the pushing GPU into one buffer ordered by
//   owner (a kernel; the host sorts only the ids, which it reads anyway);
// - the step's pushes go in one exchange: the ids through MPI (the owners'
//   host needs them to order the sums), the rows through one NCCL group of
//   ncclSend/ncclRecv, every variable at once (an unequal all-to-all);
// - each owner sums every contribution to a row, divides by the workers
//   and updates the row and its optimizer state in one kernel per variable
//   (rowkernels::RowUpdate, the host's rule element by element);
// - a pull sends the distinct ids asked for to their owners (MPI), which
//   gather the rows on their GPU (a kernel) and send them back (one NCCL
//   group); a kernel puts each row where it was asked for;
// - where a machine has several ranks, its first rank sums their rows
//   (ids through MPI, rows through NCCL) before they go to their owners;
// - dense variables' partitions are reduced onto their owners, updated
//   there and broadcast back (NCCL groups of reduces and broadcasts).
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "DeviceCollectives.h"
#include "ParameterStore.h"
#include "Support.h"
#include "Trace.h"

#include <algorithm>
#include <numeric>

using namespace parallax::runtime;

namespace {

using Transfer = DeviceCollectives::Transfer;

/// A device buffer for `count` elements of T, released with its owner.
template <typename T> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int64_t count) {
    if (count > 0)
      data_ = static_cast<T *>(device().allocate(count * int64_t(sizeof(T))));
  }
  /// A copy of `values` on the device.
  explicit DeviceBuffer(const std::vector<T> &values)
      : DeviceBuffer(static_cast<int64_t>(values.size())) {
    if (data_)
      device().upload(data_, values.data(), values.size() * sizeof(T));
  }
  DeviceBuffer(DeviceBuffer &&other) noexcept : data_(other.data_) {
    other.data_ = nullptr;
  }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~DeviceBuffer() {
    // Back to the pool at once: whatever reuses it queues after the work
    // queued on it. Past the collectives' end (the program exiting), it
    // is left to the driver.
    if (data_ && deviceCollectives())
      device().release(data_);
  }
  T *data() const { return data_; }

  static DeviceCollectives &device() { return *deviceCollectives(); }

private:
  T *data_ = nullptr;
};

/// The index arrays of a round of kernels (positions, offsets, rows),
/// copied to the device in one upload.
class DeviceIndices {
public:
  /// Adds `values`; returns their handle for `at`.
  size_t add(const std::vector<int64_t> &values) {
    starts.push_back(host.size());
    host.insert(host.end(), values.begin(), values.end());
    return starts.size() - 1;
  }
  /// Queues the copy of everything added.
  void upload() { device = DeviceBuffer<int64_t>(host); }
  /// Where the values added as `handle` are on the device, once uploaded.
  const int64_t *at(size_t handle) const {
    return device.data() + starts[handle];
  }

private:
  std::vector<int64_t> host;
  std::vector<size_t> starts;
  DeviceBuffer<int64_t> device;
};

/// A push summed on this GPU, waiting for the step's exchange.
struct DevicePush : PushTarget {
  /// Its distinct rows by owner (ascending within each), and their sums
  /// in that order.
  std::vector<std::vector<int64_t>> rowsByOwner;
  DeviceBuffer<float> sums;
};
std::vector<DevicePush> pendingDevicePushes;

/// A dense push waiting for the step's exchange: a copy of the gradient.
struct DeviceDensePush : PushTarget {
  DeviceBuffer<float> gradient;
};
std::vector<DeviceDensePush> pendingDeviceDensePushes;

int64_t rowBytes(int64_t width) { return width * int64_t(sizeof(float)); }

/// Sums `push`'s rows `rows` (their values at `source`, row i at i) by row
/// into a new buffer ordered by owner, then by row, and says which rows it
/// holds for each owner: one kernel.
void sumByOwner(DevicePush &push, const std::vector<int64_t> &rows,
                const float *source) {
  const World &w = world();
  auto ownerAndRow = [&](int64_t i) {
    return std::make_pair(push.parts.ownerOfRow(rows[i], w.size), rows[i]);
  };
  Segments segments =
      segmentsBy(static_cast<int64_t>(rows.size()), ownerAndRow);
  int64_t distinct = static_cast<int64_t>(segments.offsets.size()) - 1;
  push.rowsByOwner.assign(w.size, {});
  for (int64_t s = 0; s < distinct; ++s) {
    auto [owner, row] = ownerAndRow(segments.positions[segments.offsets[s]]);
    push.rowsByOwner[owner].push_back(row);
  }
  DeviceIndices indices;
  size_t positions = indices.add(segments.positions),
         offsets = indices.add(segments.offsets);
  indices.upload();
  push.sums = DeviceBuffer<float>(distinct * push.width);
  deviceCollectives()->sumRows({source, indices.at(positions),
                                indices.at(offsets), push.sums.data(), distinct,
                                push.width, 1.0f});
}

/// Where each rank's part starts in rows laid out rank after rank.
std::vector<int64_t> startsOf(const std::vector<std::vector<int64_t>> &parts) {
  std::vector<int64_t> starts(parts.size() + 1, 0);
  for (size_t r = 0; r < parts.size(); ++r)
    starts[r + 1] = starts[r] + static_cast<int64_t>(parts[r].size());
  return starts;
}

/// The global ranks of this machine's ranks, by local rank (asked once, at
/// the first exchange, which every rank reaches).
const std::vector<int> &machineRanks() {
  static const std::vector<int> ranks = [] {
    const World &w = world();
    std::vector<int> all(w.localSize);
    MPI_Request request;
    checkMPI(MPI_Iallgather(&w.rank, 1, MPI_INT, all.data(), 1, MPI_INT,
                            w.local, &request),
             "MPI_Iallgather");
    waitFor(request, "the ranks of this machine");
    return all;
  }();
  return ranks;
}

/// Sums every push's rows over the ranks of this machine on its first
/// rank, as the MPI path does before rows cross machines: the ids gathered
/// there through MPI (counts, then ids), the rows through one NCCL group,
/// then one sum kernel per variable. The other ranks are left with no rows.
void aggregateOnMachine(std::vector<DevicePush> &pushes) {
  const World &w = world();
  const std::vector<int> &ranks = machineRanks();
  bool leading = w.localRank == 0;
  size_t variables = pushes.size();
  std::vector<int> mine(variables), counts(w.localSize * variables);
  std::vector<int64_t> flat;
  for (size_t v = 0; v < variables; ++v) {
    size_t before = flat.size();
    for (const std::vector<int64_t> &rows : pushes[v].rowsByOwner)
      flat.insert(flat.end(), rows.begin(), rows.end());
    mine[v] = mpiCount(flat.size() - before, "a push");
  }
  MPI_Request request;
  checkMPI(MPI_Igather(mine.data(), static_cast<int>(variables), MPI_INT,
                       counts.data(), static_cast<int>(variables), MPI_INT, 0,
                       w.local, &request),
           "MPI_Igather");
  waitFor(request, "the machine's row counts");
  std::vector<int> perRank(w.localSize, 0);
  for (int r = 0; r < w.localSize; ++r)
    for (size_t v = 0; v < variables; ++v)
      perRank[r] += counts[r * variables + v];
  std::vector<int> offsets = displacements(perRank);
  std::vector<int64_t> gathered(leading ? offsets.back() + perRank.back() : 0);
  checkMPI(MPI_Igatherv(flat.data(), mpiCount(flat.size(), "a push"),
                        MPI_INT64_T, gathered.data(), perRank.data(),
                        offsets.data(), MPI_INT64_T, 0, w.local, &request),
           "MPI_Igatherv");
  waitFor(request, "the machine's row ids");

  // Each rank's rows after the one before, variable by variable.
  std::vector<std::vector<int64_t>> rowsOf(variables);
  std::vector<DeviceBuffer<float>> all(variables);
  std::vector<Transfer> sends, receives;
  for (size_t v = 0; v < variables; ++v) {
    DevicePush &push = pushes[v];
    sends.push_back(
        {ranks[0], push.sums.data(), mine[v] * rowBytes(push.width)});
    if (!leading)
      continue;
    int64_t total = 0;
    for (int r = 0; r < w.localSize; ++r)
      total += counts[r * variables + v];
    all[v] = DeviceBuffer<float>(total * push.width);
    int64_t at = 0;
    for (int r = 0; r < w.localSize; ++r) {
      int64_t first = offsets[r];
      for (size_t u = 0; u < v; ++u)
        first += counts[r * variables + u];
      int64_t n = counts[r * variables + v];
      rowsOf[v].insert(rowsOf[v].end(), gathered.begin() + first,
                       gathered.begin() + first + n);
      receives.push_back({ranks[r], all[v].data() + at * push.width,
                          n * rowBytes(push.width)});
      at += n;
    }
  }
  deviceCollectives()->exchange(sends, receives);

  int64_t idBytes = int64_t(sizeof(int64_t));
  for (size_t v = 0; v < variables; ++v) {
    DevicePush &push = pushes[v];
    int64_t bytesPerRow = rowBytes(push.width) + idBytes;
    if (!leading) {
      account(push.name, mine[v] * bytesPerRow, 0);
      push.rowsByOwner.assign(w.size, {});
      push.sums = DeviceBuffer<float>();
      continue;
    }
    account(push.name, 0,
            (static_cast<int64_t>(rowsOf[v].size()) - mine[v]) * bytesPerRow);
    sumByOwner(push, rowsOf[v], all[v].data());
  }
}

} // namespace

void parallax::runtime::queueDeviceSparsePush(
    rowkernels::Rule rule, const char *name, const Partitioning &parts,
    const Slots &variable, int64_t width, const std::vector<int64_t> &rows,
    const float *values, const Hyper &h) {
  DevicePush push{{rule, name, parts, variable, width, h}, {}, {}};
  sumByOwner(push, rows, values);
  pendingDevicePushes.push_back(std::move(push));
}

void parallax::runtime::queueDeviceDensePush(
    rowkernels::Rule rule, const char *name, const Partitioning &parts,
    const Slots &variable, int64_t width, const float *gradient,
    const Hyper &h) {
  int64_t count = parts.rows * width;
  DeviceDensePush push{{rule, name, parts, variable, width, h},
                       DeviceBuffer<float>(count)};
  deviceCollectives()->copy(push.gradient.data(), gradient,
                            count * int64_t(sizeof(float)));
  pendingDeviceDensePushes.push_back(std::move(push));
}

/// The dense pushes' exchange: every partition laid out by owner, reduced
/// onto its owner, updated there, broadcast back.
static void exchangeDeviceDensePushes(std::vector<DeviceDensePush> &pushes) {
  const World &w = world();
  DeviceCollectives &device = *deviceCollectives();
  DenseLayout layout = layOutByOwner(pushes, w.size);
  DeviceBuffer<float> buffer(layout.total);
  for (const DensePiece &piece : layout.pieces) {
    const DeviceDensePush &push = pushes[piece.variable];
    device.copy(buffer.data() + piece.at,
                push.gradient.data() + piece.firstRow * push.width,
                piece.rows * rowBytes(push.width));
  }
  device.reduceSegments(buffer.data(), layout.counts);
  float scale = 1.0f / w.size;
  for (const DensePiece &piece : layout.pieces) {
    if (piece.owner != w.rank)
      continue;
    const DeviceDensePush &push = pushes[piece.variable];
    Slots rows = push.variable.offset(piece.firstRow * push.width);
    float *segment = buffer.data() + piece.at;
    device.updateRows(
        {{segment, nullptr, nullptr, nullptr, piece.rows, push.width, scale},
         nullptr,
         rows.w,
         rows.state[0],
         rows.state[1],
         push.rule,
         ruleScalars(push.rule, push.h)});
    device.copy(segment, rows.w, piece.rows * rowBytes(push.width));
  }
  device.broadcastSegments(buffer.data(), layout.counts);
  for (const DensePiece &piece : layout.pieces) {
    const DeviceDensePush &push = pushes[piece.variable];
    if (piece.owner != w.rank)
      device.copy(push.variable.w + piece.firstRow * push.width,
                  buffer.data() + piece.at, piece.rows * rowBytes(push.width));
  }
  for (const DeviceDensePush &push : pushes) {
    accountDense(push.name, push.parts, push.width, /*toOwner=*/true);
    accountDense(push.name, push.parts, push.width, /*toOwner=*/false);
  }
}

void parallax::runtime::broadcastDevicePartitions(DeviceCollectives &device,
                                                  const Partitioning &parts,
                                                  float *table, int64_t width) {
  struct Whole {
    Partitioning parts;
    int64_t width;
  };
  const World &w = world();
  DenseLayout layout =
      layOutByOwner(std::vector<Whole>{{parts, width}}, w.size);
  DeviceBuffer<float> buffer(layout.total);
  for (const DensePiece &piece : layout.pieces)
    if (piece.owner == w.rank)
      device.copy(buffer.data() + piece.at, table + piece.firstRow * width,
                  piece.rows * rowBytes(width));
  device.broadcastSegments(buffer.data(), layout.counts);
  for (const DensePiece &piece : layout.pieces)
    if (piece.owner != w.rank)
      device.copy(table + piece.firstRow * width, buffer.data() + piece.at,
                  piece.rows * rowBytes(width));
  device.synchronize("a pull of a whole variable on the GPU");
}

/// The queued dense pushes' exchange, when there are any; their names.
static std::vector<std::string> sendDeviceDensePushes() {
  if (pendingDeviceDensePushes.empty())
    return {};
  std::vector<DeviceDensePush> dense = std::move(pendingDeviceDensePushes);
  pendingDeviceDensePushes.clear();
  TraceScope trace(
      "comm", [&] { return "push " + namesOf(dense); }, "dense");
  exchangeDeviceDensePushes(dense);
  deviceCollectives()->synchronize(
      "the parameter store's dense update on the GPU");
  std::vector<std::string> names;
  for (const DeviceDensePush &push : dense)
    names.push_back(push.name);
  return names;
}

std::vector<std::string> parallax::runtime::sendDevicePushes() {
  std::vector<std::string> denseNames = sendDeviceDensePushes();
  if (pendingDevicePushes.empty())
    return denseNames;
  std::vector<DevicePush> pushes = std::move(pendingDevicePushes);
  pendingDevicePushes.clear();
  TraceScope trace(
      "comm", [&] { return "push " + namesOf(pushes); }, "sparse");
  const World &w = world();
  if (w.localSize > 1)
    aggregateOnMachine(pushes);
  size_t variables = pushes.size();
  IdsByRank out(w.size, std::vector<std::vector<int64_t>>(variables));
  for (size_t v = 0; v < variables; ++v)
    for (int d = 0; d < w.size; ++d)
      out[d][v] = pushes[v].rowsByOwner[d];
  IdsByRank in = exchangeIds(out, "a push");

  // Every rank's rows for the rows this one serves, variable by variable,
  // each sender's after the one before.
  std::vector<DeviceBuffer<float>> received(variables);
  std::vector<Transfer> sends, receives;
  for (size_t v = 0; v < variables; ++v) {
    const DevicePush &push = pushes[v];
    std::vector<std::vector<int64_t>> from(w.size);
    for (int s = 0; s < w.size; ++s)
      from[s] = in[s][v];
    std::vector<int64_t> inStarts = startsOf(from),
                         outStarts = startsOf(push.rowsByOwner);
    received[v] = DeviceBuffer<float>(inStarts.back() * push.width);
    for (int r = 0; r < w.size; ++r) {
      sends.push_back(
          {r, push.sums.data() + outStarts[r] * push.width,
           (outStarts[r + 1] - outStarts[r]) * rowBytes(push.width)});
      receives.push_back(
          {r, received[v].data() + inStarts[r] * push.width,
           (inStarts[r + 1] - inStarts[r]) * rowBytes(push.width)});
    }
  }
  deviceCollectives()->exchange(sends, receives);

  // Each variable's received rows by row, the indices of every update
  // uploaded at once.
  struct Update {
    int64_t distinct;
    size_t positions, offsets, targets;
  };
  std::vector<Update> updates;
  DeviceIndices indices;
  for (size_t v = 0; v < variables; ++v) {
    DevicePush &push = pushes[v];
    std::vector<int64_t> rows;
    int64_t sent = 0, receivedBytes = 0;
    int64_t bytesPerRow = rowBytes(push.width) + int64_t(sizeof(int64_t));
    for (int r = 0; r < w.size; ++r) {
      rows.insert(rows.end(), in[r][v].begin(), in[r][v].end());
      if (r != w.rank) {
        sent += push.rowsByOwner[r].size() * bytesPerRow;
        receivedBytes += in[r][v].size() * bytesPerRow;
      }
    }
    account(push.name, sent, receivedBytes);
    Segments segments = segmentsBy(static_cast<int64_t>(rows.size()),
                                   [&](int64_t i) { return rows[i]; });
    int64_t distinct = static_cast<int64_t>(segments.offsets.size()) - 1;
    std::vector<int64_t> targets(distinct);
    for (int64_t s = 0; s < distinct; ++s)
      targets[s] = rows[segments.positions[segments.offsets[s]]];
    updates.push_back({distinct, indices.add(segments.positions),
                       indices.add(segments.offsets), indices.add(targets)});
  }
  indices.upload();
  float scale = 1.0f / w.size;
  for (size_t v = 0; v < variables; ++v) {
    const DevicePush &push = pushes[v];
    const Update &update = updates[v];
    deviceCollectives()->updateRows(
        {{received[v].data(), indices.at(update.positions),
          indices.at(update.offsets), nullptr, update.distinct, push.width,
          scale},
         indices.at(update.targets),
         push.variable.w,
         push.variable.state[0],
         push.variable.state[1],
         push.rule,
         ruleScalars(push.rule, push.h)});
  }
  // The rows are read next by the host (checkpoints) or by kernels that
  // queue after these.
  deviceCollectives()->synchronize("the parameter store's update on the GPU");
  return denseNames;
}

void parallax::runtime::completeDevicePulls(
    const std::vector<PullRequest> &pulls) {
  const World &w = world();
  size_t variables = pulls.size();
  // The distinct rows of each pull, asked of their owners.
  std::vector<std::vector<int64_t>> distinct(variables);
  IdsByRank asks(w.size, std::vector<std::vector<int64_t>>(variables));
  for (size_t v = 0; v < variables; ++v) {
    distinct[v] = pulls[v].requested;
    std::sort(distinct[v].begin(), distinct[v].end());
    distinct[v].erase(std::unique(distinct[v].begin(), distinct[v].end()),
                      distinct[v].end());
    for (int64_t row : distinct[v])
      asks[pulls[v].parts.ownerOfRow(row, w.size)][v].push_back(row);
  }
  IdsByRank asked = exchangeIds(asks, "a pull");

  // For each variable, the rows this rank gathers for the others (their
  // asks rank after rank) and where each row it asked for arrives (its
  // owner's replies rank after rank); every index uploaded at once.
  struct Plan {
    std::vector<int64_t> replyStarts, fetchStarts;
    size_t gather, from;
  };
  std::vector<Plan> plans(variables);
  DeviceIndices indices;
  for (size_t v = 0; v < variables; ++v) {
    const PullRequest &pull = pulls[v];
    Plan &plan = plans[v];
    std::vector<std::vector<int64_t>> askedOfMe(w.size), askedByMe(w.size);
    std::vector<int64_t> gather, arrivedAt(distinct[v].size());
    int64_t next = 0, sent = 0, receivedBytes = 0;
    for (int r = 0; r < w.size; ++r) {
      askedOfMe[r] = asked[r][v];
      askedByMe[r] = asks[r][v];
      gather.insert(gather.end(), asked[r][v].begin(), asked[r][v].end());
      for (int64_t row : asks[r][v])
        arrivedAt[std::lower_bound(distinct[v].begin(), distinct[v].end(),
                                   row) -
                  distinct[v].begin()] = next++;
      if (r != w.rank) {
        sent += asks[r][v].size() * sizeof(int64_t) +
                asked[r][v].size() * rowBytes(pull.width);
        receivedBytes += asked[r][v].size() * sizeof(int64_t) +
                         asks[r][v].size() * rowBytes(pull.width);
      }
    }
    account(pull.name, sent, receivedBytes);
    std::vector<int64_t> from(pull.requested.size());
    for (size_t i = 0; i < from.size(); ++i)
      from[i] =
          arrivedAt[std::lower_bound(distinct[v].begin(), distinct[v].end(),
                                     pull.requested[i]) -
                    distinct[v].begin()];
    plan.replyStarts = startsOf(askedOfMe);
    plan.fetchStarts = startsOf(askedByMe);
    plan.gather = indices.add(gather);
    plan.from = indices.add(from);
  }
  indices.upload();

  // Owners gather the rows asked of them; NCCL takes them back.
  std::vector<DeviceBuffer<float>> replies(variables), fetched(variables);
  std::vector<Transfer> sends, receives;
  for (size_t v = 0; v < variables; ++v) {
    const PullRequest &pull = pulls[v];
    const Plan &plan = plans[v];
    replies[v] = DeviceBuffer<float>(plan.replyStarts.back() * pull.width);
    fetched[v] = DeviceBuffer<float>(plan.fetchStarts.back() * pull.width);
    deviceCollectives()->sumRows({pull.table, indices.at(plan.gather), nullptr,
                                  replies[v].data(), plan.replyStarts.back(),
                                  pull.width, 1.0f});
    for (int r = 0; r < w.size; ++r) {
      sends.push_back({r, replies[v].data() + plan.replyStarts[r] * pull.width,
                       (plan.replyStarts[r + 1] - plan.replyStarts[r]) *
                           rowBytes(pull.width)});
      receives.push_back({r,
                          fetched[v].data() + plan.fetchStarts[r] * pull.width,
                          (plan.fetchStarts[r + 1] - plan.fetchStarts[r]) *
                              rowBytes(pull.width)});
    }
  }
  deviceCollectives()->exchange(sends, receives);

  // Each requested row from where it arrived.
  for (size_t v = 0; v < variables; ++v) {
    const PullRequest &pull = pulls[v];
    deviceCollectives()->sumRows(
        {fetched[v].data(), indices.at(plans[v].from), nullptr, pull.out,
         static_cast<int64_t>(pull.requested.size()), pull.width, 1.0f});
  }
  deviceCollectives()->synchronize("the parameter store's pull on the GPU");
}
