//===- HeapPages.cpp - The heap on transparent huge pages -----------------===//
//
// Part of the Parallax project.
//
// glibc puts its heap on transparent huge pages when its tunable
// glibc.malloc.hugetlb is 1: it asks the kernel for them (madvise) as the
// heap grows, which the kernel grants where THP is "madvise" (Debian's
// default) or "always". Tunables are read as a process starts, so a
// program started without it sets it and executes itself again, first
// thing, before MPI, threads or any buffer exist. Measured on an AMD Zen 5
// (docs/benchmarks.md, "A Zen 5 with AVX-512"): the LSTM LM's step 0.9x
// its time on one thread and 0.75-0.9x on two (its 100,000-wide logits
// read by rows 400 KB apart), MobileNetV2's 0.91-0.99x, ResNet-18's
// 0.87-1.0x. glibc has the tunable since 2.35.
// PARALLAX_HUGE_PAGES=0, or GLIBC_TUNABLES naming the tunable, keeps the
// program as it was started.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

using namespace parallax::runtime;

namespace {

constexpr const char *kTunable = "glibc.malloc.hugetlb=";

/// What describeHeap says.
std::string heapState = "small pages";

/// Whether the kernel gives transparent huge pages to memory that asks.
bool hugePagesOnRequest() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(file, modes) &&
         (modes.find("[madvise]") != std::string::npos ||
          modes.find("[always]") != std::string::npos);
}

/// Whether this glibc reads glibc.malloc.hugetlb (2.35 and later).
bool glibcHasTheTunable() {
  int major = 0, minor = 0;
  return std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
         (major > 2 || (major == 2 && minor >= 35));
}

} // namespace

void parallax::runtime::restartWithHugePageHeap(char **argv) {
  if (!glibcHasTheTunable()) {
    heapState = "small pages (glibc " + std::string(gnu_get_libc_version()) +
                " has no glibc.malloc.hugetlb)";
    return;
  }
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  std::string current = tunables ? tunables : "";
  bool pages = hugePagesOnRequest();
  if (size_t at = current.find(kTunable); at != std::string::npos) {
    bool on = current.compare(at + std::strlen(kTunable), 1, "1") == 0;
    heapState = on && pages ? "transparent huge pages (GLIBC_TUNABLES)"
                            : "small pages (GLIBC_TUNABLES)";
    return;
  }
  if (const char *choice = std::getenv("PARALLAX_HUGE_PAGES");
      choice && std::string(choice) == "0") {
    heapState = "small pages (PARALLAX_HUGE_PAGES=0)";
    return;
  }
  if (!pages) {
    heapState = "small pages (the kernel gives no transparent huge pages)";
    return;
  }
  std::string value = (current.empty() ? "" : current + ":") + kTunable + "1";
  setenv("GLIBC_TUNABLES", value.c_str(), /*overwrite=*/1);
  execv("/proc/self/exe", argv);
  // Still here: the program goes on as it was started.
  int error = errno;
  if (tunables)
    setenv("GLIBC_TUNABLES", current.c_str(), /*overwrite=*/1);
  else
    unsetenv("GLIBC_TUNABLES");
  heapState = "small pages (could not restart the program with " +
              std::string(kTunable) + "1: " + std::strerror(error) + ")";
}

std::string parallax::runtime::describeHeap() { return heapState; }
