#!/usr/bin/python3
"""The cost model's predictions for the paper's cluster beside the paper's
measurements (docs/cost-model.md).

  paper_speedups.py [--compile build/bin/parallax-compile] [--work DIR]

Writes the shape-only models of examples/models/paper_models.py (LM1B,
NMT, ResNet-50), plans each with `parallax-compile --plan-only
--plan-report` for the paper's 8 machines x 6 GPUs (100 Gb/s, 5 us), with
the links within a machine free and at PCIe's 10 GB/s each way, and
prints, as markdown:
- communication per step by strategy (hybrid, AllReduce only, PS only);
- LM1B's words per second: the paper's measured hybrid throughput gives
  the step's compute (its time less the predicted communication), and
  each strategy is predicted at that compute plus its communication,
  beside the paper's measured throughput;
- NMT's and ResNet-50's predicted communication ratio of AllReduce only
  to the hybrid, beside the paper's times to accuracy (it gives no
  throughput for them).
Planning reads no weights: it takes seconds and little memory.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLUSTER = "machines=8,workers-per-machine=6,bandwidth=100Gbps,latency=5us"
LINKS = [("local links free", ""), ("PCIe 10 GB/s", ",local-bandwidth=10GB/s")]
MODELS = [("LM1B", "lm1b", "batch=128,positions=2560"),
          ("NMT", "nmt", "batch=128"),
          ("ResNet-50", "resnet50", "batch=64")]
STRATEGIES = ["hybrid", "allreduce", "ps"]
# The paper's LM1B throughput on 48 GPUs (words per second), and its
# words per step: 48 workers x 128 x 20 tokens.
PAPER_LM1B = {"hybrid": 275e3, "allreduce": 138e3, "ps": 230e3}
LM1B_WORDS = 48 * 128 * 20
PAPER_TO_ACCURACY = {"NMT": "hybrid 2.3x faster than Horovod",
                     "ResNet-50": "equal to Horovod"}


def plan(compile_tool, model, bind, links, work):
    report = work / f"{model}{links.replace('/', '_').replace(',', '_')}.json"
    subprocess.run([compile_tool, str(work / f"{model}.onnx"), "--bind", bind,
                    "--plan-only", "--cluster", CLUSTER + links,
                    "--plan-report", str(report)],
                   check=True, stdout=subprocess.DEVNULL)
    totals = json.loads(report.read_text())["totals"]
    return {s: totals[s]["seconds_per_step"] for s in STRATEGIES}


def thousands(words_per_second):
    return f"{words_per_second / 1e3:.0f}k"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", default=ROOT / "build" / "bin" / "parallax-compile")
    parser.add_argument("--work", type=pathlib.Path,
                        help="where the models go (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or pathlib.Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "examples" / "models" / "paper_models.py"),
                        str(work)], check=True, stdout=subprocess.DEVNULL)
        seconds = {(name, label): plan(str(args.compile), model, bind, links, work)
                   for name, model, bind in MODELS for label, links in LINKS}

    print("Communication per step, 8 machines x 6 GPUs, 100 Gb/s, 5 us:\n")
    print("| model | links within a machine | hybrid | AllReduce only | PS only |")
    print("|---|---|---:|---:|---:|")
    for name, _, _ in MODELS:
        for label, _ in LINKS:
            s = seconds[(name, label)]
            print(f"| {name} | {label} | " +
                  " | ".join(f"{s[k]:.4f} s" for k in STRATEGIES) + " |")

    hybrid_step = LM1B_WORDS / PAPER_LM1B["hybrid"]
    compute = hybrid_step - seconds[("LM1B", LINKS[0][0])]["hybrid"]
    print(f"\nLM1B words per second on 48 GPUs (compute {compute:.3f} s a step: "
          f"the paper's hybrid step, {hybrid_step:.3f} s, less its predicted "
          "communication with the local links free):\n")
    print("| LM1B | hybrid | AllReduce only | PS only | hybrid / AllReduce only |")
    print("|---|---:|---:|---:|---:|")
    paper = PAPER_LM1B
    print(f"| measured (paper) | {thousands(paper['hybrid'])} | "
          f"{thousands(paper['allreduce'])} | {thousands(paper['ps'])} | "
          f"{paper['hybrid'] / paper['allreduce']:.2f}x |")
    for label, _ in LINKS:
        s = seconds[("LM1B", label)]
        rate = {k: LM1B_WORDS / (compute + s[k]) for k in STRATEGIES}
        print(f"| predicted, {label} | {thousands(rate['hybrid'])} | "
              f"{thousands(rate['allreduce'])} | {thousands(rate['ps'])} | "
              f"{rate['hybrid'] / rate['allreduce']:.2f}x |")

    print("\nAllReduce only's communication over the hybrid's, beside the "
          "paper's time to accuracy:\n")
    print("| model | predicted, local links free | predicted, PCIe 10 GB/s | paper |")
    print("|---|---:|---:|---|")
    for name in ("NMT", "ResNet-50"):
        ratios = [seconds[(name, label)]["allreduce"] / seconds[(name, label)]["hybrid"]
                  for label, _ in LINKS]
        print(f"| {name} | {ratios[0]:.2f}x | {ratios[1]:.2f}x | "
              f"{PAPER_TO_ACCURACY[name]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
