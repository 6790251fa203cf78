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
ctest --test-dir "$BUILD_DIR" --output-on-failure --verbose
