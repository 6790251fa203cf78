//===- TrialRun.cpp - Timing a distributed program's steps ----------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Driver/TrialRun.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <unistd.h>

using namespace llvm;

std::optional<double> mlir::parallax::timeSteps(StringRef program,
                                                const TrialRun &trial,
                                                std::string &error) {
  SmallVector<std::string> command;
  if (trial.launcher.empty()) {
    ErrorOr<std::string> mpirun = sys::findProgramByName("mpirun");
    if (!mpirun) {
      error = "mpirun not found on PATH (install openmpi-bin, or give "
              "--search-launcher)";
      return std::nullopt;
    }
    command = {*mpirun, "--oversubscribe", "-np",
               std::to_string(trial.workers)};
    if (geteuid() == 0)
      command.push_back("--allow-run-as-root");
  } else {
    SmallVector<StringRef> words;
    StringRef(trial.launcher).split(words, ' ', -1, false);
    for (StringRef word : words)
      command.push_back(word.str());
    ErrorOr<std::string> launcher = sys::findProgramByName(command.front());
    if (!launcher) {
      error = "launcher '" + command.front() + "' not found";
      return std::nullopt;
    }
    command.front() = *launcher;
  }
  SmallString<128> metrics, log;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("parallax-trial", "jsonl", metrics)) {
    error = "cannot create a temporary file: " + ec.message();
    return std::nullopt;
  }
  if (std::error_code ec =
          sys::fs::createTemporaryFile("parallax-trial", "log", log)) {
    sys::fs::remove(metrics);
    error = "cannot create a temporary file: " + ec.message();
    return std::nullopt;
  }
  command.append({program.str(), "--data", trial.data, "--steps",
                  std::to_string(trial.steps), "--metrics",
                  std::string(metrics)});
  SmallVector<StringRef> args(command.begin(), command.end());
  std::string message;
  // The trial's output goes to a log, shown only when it fails.
  int status = sys::ExecuteAndWait(
      args.front(), args, std::nullopt,
      {StringRef(""), StringRef(log), StringRef(log)}, 0, 0, &message);
  auto lines = MemoryBuffer::getFile(metrics);
  auto output = MemoryBuffer::getFile(log);
  sys::fs::remove(metrics);
  sys::fs::remove(log);
  if (status != 0) {
    error = "the trial run '" + llvm::join(args, " ") + "' failed" +
            (message.empty() ? "" : ": " + message) +
            (output ? ":\n" + (*output)->getBuffer().rtrim().str() : "");
    return std::nullopt;
  }
  if (!lines) {
    error = "the trial run wrote no metrics";
    return std::nullopt;
  }
  double total = 0;
  int64_t counted = 0, step = 0;
  SmallVector<StringRef> records;
  (*lines)->getBuffer().split(records, '\n', -1, false);
  for (StringRef record : records) {
    Expected<json::Value> value = json::parse(record);
    if (!value) {
      consumeError(value.takeError());
      continue;
    }
    if (step++ < trial.warmup)
      continue;
    json::Object *object = value->getAsObject();
    if (std::optional<double> seconds =
            object ? object->getNumber("time_s") : std::nullopt) {
      total += *seconds;
      ++counted;
    }
  }
  if (!counted) {
    error = "the trial run timed no step after the " +
            std::to_string(trial.warmup) + " warm-up steps";
    return std::nullopt;
  }
  return total / counted;
}
