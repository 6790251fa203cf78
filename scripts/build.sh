#!/usr/bin/env bash
#===- build.sh - Configure and build Parallax into build/ -----------------===#
#
# Usage: scripts/build.sh [ninja targets...]
# Installs missing Debian packages, configures build/ once (Ninja, Release,
# ccache when present) and builds the given targets (default: all).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-debian.sh

BUILD_DIR=${PARALLAX_BUILD_DIR:-build}
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
cmake --build "$BUILD_DIR" -- "$@"
