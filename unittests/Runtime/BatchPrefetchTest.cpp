//===- BatchPrefetchTest.cpp - Batches staged ahead of their step ---------===//
//
// Part of the Parallax project.
//
// The prefetcher's streams and events on a simulated device that runs
// queued work as late, or as early, as the streams and events allow: a
// missing wait shows as a step that reads another step's batch.
//
//===----------------------------------------------------------------------===//

#include "BatchPrefetch.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace parallax::runtime;

namespace {

/// When the simulated device runs queued work: only when the host waits
/// (and at the end), or the step stream (or the side stream) as far as it
/// can after every call.
enum class Schedule { Lazy, StepEager, SideEager };

class SimulatedDevice final : public StagingDevice {
public:
  SimulatedDevice(Schedule schedule, bool canPin)
      : schedule(schedule), canPin(canPin) {}

  bool pin(const void *, size_t) override { return canPin; }
  void *allocatePinned(size_t bytes) override {
    ++pinnedAllocations;
    return allocate(bytes);
  }
  void *allocateDevice(size_t bytes) override { return allocate(bytes); }
  Event createEvent() override {
    events.push_back({});
    return reinterpret_cast<Event>(events.size());
  }
  /// Reads `from` when the copy runs, as a DMA engine does.
  void copy(Stream stream, void *to, const void *from, size_t bytes) override {
    enqueue(stream, {Op::Work, [=] { std::memcpy(to, from, bytes); }});
    if (stream == Stream::Side)
      ++sideCopies;
  }
  void record(Stream stream, Event event) override {
    EventState &state = at(event);
    enqueue(stream, {Op::Record, {}, &state, ++state.recorded});
  }
  void wait(Stream stream, Event event) override {
    EventState &state = at(event);
    enqueue(stream, {Op::Wait, {}, &state, state.recorded});
  }
  void hostWait(Event event) override {
    EventState &state = at(event);
    long needed = state.recorded;
    while (state.completed < needed)
      if (!runOne(Stream::Side) && !runOne(Stream::Step)) {
        ADD_FAILURE() << "the host waits for an event no stream can reach";
        return;
      }
  }

  /// The step's kernels: work on the step stream.
  void runStep(std::function<void()> kernels) {
    enqueue(Stream::Step, {Op::Work, std::move(kernels)});
  }

  /// Runs everything queued.
  void drain() {
    while (runOne(Stream::Step) || runOne(Stream::Side)) {
    }
    EXPECT_TRUE(queues[0].empty() && queues[1].empty())
        << "queued work waits for an event never reached";
  }

  int pinnedAllocations = 0, sideCopies = 0;

private:
  struct EventState {
    long recorded = 0, completed = 0;
  };
  struct Op {
    enum Kind { Work, Record, Wait } kind;
    std::function<void()> work;
    EventState *event = nullptr;
    long mark = 0; // Record: which record; Wait: the record waited for
  };

  void *allocate(size_t bytes) {
    // Garbage until written, as device memory is.
    memory.push_back(std::make_unique<char[]>(bytes));
    std::memset(memory.back().get(), 0x5A, bytes);
    return memory.back().get();
  }
  EventState &at(Event event) {
    return events.at(reinterpret_cast<size_t>(event) - 1);
  }
  std::deque<Op> &queue(Stream stream) {
    return queues[stream == Stream::Side];
  }
  void enqueue(Stream stream, Op op) {
    queue(stream).push_back(std::move(op));
    if (schedule == Schedule::StepEager)
      while (runOne(Stream::Step)) {
      }
    if (schedule == Schedule::SideEager)
      while (runOne(Stream::Side)) {
      }
  }
  bool runOne(Stream stream) {
    std::deque<Op> &ops = queue(stream);
    if (ops.empty())
      return false;
    Op &op = ops.front();
    if (op.kind == Op::Wait && op.event->completed < op.mark)
      return false;
    Op taken = std::move(op);
    ops.pop_front();
    if (taken.kind == Op::Work)
      taken.work();
    else if (taken.kind == Op::Record)
      taken.event->completed = std::max(taken.event->completed, taken.mark);
    return true;
  }

  Schedule schedule;
  bool canPin;
  std::deque<Op> queues[2];
  std::deque<EventState> events;
  std::vector<std::unique_ptr<char[]>> memory;
};

/// Two inputs (3 and 2 bytes a batch) over `batches` batches, each byte
/// naming its batch and position; trains steps [first, end) with the
/// batch of step s at slice(s), and returns what each step read.
std::vector<std::string> train(SimulatedDevice &device, int64_t batches,
                               int64_t first, int64_t end,
                               std::function<int64_t(int64_t)> slice) {
  std::string images, labels;
  for (int64_t b = 0; b < batches; ++b) {
    images += {char('a' + b), char('A' + b), char('0' + b)};
    labels += {char('k' + b), char('K' + b)};
  }
  char imageBuffer[3], labelBuffer[2];
  BatchPrefetcher prefetcher(device,
                             {{imageBuffer, 3, images.data(), images.size()},
                              {labelBuffer, 2, labels.data(), labels.size()}},
                             slice);
  std::vector<std::string> read(end - first);
  for (int64_t step = first; step < end; ++step) {
    prefetcher.load(step, step + 1 < end ? step + 1 : -1);
    device.runStep([&, step] {
      read[step - first] =
          std::string(imageBuffer, 3) + "/" + std::string(labelBuffer, 2);
    });
  }
  device.drain();
  return read;
}

std::string batch(int64_t b) {
  return std::string{char('a' + b), char('A' + b), char('0' + b),
                     '/',           char('k' + b), char('K' + b)};
}

constexpr Schedule kSchedules[] = {Schedule::Lazy, Schedule::StepEager,
                                   Schedule::SideEager};

TEST(BatchPrefetchTest, EveryStepReadsItsBatchUnderEverySchedule) {
  for (bool canPin : {true, false})
    for (Schedule schedule : kSchedules) {
      SCOPED_TRACE("schedule " + std::to_string(int(schedule)) +
                   (canPin ? ", pinned in place" : ", through bounce buffers"));
      SimulatedDevice device(schedule, canPin);
      std::vector<std::string> read =
          train(device, 7, 0, 7, [](int64_t step) { return step; });
      for (int64_t step = 0; step < 7; ++step)
        EXPECT_EQ(read[step], batch(step)) << "step " << step;
      // One copy per input and step from the host, on the side stream.
      EXPECT_EQ(device.sideCopies, 2 * 7);
      EXPECT_EQ(device.pinnedAllocations, canPin ? 0 : 4);
    }
}

TEST(BatchPrefetchTest, RankOfSeveralWorkersFromARestoredStep) {
  // Rank 1 of 2, restored at step 2: step s reads batch 2 s + 1.
  for (bool canPin : {true, false})
    for (Schedule schedule : kSchedules) {
      SimulatedDevice device(schedule, canPin);
      std::vector<std::string> read =
          train(device, 12, 2, 6, [](int64_t step) { return 2 * step + 1; });
      for (int64_t step = 2; step < 6; ++step)
        EXPECT_EQ(read[step - 2], batch(2 * step + 1)) << "step " << step;
    }
}

TEST(BatchPrefetchTest, FilledInputsGoThroughTheLoadersBuffers) {
  // Bags: each batch written by the host (`fill`) into a page-locked
  // buffer of the loader's, never read in place; next to an input of rows
  // that is. Step s reads batch s of both.
  for (bool canPin : {true, false})
    for (Schedule schedule : kSchedules) {
      SCOPED_TRACE("schedule " + std::to_string(int(schedule)) +
                   (canPin ? ", rows pinned in place" : ", rows bounced"));
      SimulatedDevice device(schedule, canPin);
      std::string labels;
      for (int64_t b = 0; b < 7; ++b)
        labels += {char('k' + b), char('K' + b)};
      char bagBuffer[4], labelBuffer[2];
      std::vector<int64_t> filled;
      StagedInput bags{bagBuffer, 4, nullptr, 0};
      bags.fill = [&](int64_t b, char *to) {
        filled.push_back(b);
        std::memcpy(to, ("bag" + std::to_string(b)).data(), 4);
      };
      BatchPrefetcher prefetcher(
          device, {bags, {labelBuffer, 2, labels.data(), labels.size()}},
          [](int64_t step) { return step; });
      EXPECT_FALSE(prefetcher.pinnedInPlace());
      std::vector<std::string> read(7);
      for (int64_t step = 0; step < 7; ++step) {
        prefetcher.load(step, step + 1 < 7 ? step + 1 : -1);
        device.runStep([&, step] {
          read[step] =
              std::string(bagBuffer, 4) + "/" + std::string(labelBuffer, 2);
        });
      }
      device.drain();
      for (int64_t step = 0; step < 7; ++step) {
        std::string label = {char('k' + step), char('K' + step)};
        EXPECT_EQ(read[step], "bag" + std::to_string(step) + "/" + label)
            << "step " << step;
      }
      EXPECT_EQ(filled, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
      EXPECT_EQ(device.sideCopies, 2 * 7);
      // The bags' two buffers always; the rows' two where not pinned.
      EXPECT_EQ(device.pinnedAllocations, canPin ? 2 : 4);
    }
}

TEST(BatchPrefetchTest, OneStep) {
  for (Schedule schedule : kSchedules) {
    SimulatedDevice device(schedule, true);
    std::vector<std::string> read =
        train(device, 1, 0, 1, [](int64_t step) { return step; });
    EXPECT_EQ(read[0], batch(0));
    EXPECT_EQ(device.sideCopies, 2);
  }
}

} // namespace
