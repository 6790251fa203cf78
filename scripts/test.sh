#!/usr/bin/env bash
#===- test.sh - Build Parallax and run the whole test suite ---------------===#
#
# The README's test command: installs what is missing, builds, then runs
# every test through ctest (the lit suite, with its summary, and the
# GoogleTest unit tests). Exits non-zero on any failure.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
BUILD_DIR=${PARALLAX_BUILD_DIR:-build}
# LLVM's OpenMP runtime registers each process in /dev/shm; a process
# killed while registering leaves an empty file, and the next process given
# its pid dies of SIGBUS at start-up. Drop those of processes now gone.
for registration in /dev/shm/__KMP_REGISTERED_LIB_*; do
  [ -f "$registration" ] && [ ! -s "$registration" ] || continue
  pid=${registration#/dev/shm/__KMP_REGISTERED_LIB_}
  pid=${pid%%_*}
  kill -0 "$pid" 2>/dev/null || rm -f "$registration"
done
ctest --test-dir "$BUILD_DIR" --output-on-failure --verbose
