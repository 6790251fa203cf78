#!/usr/bin/env bash
#===- soak-cluster.sh - Many training runs on an emulated cluster ---------===#
#
# Usage (root, after the build):
#   scripts/soak-cluster.sh [--machines M] [--rate RATE] [--runs R]
#                           [--model NAME] [--steps S] [--keep DIR]
#
# Compiles an example model (examples/models/NAME.onnx, default wide_deep)
# for M workers under each strategy (hybrid, allreduce, ps), then, on one
# emulated cluster of M machines (scripts/emulated-cluster.sh, default 4 at
# 1gbit), runs every program R times (default 20) for S steps (default
# 20, on the bundled data repeated as often as needed), each bounded by
# `timeout` and --comm-timeout. A run fails when it exits non-zero or its
# losses differ from the strategy's first run (the runs are deterministic).
# Prints one line per run and a summary per strategy; the logs of failed
# runs are kept in DIR (default a fresh directory under /tmp, printed).
# Exits 1 when any run failed, 77 where namespaces cannot be made.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."

MACHINES=4 RATE=1gbit RUNS=20 MODEL=wide_deep STEPS=20 KEEP=""
while [[ $# -gt 0 ]]; do
  case $1 in
  --machines) MACHINES=$2; shift 2 ;;
  --rate) RATE=$2; shift 2 ;;
  --runs) RUNS=$2; shift 2 ;;
  --model) MODEL=$2; shift 2 ;;
  --steps) STEPS=$2; shift 2 ;;
  --keep) KEEP=$2; shift 2 ;;
  *) echo "soak-cluster: unknown option '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "soak-cluster: --runs must be a positive integer" >&2; exit 2; }
model=examples/models/$MODEL.onnx
data=examples/models/data/$MODEL/train
[[ -f $model && -d $data ]] || { echo "soak-cluster: no $model with data in $data" >&2; exit 2; }
compiler=build/bin/parallax-compile
[[ -x $compiler ]] || { echo "soak-cluster: build first (scripts/build.sh)" >&2; exit 2; }

KEEP=${KEEP:-$(mktemp -d /tmp/parallax-soak.XXXXXX)}
mkdir -p "$KEEP"
work=$(mktemp -d /tmp/parallax-soak-work.XXXXXX)
trap 'rm -rf "$work"' EXIT
batch=$((8 / MACHINES > 0 ? 8 / MACHINES : 1))
# The bundled data, repeated until it holds the steps' examples.
/usr/bin/python3 - "$data" "$work/data" $((STEPS * MACHINES * batch)) <<'PY'
import os, sys
import numpy as np
source, target, examples = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(target)
for name in os.listdir(source):
    array = np.load(os.path.join(source, name))
    copies = -(-examples // array.shape[0])
    np.save(os.path.join(target, name),
            np.concatenate([array] * copies)[:max(examples, array.shape[0])])
PY
data=$work/data
for strategy in hybrid allreduce ps; do
  "$compiler" "$model" --batch-size "$batch" --workers "$MACHINES" \
    --strategy "$strategy" -o "$work/$strategy"
done

# One cluster for every run; the loop runs inside it.
cat > "$work/runs.sh" <<EOF
#!/usr/bin/env bash
failed=0
for strategy in hybrid allreduce ps; do
  bad=0
  for ((run = 1; run <= $RUNS; run++)); do
    log=$work/\$strategy.\$run.log
    start=\$(date +%s.%N)
    status=0
    timeout --kill-after=5 120 \$CLUSTER_MPIRUN $work/\$strategy --data $data \
      --steps $STEPS --comm-timeout 20 --metrics $work/\$strategy.\$run.jsonl \
      > "\$log" 2>&1 || status=\$?
    seconds=\$(awk -v a="\$start" -v b="\$(date +%s.%N)" 'BEGIN { print b - a }')
    verdict=ok
    if [[ \$status -ne 0 ]]; then
      verdict="exit \$status"
    elif ! diff -q <(sed 's/"time_s.*//' $work/\$strategy.1.jsonl) \
                   <(sed 's/"time_s.*//' $work/\$strategy.\$run.jsonl) >/dev/null; then
      verdict="losses differ from run 1"
    fi
    printf 'soak: %-9s run %2d/%d  %6.1f s  %s\n' \$strategy \$run $RUNS \$seconds "\$verdict"
    if [[ \$verdict != ok ]]; then
      bad=\$((bad + 1))
      cp "\$log" $KEEP/
    fi
  done
  echo "soak: \$strategy: $RUNS runs, \$bad failed"
  failed=\$((failed + bad))
done
[[ \$failed -eq 0 ]]
EOF
chmod +x "$work/runs.sh"
status=0
scripts/emulated-cluster.sh --machines "$MACHINES" --rate "$RATE" \
  --timeout $((RUNS * 3 * 130 + 60)) -- "$work/runs.sh" || status=$?
if [[ $status -eq 0 ]]; then
  echo "soak-cluster: every run passed"
  rmdir "$KEEP" 2>/dev/null || true
elif [[ $status -ne 77 ]]; then
  echo "soak-cluster: failures; their logs are in $KEEP" >&2
fi
exit "$status"
