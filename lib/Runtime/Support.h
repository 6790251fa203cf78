//===- Support.h - Errors and dtypes shared by the runtime ------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_SUPPORT_H
#define PARALLAX_LIB_RUNTIME_SUPPORT_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace parallax::runtime {

/// The program's name (argv[0]) for messages; set by the init functions.
void setProgramName(const char *name);

/// Prints "PROGRAM: error: MESSAGE" on stderr and exits with status 1
/// (through the exit handler).
[[noreturn]] void die(const std::string &message);

/// Prints "PROGRAM: warning: MESSAGE" on stderr.
void warn(const std::string &message);

/// Prints "PROGRAM: MESSAGE" on stderr.
void note(const std::string &message);

/// How die() ends the process, and a prefix for its messages: the MPI
/// layer aborts the whole job and names the rank.
using ExitHandler = void (*)(int status);
void setExitHandler(ExitHandler handler, const std::string &messagePrefix);

/// `text` as a whole decimal integer, or nullopt.
std::optional<int64_t> parseInteger(const char *text);

/// The integer value of a command-line flag, at least `min`; dies naming
/// the flag otherwise.
int64_t parseCount(const std::string &flag, const char *text, int64_t min);

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Keeps freed memory in the process for reuse: generated code allocates
/// and frees the same large buffers every step, which glibc would
/// otherwise return to the kernel (munmap) and page-fault back in.
void keepFreedMemory();

/// Executes the program again (argv, main's) with glibc's heap on
/// transparent huge pages (HeapPages.cpp), unless it already is, the user
/// said otherwise or the kernel has none; returns where it does not. Call
/// first thing, before any thread or library has started.
void restartWithHugePageHeap(char **argv);

/// "transparent huge pages (GLIBC_TUNABLES)" or why not.
std::string describeHeap();

/// Before writing the single file `path` for `flag` (--metrics, --trace):
/// dies unless it is absent, empty, or starts with `signature` (a file
/// this program wrote before). Nothing else is ever overwritten. A file
/// `streamed` to (not replaced by a rename) may also be a device or a
/// pipe, such as /dev/stdout.
void checkReplaceableFile(const std::string &flag, const std::string &path,
                          const std::string &signature, bool streamed);

struct NpyArray;

/// Graph inputs holding bags of varying size (parallax_rt_segment_input):
/// the offsets input, its members, and the program's count scalar.
struct SegmentGroup {
  std::string offsets;
  std::vector<std::string> members;
  int64_t *count = nullptr; // parallax_rt_segment_count's buffer
  // Inference: the elements the members read hold, and which file said so.
  int64_t read = -1;
  std::string readFrom;
};

/// The group `input` is a member of, or null.
SegmentGroup *segmentGroupOf(const std::string &input);

/// The group whose offsets input is `offsets`, or null.
SegmentGroup *segmentGroupStartedBy(const std::string &offsets);

/// Checks the values of graph input `name`, read from `path`: integers
/// against the ranges the program declared for it
/// (parallax_rt_declare_input_range), floats for NaN and infinity when
/// `finite`. Dies naming the file, the element (the example and the
/// position within it when `examples`: the leading dimension counts
/// examples), the value and the valid range. `batch` > 0: the program's
/// buffer holds `batch` examples (regions count within one batch).
void checkInputValues(const std::string &name, const std::string &path,
                      const NpyArray &array, bool examples, bool finite,
                      int64_t batch);

/// How the runtime copies into buffers of generated code (from another
/// such buffer, or a CPU program's batch from host memory): memcpy, or, in a
/// GPU program, the CUDA runtime's copy (its buffers are device memory, which
/// a host memcpy would migrate to the host and back). Returns once done;
/// a buffer copied onto itself is left alone.
using BufferCopy = void (*)(void *to, const void *from, size_t bytes);
void setBufferCopy(BufferCopy copy);
void copyBuffer(void *to, const void *from, size_t bytes);

/// Whether `data` is device memory of a GPU program (cuMemAlloc), which
/// host code must not load or store: the runtime reaches it only by
/// copyBuffer and the helpers below. Always false in a CPU program.
using DeviceMemoryQuery = bool (*)(const void *data);
void setDeviceMemoryQuery(DeviceMemoryQuery query);
bool isDeviceMemory(const void *data);

/// Host access to `bytes` of a buffer of generated code at `at`, which
/// may be device memory: fillBuffer hands `produce` consecutive pieces of
/// it to write (in place, or host chunks then copied there), drainBuffer
/// hands `consume` consecutive pieces to read (in place, or host chunks
/// copied from there). Each stops at, and returns, the first false.
bool fillBuffer(char *at, int64_t bytes,
                const std::function<bool(char *, int64_t)> &produce);
bool drainBuffer(const char *at, int64_t bytes,
                 const std::function<bool(const char *, int64_t)> &consume);

/// Reads `bytes` of the open file `fd` from `offset` into `at` (host or
/// device memory, through fillBuffer); a failed or short read calls
/// `fail` with errno, 0 where the file ended first.
void readFileInto(int fd, int64_t offset, char *at, int64_t bytes,
                  const std::function<void(int error)> &fail);

/// Has `write` write all `bytes` at `at` at once: in place, or in a host
/// buffer then copied to device memory.
void writeBuffer(char *at, int64_t bytes,
                 const std::function<void(char *)> &write);

/// The GPU a GPU program's step runs on ("NVIDIA H200"), set when its
/// driver loads (before main()); null in a CPU program.
void setDevice(const char *name);
const char *device();

/// numpy's name of a .npy dtype descr ("<f4" -> "float32").
std::string dtypeName(const std::string &dtype);

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_SUPPORT_H
