#!/usr/bin/env bash
#===- run-example.sh - The README's main command ---------------------------===#
#
# Builds Parallax and trains a CTR model whose tables (1M + 200K + 1K ids x
# 32, 154 MB, generated here with random weights and Zipf ids) are where
# the hybrid matters, on 4 workers: on an emulated cluster of 4 machines
# linked at 1 Gb/s when it runs as root (scripts/emulated-cluster.sh:
# network namespaces, OpenMPI over TCP), else over shared memory on this
# machine, saying so. Prints the plan, the training progress, the check
# that 4 workers equal one worker on 4x the batch, and hybrid against
# AllReduce-only and PS-only: examples/s and bytes per step.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh parallax-compile parallax-opt parallax-translate ParallaxRuntime
BIN=$PWD/${PARALLAX_BUILD_DIR:-build}/bin
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
WORKERS=4 BATCH=256 STEPS=12

echo "== A CTR model: 3 tables of 1,000,000 + 200,000 + 1,000 ids x 32 (154 MB), 4 workers x batch $BATCH, Adagrad"
/usr/bin/python3 - "$WORK" "$((WORKERS * BATCH * STEPS))" <<'PY'
import pathlib, sys
import numpy as np
import onnx
from onnx import helper
sys.path.insert(0, "bench")
from scale_benchmark import make_ctr
work, examples = pathlib.Path(sys.argv[1]), int(sys.argv[2])
graph, _, _ = make_ctr(work, 1.0, np.random.default_rng(0), examples)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
model.ir_version = 8
onnx.save(model, work / "model.onnx")
PY

if scripts/emulated-cluster.sh --machines 1 --timeout 10 -- true 2>/dev/null; then
  NETWORK="4 emulated machines at 1 Gb/s (network namespaces, TCP)"
  # (OpenMPI's rsh launcher warns that it cannot set the agent's process
  # group: harmless, filtered.)
  launch() { scripts/emulated-cluster.sh --machines $WORKERS --rate 1gbit \
    --timeout 600 -- sh -c "\$CLUSTER_MPIRUN $*" 2>&1 | { grep -v setpgid || true; }; }
  CLUSTER="machines=4,workers-per-machine=1,bandwidth=1Gbps"
else
  NETWORK="shared memory on this machine (not root: no emulated network)"
  launch() { mpirun --oversubscribe --mca btl self,vader -np $WORKERS "$@"; }
  CLUSTER="machines=4,workers-per-machine=1"
fi
echo "   network: $NETWORK"

echo
echo "== The plan (alpha measured on the data)"
"$BIN/parallax-compile" "$WORK/model.onnx" --batch-size $BATCH --cluster "$CLUSTER" \
  --profile-data "$WORK/data" --plan-only --print-plan
for strategy in hybrid allreduce ps; do
  "$BIN/parallax-compile" "$WORK/model.onnx" --batch-size $BATCH --cluster "$CLUSTER" \
    --optimizer adagrad --lr 0.05 --strategy $strategy --profile-data "$WORK/data" \
    --plan-report "$WORK/plan.$strategy.json" -o "$WORK/ctr.$strategy"
done
"$BIN/parallax-compile" "$WORK/model.onnx" --batch-size $((WORKERS * BATCH)) --workers 1 \
  --optimizer adagrad --lr 0.05 -o "$WORK/ctr.one"

echo
echo "== Training, hybrid: $WORKERS workers, $STEPS steps"
launch "$WORK/ctr.hybrid" --data "$WORK/data" --steps $STEPS --log-every 4 \
  --metrics "$WORK/metrics.hybrid.jsonl" --save "$WORK/hybrid.ckpt"
for strategy in allreduce ps; do
  echo "   ... and $strategy-only"
  launch "$WORK/ctr.$strategy" --data "$WORK/data" --steps $STEPS --log-every 1000 \
    --metrics "$WORK/metrics.$strategy.jsonl" >/dev/null 2>&1
done

echo
echo "== $WORKERS workers vs one worker on ${WORKERS}x the batch"
"$WORK/ctr.one" --data "$WORK/data" --steps $STEPS --log-every 1000 \
  --metrics "$WORK/metrics.one.jsonl" --save "$WORK/one.ckpt" >/dev/null 2>&1
/usr/bin/python3 - "$WORK" <<'PY'
import json, pathlib, sys
import numpy as np
work = pathlib.Path(sys.argv[1])
losses = {k: [json.loads(l)["loss"] for l in (work / f"metrics.{k}.jsonl").read_text().splitlines()]
          for k in ("hybrid", "one")}
worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses["hybrid"], losses["one"]))
params = [p.name for p in (work / "one.ckpt").glob("*.npy")]
pairs = [(np.load(work / "hybrid.ckpt" / p), np.load(work / "one.ckpt" / p)) for p in params]
diff = max(float(np.max(np.abs(a - b))) for a, b in pairs)
close = all(np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in pairs)
ok = worst < 1e-4 and close
print(f"losses of {len(losses['one'])} steps: largest relative difference {worst:.1e}; "
      f"{len(params)} saved arrays (weights, Adagrad sums): largest difference {diff:.1e}: "
      f"{'MATCH' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
PY

echo
echo "== Hybrid vs AllReduce-only vs PS-only (worker 0; median after 2 steps)"
/usr/bin/python3 - "$WORK" "$WORKERS" "$BATCH" <<'PY'
import json, pathlib, statistics, sys
work, workers, batch = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
print(f"{'strategy':<10} {'step ms':>9} {'examples/s':>11} {'bytes/step':>12} {'planned':>12}")
rows = {}
for strategy in ("hybrid", "allreduce", "ps"):
    lines = [json.loads(l) for l in (work / f"metrics.{strategy}.jsonl").read_text().splitlines()]
    step = statistics.median(l["time_s"] for l in lines[2:])
    moved = statistics.mean(l["bytes_sent"] + l["bytes_received"] for l in lines[2:])
    plan = json.loads((work / f"plan.{strategy}.json").read_text())
    planned = sum(v["predicted_bytes_per_step"][v["placement"]] for v in plan["variables"])
    rows[strategy] = (step, moved)
    print(f"{strategy:<10} {step * 1e3:>9.2f} {workers * batch / step:>11.0f} "
          f"{moved:>12.0f} {planned:>12.0f}")
h = rows["hybrid"]
print(f"hybrid: {rows['allreduce'][0] / h[0]:.1f}x AllReduce-only's examples/s with "
      f"{rows['allreduce'][1] / h[1]:.0f}x fewer bytes; {rows['ps'][0] / h[0]:.1f}x PS-only's")
PY
