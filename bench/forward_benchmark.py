#!/usr/bin/python3
"""Forward-pass time of the example models: parallax-compile vs PyTorch.

For each example model (examples/models/export.py), builds a batch of B
examples (PyTorch's reference batch of 4 repeated), compiles the model with
parallax-compile --mode inference -O3 --batch-size B, and compares the
program's model time (PARALLAX_TIMING; one process runs the model R times
with --repeat R) with PyTorch 1.13's forward time in eval mode after a
warm-up run, both single-threaded, best of R runs. Reports both and the
ratio (parallax / PyTorch; <= 1.0 is faster). Never asserts timings.

Needs Debian's python3-torch; usage:
  /usr/bin/python3 bench/forward_benchmark.py [--batch 64] [--repeat 20]
      [--flags "--unroll-loops"]
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "models"))
import export  # noqa: E402  (the example models' definitions)

ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", PARALLAX_THREADS="1",
           PARALLAX_TIMING="1")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--flags", default="",
                        help="extra parallax-compile flags, space-separated")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    compile_tool = str(args.build / "bin" / "parallax-compile")
    print(f"{'model':<16} {'batch':>5} {'parallax ms':>12} {'pytorch ms':>11} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for name, (model, inputs) in export.models(large=False).items():
            export.distinct_initial_values(model)
            model.eval()
            reps = args.batch // 4
            batch = {k: v.repeat(reps, *([1] * (v.dim() - 1))) for k, v in inputs.items()}
            onnx_path = tmp / f"{name}.onnx"
            export.export(name, model, inputs, tmp, 17, "")
            program = tmp / f"{name}.bin"
            subprocess.run([compile_tool, str(onnx_path), "--mode", "inference", "-O3",
                            "--batch-size", str(args.batch), "-o", str(program),
                            *args.flags.split()], check=True)
            in_dir, out_dir = tmp / f"{name}.in", tmp / f"{name}.out"
            in_dir.mkdir()
            for k, v in batch.items():
                np.save(in_dir / f"{k}.npy", v.numpy())
            run = subprocess.run([str(program), "--inputs", str(in_dir), "--outputs",
                                  str(out_dir), "--repeat", str(args.repeat)],
                                 check=True, env=ENV, capture_output=True, text=True)
            ours = min(float(line.split()[1]) for line in run.stderr.splitlines()
                       if line.startswith("forward: "))
            theirs = float("inf")
            with torch.no_grad():
                model(*batch.values())
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    model(*batch.values())
                    theirs = min(theirs, time.perf_counter() - start)
            print(f"{name:<16} {args.batch:>5} {ours * 1e3:>12.2f} {theirs * 1e3:>11.2f} "
                  f"{ours / theirs:>6.2f}")


if __name__ == "__main__":
    main()
