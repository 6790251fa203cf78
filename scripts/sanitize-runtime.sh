#!/usr/bin/env bash
#===- sanitize-runtime.sh - The runtime under ASan and UBSan -------------===#
#
# Usage: scripts/sanitize-runtime.sh   (after scripts/build.sh; ctest runs
# it as `sanitize-runtime`)
#
# Builds the runtime and its unit tests with clang-22, AddressSanitizer and
# UndefinedBehaviorSanitizer (any report is fatal) into build-sanitize/,
# runs the unit tests (the parameter-store tests under mpirun -np 4), then
# compiles the example models with build/bin/parallax-compile, links them
# with the sanitized runtime and trains each (one worker, two workers
# through the parameter store and AllReduce, checkpoints and restores,
# inference), and feeds them bad data that must be refused cleanly.
# Prints "sanitize-runtime: N runs clean" or the first report and fails.
# PARALLAX_BUILD_DIR (default build) has parallax-compile;
# PARALLAX_SANITIZE_DIR (default build-sanitize) receives the builds.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${PARALLAX_SANITIZE_DIR:-$ROOT/build-sanitize}
BUILD_DIR=${PARALLAX_BUILD_DIR:-$ROOT/build}
COMPILE=$BUILD_DIR/bin/parallax-compile
[[ -x $COMPILE ]] || { echo "build parallax-compile first (scripts/build.sh)"; exit 1; }
if ! ls /usr/lib/llvm-22/lib/clang/*/lib/linux/libclang_rt.asan-x86_64.a \
  >/dev/null 2>&1; then
  apt-get install -y -qq --no-install-recommends libclang-rt-22-dev
fi
mkdir -p "$BUILD/obj"
CXX=/usr/lib/llvm-22/bin/clang++
SAN=(-fopenmp -fsanitize=address,undefined -fno-sanitize-recover=all -Wno-deprecated-declarations
  -fno-omit-frame-pointer -g)
MPI_CFLAGS=$(mpicc --showme:compile)
MPI_LIBS=$(mpicc --showme:link)
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

source scripts/parallel.sh
# The runtime and the tests' sources, one compiler per core.
compile() { # SOURCE
  $CXX -std=c++17 -O1 "${SAN[@]}" -Iinclude -Ilib/Runtime -I/usr/lib/llvm-22/include \
    -DOMPI_SKIP_MPICXX -DONNX_NAMESPACE=onnx -DONNX_ML=1 $MPI_CFLAGS \
    -c "$1" -o "$BUILD/obj/$(basename "$1" .cpp).o"
}
# The runtime's sources as CMake lists them (lib/Runtime/CMakeLists.txt).
mapfile -t RUNTIME_SOURCES < "$BUILD_DIR/runtime-sources.txt"
TEST_SOURCES=(unittests/Support/{FileNames,Npy,Segments}Test.cpp unittests/Runtime/{BatchPrefetch,CpuKernels,InputChecks,MemRefCopy,Optimizers,Profile,Threads}Test.cpp)
for source in "${RUNTIME_SOURCES[@]}" "${TEST_SOURCES[@]}" unittests/Runtime/ParameterStoreTest.cpp; do
  run_parallel compile "$source"
done
wait_parallel
objects() { for source in "$@"; do echo "$BUILD/obj/$(basename "$source" .cpp).o"; done; }
rm -f "$BUILD/libParallaxRuntime.a"
ar rcs "$BUILD/libParallaxRuntime.a" $(objects "${RUNTIME_SOURCES[@]}")
OPENMP=(/usr/lib/llvm-22/lib/libomp.so -Wl,-rpath,/usr/lib/llvm-22/lib)
RUNTIME=("$BUILD/libParallaxRuntime.a" $MPI_LIBS "${OPENMP[@]}" -lonnx_proto -lprotobuf -lm)

$CXX "${SAN[@]}" $(objects "${TEST_SOURCES[@]}") \
  "${RUNTIME[@]}" -lgtest -lgtest_main -pthread -o "$BUILD/runtime-tests"
$CXX "${SAN[@]}" $(objects unittests/Runtime/ParameterStoreTest.cpp) \
  "${RUNTIME[@]}" -lgtest -pthread -o "$BUILD/parameter-store-tests"

LOG=$BUILD/log
: > "$LOG"
runs=0
# Runs a command that must succeed (or, with `fails`, exit 1 with a
# message); either way no sanitizer may report.
check() {
  local expect=ok
  if [[ $1 == fails ]]; then expect=fails; shift; fi
  local status=0
  "$@" >> "$LOG" 2>&1 || status=$?
  if grep -q "ERROR: AddressSanitizer\|runtime error:\|LeakSanitizer" "$LOG"; then
    echo "sanitize-runtime: a sanitizer reported on: $*"; cat "$LOG"; exit 1
  fi
  if [[ $expect == ok && $status != 0 ]] || [[ $expect == fails && $status != 1 ]]; then
    echo "sanitize-runtime: exit $status (expected $expect): $*"; tail -20 "$LOG"; exit 1
  fi
  runs=$((runs + 1))
}
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --mca btl self,vader)

check "$BUILD/runtime-tests"
check "${MPIRUN[@]}" -np 4 "$BUILD/parameter-store-tests"
check "${MPIRUN[@]}" -np 4 -x PARALLAX_RANKS_PER_MACHINE=2 "$BUILD/parameter-store-tests"

# Programs: generated code (not instrumented) with the sanitized runtime.
program() { # NAME MODEL [parallax-compile flags...]
  local name=$1 model=$2
  shift 2
  "$COMPILE" "examples/models/$model.onnx" --emit obj -o "$BUILD/$name.o" "$@"
  $CXX "${SAN[@]}" "$BUILD/$name.o" "${RUNTIME[@]}" -o "$BUILD/$name"
}
WORK=$BUILD/work
rm -rf "$WORK" && mkdir -p "$WORK"
DATA=examples/models/data
for model in lstm_lm gru_lm transformer_lm wide_deep cnn; do
  program "$model" "$model" --batch-size 4 --optimizer adam
  check "$BUILD/$model" --data "$DATA/$model/train" --steps 4 \
    --save "$WORK/$model.ckpt" --metrics "$WORK/$model.jsonl" --trace "$WORK/$model.trace.json"
  check "$BUILD/$model" --data "$DATA/$model/train" --steps 6 \
    --restore "$WORK/$model.ckpt" --save "$WORK/$model.ckpt" --save-every 1
  program "$model.infer" "$model" --batch-size 4 --mode inference
  check "$BUILD/$model.infer" --inputs "$DATA/$model/inputs" --outputs "$WORK/$model.out"
done
program lstm.ps lstm_lm --batch-size 2 --strategy ps --optimizer adagrad
check "${MPIRUN[@]}" -np 2 "$BUILD/lstm.ps" --data "$DATA/lstm_lm/train" --save "$WORK/lstm.ps.ckpt"
check "${MPIRUN[@]}" -np 4 -x PARALLAX_RANKS_PER_MACHINE=2 "$BUILD/lstm.ps" --data "$DATA/lstm_lm/train" --steps 2
program wd.hybrid wide_deep --batch-size 2 --workers 2
check "${MPIRUN[@]}" -np 2 "$BUILD/wd.hybrid" --data "$DATA/wide_deep/train" --trace "$WORK/wd.trace.json"

# Bad data is refused cleanly.
edit() { /usr/bin/python3 test/e2e/edit_npy.py "$@"; }
edit "$DATA/lstm_lm/train" "$WORK/id200" 'tokens[5,3]=200'
check fails "$BUILD/lstm_lm" --data "$WORK/id200"
check fails "${MPIRUN[@]}" -np 2 "$BUILD/lstm.ps" --data "$WORK/id200"
edit "$DATA/lstm_lm/train" "$WORK/label" 'targets[1,1]=-1'
check fails "$BUILD/lstm_lm" --data "$WORK/label"
edit "$DATA/wide_deep/inputs" "$WORK/wd.bad" 'categorical[1,0]=-1001'
check fails "$BUILD/wide_deep.infer" --inputs "$WORK/wd.bad" --outputs "$WORK/wd.bad.out"
edit "$DATA/cnn/train" "$WORK/cnn.nan" 'images[0,0,0,0]=nan'
check fails "$BUILD/cnn" --data "$WORK/cnn.nan"
check fails "$BUILD/lstm_lm" --data "$DATA/lstm_lm/train" --save "$DATA/lstm_lm/train"
check fails "$BUILD/lstm_lm" --data "$DATA/lstm_lm/train" --metrics /dev/full
# Initial weights from another copy of the model, and from one that differs.
check "$BUILD/cnn" --data "$DATA/cnn/train" --steps 1 --init examples/models/cnn.opset14.onnx
check fails "$BUILD/cnn" --data "$DATA/cnn/train" --steps 1 --init examples/models/lstm_lm.onnx
check "$BUILD/cnn" --data "$DATA/cnn/train" --steps 1 --init "$WORK/cnn.ckpt"
echo "sanitize-runtime: $runs runs clean (ASan + UBSan)"
