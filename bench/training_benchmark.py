#!/usr/bin/python3
"""Training-step time and peak memory of the example models: the training
programs parallax-compile builds vs PyTorch 1.13, one worker.

For each example model (examples/models/export.py), B examples per step
(PyTorch's reference batch of 4 repeated), S steps of SGD: parallax-compile
-O3 --batch-size B builds the program, which trains on .npy data and
reports each step's time in its metrics; PyTorch trains the same model
(eval mode, as exported: no dropout, batch norm with running statistics)
with torch.optim.SGD. Both single-threaded. Each side runs R times,
alternating (a shared machine's load varies from second to second), and
reports the best of its R median step times after W warm-up steps, the
ratio (parallax / PyTorch; <= 1.0 is faster),
and the peak resident memory of each process (its whole address space:
libraries, data and model). Never asserts timings.

Needs Debian's python3-torch; usage:
  /usr/bin/python3 bench/training_benchmark.py [--batch 64] [--steps 30]
      [--runs 3] [--flags "--unroll-loops"] [--models cnn,...]
"""

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "models"))
import export  # noqa: E402  (the example models' definitions)

ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def batches(inputs, batch, steps):
    reps = batch * steps // 4
    return {k: v.repeat(reps, *([1] * (v.dim() - 1))) for k, v in inputs.items()}


def torch_child(name, batch, steps, warmup):
    """Runs in a fresh process: PyTorch's training loop, then its step
    times and peak RSS as JSON on stdout."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, inputs = export.models(large=False)[name]
    export.distinct_initial_values(model)
    model.eval()
    data = batches(inputs, batch, steps)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for step in range(steps):
        chunk = [v[step * batch:(step + 1) * batch] for v in data.values()]
        start = time.perf_counter()
        opt.zero_grad()
        model(*chunk).backward()
        opt.step()
        times.append(time.perf_counter() - start)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"step_s": statistics.median(times[warmup:]), "rss_mb": rss}))


def run_measured(command):
    """Runs `command` in a fresh Python process and returns its peak RSS
    (MB) with the command's stdout."""
    wrapper = ("import resource, subprocess, sys\n"
               "out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True)\n"
               "sys.stderr.write(out.stdout)\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n")
    run = subprocess.run([sys.executable, "-c", wrapper, *command], check=True,
                         capture_output=True, text=True, env=ENV)
    return float(run.stdout.strip()), run.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--flags", default="",
                        help="extra parallax-compile flags, space-separated")
    parser.add_argument("--models", help="comma-separated subset of the models")
    parser.add_argument("--torch-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_child:
        return torch_child(args.torch_child, args.batch, args.steps, args.warmup)
    torch.manual_seed(0)
    compile_tool = str(args.build / "bin" / "parallax-compile")
    print(f"{'model':<16} {'batch':>5} {'parallax ms':>12} {'pytorch ms':>11} "
          f"{'ratio':>6} {'parallax MB':>12} {'pytorch MB':>11} {'compile s':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for name, (model, inputs) in export.models(large=False).items():
            if args.models and name not in args.models.split(","):
                continue
            export.distinct_initial_values(model)
            export.export(name, model, inputs, tmp, 17, "")
            frozen = [n for n, b in model.named_buffers() if b.is_floating_point()]
            program = tmp / f"{name}.bin"
            command = [compile_tool, str(tmp / f"{name}.onnx"), "-O3", "--batch-size",
                       str(args.batch), "--lr", "0.01", "-o", str(program),
                       *args.flags.split()]
            if frozen:
                command += ["--freeze", ",".join(frozen)]
            start = time.perf_counter()
            subprocess.run(command, check=True)
            compile_s = time.perf_counter() - start
            data = tmp / f"{name}.data"
            data.mkdir()
            for k, v in batches(inputs, args.batch, args.steps).items():
                np.save(data / f"{k}.npy", v.numpy())
            metrics = tmp / f"{name}.jsonl"
            ours = theirs = None
            for _ in range(args.runs):
                ours_mb, _ = run_measured([str(program), "--data", str(data), "--steps",
                                           str(args.steps), "--metrics", str(metrics)])
                steps = [json.loads(line)["time_s"]
                         for line in metrics.read_text().splitlines()]
                median = statistics.median(steps[args.warmup:])
                ours = median if ours is None else min(ours, median)
                child = subprocess.run(
                    [sys.executable, __file__, "--torch-child", name, "--batch",
                     str(args.batch), "--steps", str(args.steps), "--warmup",
                     str(args.warmup)],
                    check=True, capture_output=True, text=True, env=ENV)
                run = json.loads(child.stdout.strip().splitlines()[-1])
                if theirs is None or run["step_s"] < theirs["step_s"]:
                    theirs = run
            print(f"{name:<16} {args.batch:>5} {ours * 1e3:>12.2f} "
                  f"{theirs['step_s'] * 1e3:>11.2f} {ours / theirs['step_s']:>6.2f} "
                  f"{ours_mb:>12.0f} {theirs['rss_mb']:>11.0f} {compile_s:>10.2f}")


if __name__ == "__main__":
    main()
