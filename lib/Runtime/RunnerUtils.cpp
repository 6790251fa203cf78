//===- RunnerUtils.cpp - Runtime entry points for mlir-runner tests -------===//
//
// Part of the Parallax project.
//
// The runtime functions that lowered compute kernels call, as a shared
// library that mlir-runner loads (`-shared-libs`) in the lit suite:
// modules run there have no training program around them, so the full
// runtime archive (MPI, OpenBLAS) is not wanted.
//
//===----------------------------------------------------------------------===//

#include "parallax/Runtime/Runtime.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" void parallax_rt_index_out_of_range(const char *where, int64_t value,
                                               int64_t low, int64_t high) {
  std::fprintf(stderr, "error: %s: index %lld is outside [%lld, %lld)\n", where,
               static_cast<long long>(value), static_cast<long long>(low),
               static_cast<long long>(high));
  std::exit(1);
}

// Profile sites of lowered programs: mlir-runner runs never profile.
extern "C" void parallax_rt_profile_begin(int64_t) {}
extern "C" void parallax_rt_profile_end(int64_t) {}
