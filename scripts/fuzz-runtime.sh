#!/usr/bin/env bash
#===- fuzz-runtime.sh - Fuzz what training programs read from disk -------===#
#
# Usage: scripts/fuzz-runtime.sh [RUNS]   (default 1000000 executions;
# ctest runs 200000 as `fuzz-runtime`, in PARALLAX_FUZZ_DIR)
#
# Builds parallax-runtime-fuzzer (tools/parallax-runtime-fuzzer) and the
# runtime it links with clang-22, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-fuzz-runtime/ (plain clang++: the
# runtime needs no MLIR; runtime-sources.txt of the configured build,
# PARALLAX_BUILD_DIR or build/, lists its sources), seeds a corpus with
# the example models' data and a checkpoint, and runs RUNS executions.
# Crashing inputs are kept in build-fuzz-runtime/artifacts/ (the
# runtime's own error messages, the expected outcome for bad input, are
# hidden: -close_fd_mask=2; rerun an input without it to see them); turn
# each into a regression test (unittests/Support/NpyTest.cpp holds the
# ones found so far).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-1000000}

if ! ls /usr/lib/llvm-22/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
  >/dev/null 2>&1; then
  apt-get install -y -qq --no-install-recommends libclang-rt-22-dev
fi

# The runtime's sources as CMake lists them (lib/Runtime/CMakeLists.txt).
SOURCE_LIST=${PARALLAX_BUILD_DIR:-build}/runtime-sources.txt
[[ -f $SOURCE_LIST ]] || { echo "configure the build first (scripts/build.sh): $SOURCE_LIST lists the runtime's sources"; exit 1; }
mapfile -t RUNTIME_SOURCES < "$SOURCE_LIST"

BUILD=${PARALLAX_FUZZ_DIR:-build-fuzz-runtime}
mkdir -p "$BUILD/corpus" "$BUILD/artifacts"
FLAGS=(-std=c++17 -O1 -g -fopenmp -fno-omit-frame-pointer -Wno-deprecated-declarations
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -Iinclude -Ilib/Runtime -I/usr/lib/llvm-22/include -DOMPI_SKIP_MPICXX
  -DONNX_NAMESPACE=onnx -DONNX_ML=1
  $(mpicc --showme:compile))
source scripts/parallel.sh
mkdir -p "$BUILD/obj"
objects=()
for source in tools/parallax-runtime-fuzzer/parallax-runtime-fuzzer.cpp \
  "${RUNTIME_SOURCES[@]}"; do
  objects+=("$BUILD/obj/$(basename "$source" .cpp).o")
  run_parallel /usr/lib/llvm-22/bin/clang++ "${FLAGS[@]}" -c "$source" -o "${objects[-1]}"
done
wait_parallel
/usr/lib/llvm-22/bin/clang++ "${FLAGS[@]}" "${objects[@]}" \
  $(mpicc --showme:link) /usr/lib/llvm-22/lib/libomp.so -Wl,-rpath,/usr/lib/llvm-22/lib \
  -lonnx_proto -lprotobuf -o "$BUILD/parallax-runtime-fuzzer"

# Seeds: each example's data files (case 0), a checkpoint (case 1), names
# (case 2), models holding a variable's initial value (case 3).
n=0
for file in examples/models/data/*/train/*.npy examples/models/data/*/inputs/*.npy; do
  { printf '\x00'; head -c 4096 "$file"; } > "$BUILD/corpus/data$((n++))"
done
/usr/bin/python3 - "$BUILD/corpus/checkpoint" <<'PY'
import io, sys
import numpy as np
def npy(a):
    b = io.BytesIO(); np.save(b, a); return b.getvalue()
manifest = b'{"format": "parallax-checkpoint", "version": 1, "step": 3, "variables": []}'
w = npy(np.ones((4, 3), np.float32))
open(sys.argv[1], "wb").write(b"\x01" + manifest + b"\0" + w + b"\0" + w)
PY
printf '\x02dense/kernel:0' > "$BUILD/corpus/name"
/usr/bin/python3 - "$BUILD/corpus/model" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
def model(init):
    graph = helper.make_graph([], "g", [], [], [init])
    return b"\x03" + helper.make_model(graph).SerializeToString()
w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
open(sys.argv[1], "wb").write(model(w))
ext = TensorProto()
ext.name, ext.data_type = "w", TensorProto.FLOAT
ext.dims.extend([4, 3])
ext.data_location = TensorProto.EXTERNAL
for key, value in [("location", "w.data"), ("offset", "0"), ("length", "48")]:
    entry = ext.external_data.add()
    entry.key, entry.value = key, value
open(sys.argv[1] + ".external", "wb").write(model(ext))
PY

# libFuzzer's progress goes to a log; the summary (or a crash's report)
# is printed.
status=0
ASAN_OPTIONS=detect_leaks=0 "$BUILD/parallax-runtime-fuzzer" "$BUILD/corpus" \
  -runs="$RUNS" -max_len=8192 -rss_limit_mb=2048 -close_fd_mask=2 \
  -artifact_prefix="$BUILD/artifacts/" -print_final_stats=1 \
  > "$BUILD/fuzz.log" 2>&1 || status=$?
if ((status != 0)); then
  tail -n 60 "$BUILD/fuzz.log"
  echo "fuzz-runtime: FAILED (inputs in $BUILD/artifacts/)"
  exit "$status"
fi
grep -E '^(Done|stat::)' "$BUILD/fuzz.log"
echo "fuzz-runtime: $RUNS executions, no crash"
