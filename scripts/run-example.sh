#!/usr/bin/env bash
#===- run-example.sh - The README's main command ---------------------------===#
#
# Builds Parallax and runs it on the bundled examples.
#
# The end-to-end main job (a 4-worker training run of an ONNX language
# model comparing hybrid, AllReduce-only and PS-only) needs the MPI
# communication runtime, which is not built yet. Until then this runs what
# exists: the bundled LSTM language model compiled into a training program
# that reproduces PyTorch's training run (8 Adagrad steps, row-sparse
# embedding updates), the plan for 4 workers, and the training step
# rewritten for them.
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
echo "== parallax-compile $MODEL --batch-size 4 --optimizer adagrad --lr 0.02 (training program)"
time "$BUILD_DIR/bin/parallax-compile" "$MODEL" --batch-size 4 \
  --optimizer adagrad --lr 0.02 -o "$WORK/lstm_train"
"$WORK/lstm_train" --data "$DATA/train" --steps 8 --log-every 2 \
  --metrics "$WORK/metrics.jsonl" --save "$WORK/checkpoint"
echo "-- compared with PyTorch 1.13's run (test/e2e/check_training.py):"
PATH="$BUILD_DIR/bin:$PATH" PARALLAX_SRC="$PWD" \
  python3 test/e2e/check_training.py lstm_lm adagrad "$WORK/check" 2>/dev/null |
  tail -n 1

echo
echo "== The plan for 4 workers (one per machine, 10 Gb/s), measured on the data"
"$BUILD_DIR/bin/parallax-compile" "$MODEL" --batch-size 4 --plan-only \
  --workers 4 --profile-data "$DATA/train" --print-plan

echo
echo "== The training step rewritten for 4 workers (hybrid): collectives"
"$BUILD_DIR/bin/parallax-translate" --import-onnx "$MODEL" --batch-size 4 |
  "$BUILD_DIR/bin/parallax-opt" --parallax-autodiff \
    --parallax-sparsity-analysis=workers=4 --parallax-distribute=workers=4 \
    --parallax-optimizer="optimizer=adagrad lr=0.02" |
  grep -E "parallax\.(allreduce_start|allreduce_wait|push|pull)" |
  sed 's/^ *//' | cut -c1-150
echo
echo "Running the distributed step needs the MPI runtime: not implemented yet"
echo "(README.md, 'Status')."
