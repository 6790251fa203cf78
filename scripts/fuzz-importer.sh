#!/usr/bin/env bash
#===- fuzz-importer.sh - Fuzz the ONNX importer for a fixed time ----------===#
#
# Usage: scripts/fuzz-importer.sh [SECONDS]   (default 300)
#
# Builds parallax-onnx-fuzzer with clang-22, libFuzzer and AddressSanitizer
# in build-fuzz/, seeds a corpus with the example models, the test fixtures
# and ONNX's backend test models, and fuzzes for SECONDS. Prints libFuzzer's
# statistics; exits non-zero and keeps the crashing input in
# build-fuzz/artifacts/ if any input crashes the importer.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-300}

scripts/setup-debian.sh
if ! dpkg-query -W -f='${Status}' libclang-rt-22-dev 2>/dev/null | grep -q "ok installed"; then
  # The libFuzzer and ASan runtimes.
  apt-get install -y -qq --no-install-recommends libclang-rt-22-dev
fi

BUILD=build-fuzz
if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
    -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
    -DPARALLAX_ENABLE_FUZZER=ON
fi
cmake --build "$BUILD" --target parallax-onnx-fuzzer

CORPUS="$BUILD/corpus"
mkdir -p "$CORPUS" "$BUILD/artifacts"
cp examples/models/*.onnx test/Target/ONNX/Inputs/*.onnx test/Target/ONNX/*.onnxtext "$CORPUS"/
# A spread of ONNX's own models (every 8th, to keep start-up short).
find /usr/share/libonnx-testdata/data -name model.onnx | sort | awk 'NR % 8 == 0' |
  while read -r model; do
    cp "$model" "$CORPUS/$(echo "$model" | md5sum | cut -c1-16).onnx"
  done

ASAN_OPTIONS=detect_leaks=0 "$BUILD/bin/parallax-onnx-fuzzer" "$CORPUS" \
  -max_total_time="$SECONDS_TO_RUN" -max_len=262144 -rss_limit_mb=4096 \
  -artifact_prefix="$BUILD/artifacts/" -print_final_stats=1
