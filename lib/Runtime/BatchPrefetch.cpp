//===- BatchPrefetch.cpp - Batches copied to a device ahead of their step -===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "BatchPrefetch.h"

#include <algorithm>
#include <cstring>

using namespace parallax::runtime;

BatchPrefetcher::BatchPrefetcher(StagingDevice &device,
                                 std::vector<StagedInput> inputs,
                                 std::function<int64_t(int64_t)> slice)
    : device(device), inputs(std::move(inputs)), slice(std::move(slice)) {
  for (const StagedInput &input : this->inputs)
    pinned.push_back(!input.fill && device.pin(input.data, input.dataBytes));
  for (Slot &slot : slots) {
    for (size_t i = 0; i < this->inputs.size(); ++i) {
      size_t bytes = this->inputs[i].batchBytes;
      slot.staged.push_back(device.allocateDevice(bytes));
      slot.bounce.push_back(pinned[i] ? nullptr : device.allocatePinned(bytes));
    }
    slot.copied = device.createEvent();
    slot.consumed = device.createEvent();
  }
}

bool BatchPrefetcher::pinnedInPlace() const {
  return std::all_of(pinned.begin(), pinned.end(), [](bool p) { return p; });
}

void BatchPrefetcher::stage(int64_t step) {
  using Stream = StagingDevice::Stream;
  Slot &slot = slots[step & 1];
  // The step stream's copy out of this slot two steps ago must be done
  // before the slot is overwritten, and so must the side stream's copy out
  // of a bounce buffer before the host refills it.
  if (slot.consumedRecorded)
    device.wait(Stream::Side, slot.consumed);
  bool bouncing = !pinnedInPlace();
  if (bouncing && slot.copiedRecorded)
    device.hostWait(slot.copied);
  int64_t batch = slice(step);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const StagedInput &input = inputs[i];
    const char *rows = static_cast<const char *>(slot.bounce[i]);
    if (input.fill)
      input.fill(batch, static_cast<char *>(slot.bounce[i]));
    else if (pinned[i])
      rows = input.data + batch * input.batchBytes;
    else
      std::memcpy(slot.bounce[i], input.data + batch * input.batchBytes,
                  input.batchBytes);
    device.copy(Stream::Side, slot.staged[i], rows, input.batchBytes);
  }
  device.record(Stream::Side, slot.copied);
  slot.copiedRecorded = true;
  slot.step = step;
}

void BatchPrefetcher::load(int64_t step, int64_t next) {
  using Stream = StagingDevice::Stream;
  Slot &slot = slots[step & 1];
  // The first step, or a step that was not the one announced.
  if (slot.step != step)
    stage(step);
  device.wait(Stream::Step, slot.copied);
  for (size_t i = 0; i < inputs.size(); ++i)
    device.copy(Stream::Step, inputs[i].buffer, slot.staged[i],
                inputs[i].batchBytes);
  device.record(Stream::Step, slot.consumed);
  slot.consumedRecorded = true;
  slot.step = -1;
  if (next >= 0 && next != step)
    stage(next);
}

static StagingDeviceFactory stagingDeviceFactory = nullptr;

void parallax::runtime::setStagingDeviceFactory(StagingDeviceFactory factory) {
  stagingDeviceFactory = factory;
}

StagingDevice *parallax::runtime::makeStagingDevice() {
  return stagingDeviceFactory ? stagingDeviceFactory() : nullptr;
}
