//===- Profile.h - Where a training step's time goes ------------*- C++ -*-===//
//
// Part of the Parallax project. Internal to lib/Runtime.
//
// `PROGRAM --profile FILE`: the time of every profile site of the step
// (kernels and runtime calls, bracketed by --parallax-instrument-profile;
// the runtime's own work between steps), summed per family, with the
// FLOPs and bytes the compiler counted, against this machine's measured
// GEMM and memory-bandwidth peaks (a roofline).
//
//===----------------------------------------------------------------------===//

#ifndef PARALLAX_LIB_RUNTIME_PROFILE_H
#define PARALLAX_LIB_RUNTIME_PROFILE_H

#include <cstdint>
#include <string>

namespace parallax::runtime {

/// Times sites from now on, to be written to `path` by writeProfile();
/// dies if `path` cannot be written or the program has no profile sites.
void enableProfile(const std::string &path);

bool profiling();

/// The measured window starts now (the first step is about to run);
/// `steps` is how many the run will take. With more than one, the first
/// is a warm-up that the profile leaves out.
void startProfile(int64_t steps);

/// A step ended (called last in parallax_rt_step_end).
void profileStepEnd();

/// A site of the runtime's own work (the step's end, its queued pushes, a
/// checkpoint), timed from construction to destruction when profiling.
class ProfileScope {
public:
  ProfileScope(const char *family, const char *name);
  ~ProfileScope();
  ProfileScope(const ProfileScope &) = delete;
  ProfileScope &operator=(const ProfileScope &) = delete;

private:
  int64_t site = -1;
};

/// A program whose step runs on a GPU (device() is set) times its own
/// work there: `flush` waits for the device and adds what it timed since
/// the last call to the sites (addSiteTime); it is called at each step's
/// end. Set before main() (with the driver); such a program profiles
/// without compiled sites and measures no CPU peaks.
void setDeviceProfiler(void (*flush)());

/// Adds one call of `seconds` to the runtime site (`family`, `name`),
/// which belongs to model node `node` if one is given.
void addSiteTime(const char *family, const std::string &name, double seconds,
                 const std::string &node = {});

/// Measures the peaks on worker 0, gathers every worker's times and
/// writes the JSON report (worker 0, atomically) and a table on stderr. A
/// no-op when not profiling; every rank must call it.
void writeProfile();

} // namespace parallax::runtime

#endif // PARALLAX_LIB_RUNTIME_PROFILE_H
