#!/usr/bin/env bash
#===- run-example.sh - The README's main command ---------------------------===#
#
# Builds Parallax and runs it on the bundled example.
#
# The end-to-end main job (ONNX language model in, 4-worker training run out,
# with the hybrid vs AllReduce-only vs PS-only comparison) needs the ONNX
# importer, autodiff, code generation and the runtime, which are not built
# yet. Until then this runs the distribution-level part that exists: the
# communication passes on a hand-written distributed training step.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh parallax-opt
BUILD_DIR=${PARALLAX_BUILD_DIR:-build}
EXAMPLE=examples/mlir/embedding-step.mlir

echo
echo "== Input: $EXAMPLE (variables and their synchronisation)"
grep -E "parallax\.(variable|allreduce|push|pull)" "$EXAMPLE" | sed 's/^ *//'
echo
echo "== parallax-opt --parallax-bucket-allreduce --parallax-async-allreduce"
"$BUILD_DIR/bin/parallax-opt" "$EXAMPLE" \
  --parallax-bucket-allreduce --parallax-async-allreduce |
  grep -E "parallax\.(allreduce|push|pull)" | sed 's/^ *//'
echo
echo "Two dense gradients now travel in one asynchronous allreduce that"
echo "overlaps the embedding push. Training end to end is not implemented"
echo "yet (see README.md, 'Status')."
