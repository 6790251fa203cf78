#!/usr/bin/env bash
#===- run-example.sh - The README's main command ---------------------------===#
#
# Builds Parallax and runs it on the bundled examples.
#
# The end-to-end main job (a 4-worker training run of an ONNX language
# model comparing hybrid, AllReduce-only and PS-only) needs autodiff, the
# distribution passes and the communication runtime, which are not built
# yet. Until then this runs what exists: an ONNX language model compiled
# into a native inference program that reproduces PyTorch's loss, and the
# communication passes on a hand-written distributed training step.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh parallax-compile parallax-opt parallax-translate
BUILD_DIR=${PARALLAX_BUILD_DIR:-build}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

MODEL=examples/models/lstm_lm.onnx
DATA=examples/models/data/lstm_lm
echo
echo "== Import $MODEL (PyTorch 1.13 export, symbolic batch bound to 4)"
"$BUILD_DIR/bin/parallax-translate" --import-onnx "$MODEL" --batch-size 4 \
  --elide-large-constants | grep -E "parallax.variable" | sed 's/ = dense.*//; s/^ *//'

echo
echo "== parallax-compile $MODEL --mode inference --batch-size 4"
time "$BUILD_DIR/bin/parallax-compile" "$MODEL" --mode inference --batch-size 4 \
  -o "$WORK/lstm_lm"
"$WORK/lstm_lm" --inputs "$DATA/inputs" --outputs "$WORK/out"
python3 test/e2e/npy_close.py "$WORK/out/loss.npy" "$DATA/loss.npy" >/dev/null &&
  echo "loss matches PyTorch's on the reference batch (test/e2e/npy_close.py, rtol 1e-4)"

EXAMPLE=examples/mlir/embedding-step.mlir
echo
echo "== Communication passes on $EXAMPLE"
grep -E "parallax\.(allreduce|push|pull)" "$EXAMPLE" | sed 's/^ *//'
echo "-- after --parallax-bucket-allreduce --parallax-async-allreduce:"
"$BUILD_DIR/bin/parallax-opt" "$EXAMPLE" \
  --parallax-bucket-allreduce --parallax-async-allreduce |
  grep -E "parallax\.(allreduce|push|pull)" | sed 's/^ *//'
echo
echo "Training and distribution are not implemented yet (README.md, 'Status')."
