//===- Checkpoint.cpp - Crash-proof checkpoint directories ----------------===//
//
// Part of the Parallax project.
//
// A save writes DIR.partial.PID beside DIR (a marker file first, the
// manifest last) and swaps it with DIR in one renameat2(RENAME_EXCHANGE),
// so DIR always names a complete checkpoint; the old one, now at the
// staging path, is removed after. Where the file system cannot exchange,
// DIR moves to DIR.old.PID first and the next start or --restore finds
// it there. DIR.lock, held with flock for the whole run, keeps a second
// run from writing the same DIR.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "parallax/Support/Npy.h"

#include "Comm.h"
#include "ParameterStore.h"
#include "Partitions.h"
#include "Support.h"
#include "Trace.h"
#include "parallax/Support/FileNames.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

using namespace parallax::runtime;
namespace fs = std::filesystem;

namespace {

constexpr const char *kManifest = "checkpoint.json";
constexpr const char *kPartialMarker = ".parallax-partial";

/// `dir` without trailing slashes ("ckpt/" and "ckpt" are one checkpoint).
std::string normalized(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  return dir;
}

std::string parentOf(const std::string &dir) {
  std::string parent = fs::path(dir).parent_path().string();
  return parent.empty() ? "." : parent;
}

bool hasManifest(const std::string &dir) {
  std::error_code ec;
  return fs::is_regular_file(dir + "/" + kManifest, ec);
}

bool hasMarker(const std::string &dir) {
  std::error_code ec;
  return fs::exists(dir + "/" + kPartialMarker, ec);
}

/// Creates the marker that says `dir` is a checkpoint of ours being
/// written or removed; false when it cannot.
bool mark(const std::string &dir) {
  int fd = open((dir + "/" + kPartialMarker).c_str(),
                O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return false;
  close(fd);
  return true;
}

/// Directories an interrupted save left beside `dir`: DIR.partial.PID and
/// DIR.old.PID.
std::vector<std::string> leftoversOf(const std::string &dir) {
  std::vector<std::string> found;
  std::string base = fs::path(dir).filename().string();
  std::error_code ec;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(parentOf(dir), ec)) {
    std::string name = entry.path().filename().string();
    for (const char *kind : {".partial.", ".old."}) {
      std::string prefix = base + kind;
      if (name.size() > prefix.size() &&
          name.compare(0, prefix.size(), prefix) == 0 &&
          name.find_first_not_of("0123456789", prefix.size()) ==
              std::string::npos &&
          entry.is_directory(ec))
        found.push_back(entry.path().string());
    }
  }
  return found;
}

/// The "step" of a manifest; -1 when it has none.
int64_t manifestStep(const std::string &dir) {
  std::ifstream in(dir + "/" + kManifest);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  // "step" precedes the variables, whose names may contain anything.
  size_t at = json.find("\"step\":");
  long long step = -1;
  if (at == std::string::npos ||
      std::sscanf(json.c_str() + at + 7, "%lld", &step) != 1 || step < 0)
    return -1;
  return step;
}

/// The newest complete checkpoint an interrupted save left beside `dir`.
std::string completeLeftover(const std::string &dir) {
  std::string best;
  int64_t bestStep = -1;
  for (const std::string &path : leftoversOf(dir))
    if (hasManifest(path) && !hasMarker(path)) {
      int64_t step = manifestStep(path);
      if (step > bestStep) {
        bestStep = step;
        best = path;
      }
    }
  return best;
}

int64_t rowsOf(const Variable &v) {
  return v.shape.empty() ? 1 : v.shape.front();
}

int64_t widthOf(const Variable &v) {
  int64_t rows = rowsOf(v);
  return rows ? v.bytes / int64_t(sizeof(float)) / rows : 0;
}

/// Removes `path` (a staging directory or a replaced checkpoint) so that
/// a kill at any moment leaves it recognisable as ours: the marker goes in
/// first and out last. Errors are ignored; a later start tries again.
void removeQuietly(const std::string &path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    return;
  mark(path);
  for (const fs::directory_entry &entry : fs::directory_iterator(path, ec))
    if (entry.path().filename() != kPartialMarker)
      fs::remove_all(entry.path(), ec);
  fs::remove(path + "/" + kPartialMarker, ec);
  fs::remove(path, ec);
}

} // namespace

void parallax::runtime::prepareCheckpointDir(const std::string &saveDir) {
  std::string dir = normalized(saveDir);
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    die("--save '" + saveDir +
        "' exists and is not a directory: refusing to replace it (choose "
        "another path)");
  if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec) && !hasManifest(dir))
    die("--save '" + saveDir +
        "' is a directory that is not a Parallax checkpoint (it has no " +
        kManifest +
        "): refusing to replace what it holds (choose a new path or an "
        "empty directory)");
  if (!fs::is_directory(parentOf(dir), ec))
    die("--save '" + saveDir + "': the directory '" + parentOf(dir) +
        "' does not exist");

  std::string lock = dir + ".lock";
  int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    die("cannot create '" + lock + "', the lock of --save '" + saveDir +
        "': " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {0};
    ssize_t length = pread(fd, holder, sizeof holder - 1, 0);
    std::string pid = length > 0 ? std::string(holder, length) : "unknown";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' '))
      pid.pop_back();
    die("--save '" + saveDir + "' is being written by another run ('" + lock +
        "' is locked; the last run to take it was process " + pid +
        "): wait for it to end or choose another directory");
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0)
    die("cannot write '" + lock + "': " + std::strerror(errno));
  // The descriptor stays open: the lock lasts until the process ends.

  if (!fs::exists(dir, ec)) {
    std::string recovered = completeLeftover(dir);
    if (!recovered.empty()) {
      fs::rename(recovered, dir, ec);
      if (ec)
        die("cannot move the checkpoint '" + recovered + "' back to '" + dir +
            "': " + ec.message());
      std::fprintf(stderr,
                   "recovered the checkpoint of an interrupted save: '%s' "
                   "-> '%s'\n",
                   recovered.c_str(), dir.c_str());
    }
  }
  for (const std::string &path : leftoversOf(dir))
    if (hasMarker(path) || hasManifest(path) || fs::is_empty(path, ec))
      removeQuietly(path);
}

std::vector<std::pair<int64_t, int64_t>>
parallax::runtime::heldRanges(const Variable &v) {
  const World &w = world();
  if (v.partitions <= 0 || w.size == 1 || v.shape.empty() || v.shape[0] == 0)
    return {{0, v.bytes}};
  int64_t rowBytes = v.bytes / v.shape[0];
  Partitioning parts(v.shape[0], v.partitions, v.firstServer);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t p = 0; p < parts.partitions; ++p)
    if (parts.ownerOf(p, w.size) == w.rank)
      ranges.push_back({parts.begin(p) * rowBytes, parts.end(p) * rowBytes});
  return ranges;
}

void parallax::runtime::readVariableFiles(
    const std::string &dir, const std::vector<Variable> &variables,
    bool withState, const std::string &flag) {
  // Every header first: a missing or differing file changes nothing.
  std::vector<int64_t> offsets(variables.size(), -1);
  std::vector<std::string> paths(variables.size());
  for (size_t i = 0; i < variables.size(); ++i) {
    const Variable &v = variables[i];
    if (v.isState && !withState)
      continue;
    const std::string &path = paths[i] =
        dir + "/" + encodeFileName(v.name) + ".npy";
    NpyArray header;
    std::string error;
    if (!readNpyHeader(path, header, offsets[i], error))
      die(flag + ": " + error +
          (v.isState ? " (optimizer state '" : " (variable '") + v.name +
          "' must be " + dtypeName(v.dtype) + " of shape " +
          shapeString(v.shape) +
          (v.isState ? "; was the checkpoint written with another optimizer?)"
                     : ")"));
    if (header.dtype != v.dtype || header.shape != v.shape)
      die(flag + ": '" + path + "' holds " + dtypeName(header.dtype) +
          " of shape " + shapeString(header.shape) + ", variable '" + v.name +
          "' is " + dtypeName(v.dtype) + " of shape " + shapeString(v.shape));
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    if (offsets[i] < 0)
      continue;
    const Variable &v = variables[i];
    const std::string &path = paths[i];
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      die(flag + ": cannot open '" + path + "': " + std::strerror(errno));
    for (auto [first, last] : heldRanges(v))
      readFileInto(
          fd, offsets[i] + first, v.data + first, last - first, [&](int error) {
            die(flag + ": cannot read '" + path + "': " +
                (error ? std::strerror(error) : "the file got shorter"));
          });
    close(fd);
  }
}

int64_t
parallax::runtime::checkpointBytes(const std::vector<Variable> &variables) {
  int64_t bytes = 0;
  for (const Variable &v : variables)
    bytes += v.bytes;
  return bytes;
}

void parallax::runtime::saveCheckpoint(const std::string &saveDir, int64_t step,
                                       std::vector<Variable> &variables) {
  TraceScope trace(
      "io", [&] { return "checkpoint (step " + std::to_string(step) + ")"; });
  // The other servers stream the partitions they serve to worker 0, which
  // writes them as they arrive, in the order it writes the files.
  if (world().rank != 0) {
    for (const Variable &v : variables)
      if (v.partitions)
        streamPartitionsToRoot(v.name.c_str(), v.partitions, v.firstServer,
                               reinterpret_cast<const float *>(v.data),
                               rowsOf(v), widthOf(v),
                               [](const float *, int64_t) { return true; });
    return;
  }
  std::string dir = normalized(saveDir);
  std::string staging = dir + ".partial." + std::to_string(getpid());
  std::error_code ec;
  removeQuietly(staging);
  auto fail = [&](const std::string &problem) {
    removeQuietly(staging);
    std::string kept = hasManifest(dir)
                           ? "; '" + dir +
                                 "' still holds the checkpoint of step " +
                                 std::to_string(manifestStep(dir))
                           : "";
    die("cannot write the checkpoint of step " + std::to_string(step) + ": " +
        problem + kept);
  };
  if (!fs::create_directories(staging, ec) || ec)
    fail("cannot create '" + staging + "': " + ec.message());
  // The marker first, created in place: a staging directory is at every
  // moment empty, marked, or complete (its manifest), so a later start
  // knows it for one of ours.
  if (!mark(staging))
    fail("cannot write in '" + staging + "': " + std::strerror(errno));
  std::string error;

  std::string manifest = "{\"format\": \"parallax-checkpoint\", \"version\": "
                         "1, \"step\": " +
                         std::to_string(step) +
                         ", \"workers\": " + std::to_string(world().size) +
                         ", \"variables\": [";
  bool first = true;
  for (const Variable &v : variables) {
    std::string file = encodeFileName(v.name) + ".npy";
    // Straight from the variable's buffer (or, for the rows other servers
    // hold, from the chunk that brought them): no copy of the variable.
    bool written = writeFileAtomically(
        staging + "/" + file,
        [&](const ByteSink &append) {
          if (!append(npyHeader(v.dtype, v.shape)))
            return false;
          auto piece = [&](const char *data, int64_t bytes) {
            // Peers waiting for this rank see it is alive.
            serveProbes();
            return append(std::string_view(data, bytes));
          };
          // Device memory goes through the host in chunks.
          if (!v.partitions)
            return drainBuffer(v.data, v.bytes, piece);
          return streamPartitionsToRoot(
              v.name.c_str(), v.partitions, v.firstServer,
              reinterpret_cast<const float *>(v.data), rowsOf(v), widthOf(v),
              [&](const float *data, int64_t floats) {
                return piece(reinterpret_cast<const char *>(data),
                             floats * int64_t(sizeof(float)));
              });
        },
        error);
    if (!written)
      fail(error);
    std::string shape;
    for (int64_t size : v.shape)
      shape += (shape.empty() ? "" : ", ") + std::to_string(size);
    manifest += std::string(first ? "" : ", ") +
                "{\"name\": " + jsonString(v.name) +
                ", \"file\": " + jsonString(file) +
                ", \"state\": " + (v.isState ? "true" : "false") +
                ", \"dtype\": " + jsonString(dtypeName(v.dtype)) +
                ", \"shape\": [" + shape + "]}";
    first = false;
  }
  manifest += "]}\n";
  if (!writeFileAtomically(staging + "/" + kManifest, {manifest}, error))
    fail(error);
  fs::remove(staging + "/" + kPartialMarker, ec);
  syncDirectory(staging);

  if (!fs::exists(dir, ec)) {
    fs::rename(staging, dir, ec);
    if (ec)
      fail("cannot rename '" + staging + "' to '" + dir + "': " + ec.message());
  } else if (renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(),
                       RENAME_EXCHANGE) == 0) {
    removeQuietly(staging); // the previous checkpoint
  } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
    // No atomic exchange here: DIR.old.PID holds the previous checkpoint
    // until the new one is in place; a crash in between is recovered
    // from at the next start or --restore.
    std::string old = dir + ".old." + std::to_string(getpid());
    fs::rename(dir, old, ec);
    if (ec)
      fail("cannot move '" + dir + "' aside: " + ec.message());
    fs::rename(staging, dir, ec);
    if (ec)
      die("cannot rename '" + staging + "' to '" + dir + "': " + ec.message() +
          " (the previous checkpoint is in '" + old + "')");
    removeQuietly(old);
  } else {
    fail("cannot swap '" + staging + "' with '" + dir +
         "': " + std::strerror(errno));
  }
  syncDirectory(parentOf(dir));
}

int64_t parallax::runtime::restoreCheckpoint(const std::string &restoreDir,
                                             std::vector<Variable> &variables) {
  std::string dir = normalized(restoreDir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::string leftover = completeLeftover(dir);
    if (leftover.empty())
      die("--restore '" + restoreDir + "' is not a directory");
    std::fprintf(stderr,
                 "restoring from '%s', the checkpoint an interrupted save "
                 "left beside '%s'\n",
                 leftover.c_str(), dir.c_str());
    dir = leftover;
  }
  bool full = hasManifest(dir);
  int64_t step = 0;
  if (full) {
    step = manifestStep(dir);
    if (step < 0)
      die("'" + dir + "/" + kManifest + "' has no valid \"step\"");
  }
  readVariableFiles(dir, variables, /*withState=*/full, "--restore");
  return step;
}
