#!/usr/bin/env python3
"""Trains an example model with the same flags for two targets and
compares every step's loss and every saved parameter (1e-5 relative,
1e-7 absolute): the GPU pipeline (cuda-sim) against the CPU one, for the
update rules PyTorch's reference runs do not cover. With `--workers N`
among the flags, each program gets 1/N of the reference batch per worker
and runs under mpirun. Standard library only.

Usage: compare_targets.py MODEL WORKDIR TARGET_A TARGET_B [FLAG ...]
  (parallax-compile on PATH, and mpirun for --workers; PARALLAX_SRC naming
  the source tree)
"""

import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_training import mpirun  # noqa: E402
from npy_close import parameter_mismatches  # noqa: E402


def close(got, want):
    return all(abs(g - w) <= 1e-5 * abs(w) + 1e-7 for g, w in zip(got, want))


def train(src, model, work, target, flags):
    data = src / "examples" / "models" / "data" / model
    config = json.loads((data / "reference" / "sgd" / "config.json").read_text())
    program = work / f"program.{target}"
    freeze = ["--freeze", ",".join(config["freeze"])] if config["freeze"] else []
    if "bind" in config:  # bags of varying size: the most ids a batch holds
        freeze += ["--bind", ",".join(f"{k}={v}" for k, v in config["bind"].items())]
    workers = int(flags[flags.index("--workers") + 1]) if "--workers" in flags else 1
    subprocess.run(["parallax-compile", str(src / "examples" / "models" / f"{model}.onnx"),
                    "--batch-size", str(config["batch_size"] // workers), "--target", target,
                    *freeze, *flags, "-o", str(program)], check=True)
    metrics, saved = work / f"metrics.{target}.jsonl", work / f"saved.{target}"
    launcher = mpirun(workers) if workers > 1 else []
    subprocess.run(launcher + [str(program), "--data", str(data / "train"), "--steps",
                    str(config["steps"]), "--metrics", str(metrics), "--save", str(saved)],
                   check=True, stdout=subprocess.DEVNULL)
    losses = [json.loads(line)["loss"] for line in metrics.read_text().splitlines()]
    return losses, saved


def main():
    model, work, first, second, flags = (sys.argv[1], pathlib.Path(sys.argv[2]),
                                         sys.argv[3], sys.argv[4], sys.argv[5:])
    src = pathlib.Path(os.environ["PARALLAX_SRC"])
    work.mkdir(parents=True, exist_ok=True)
    losses_a, saved_a = train(src, model, work, first, flags)
    losses_b, saved_b = train(src, model, work, second, flags)
    failures = [] if close(losses_b, losses_a) else [f"losses {losses_b} != {losses_a}"]
    parameters = sorted(saved_a.glob("*.npy"))
    failures += parameter_mismatches(saved_b, parameters, close)
    run = f"{model} {' '.join(flags)}"
    for failure in failures:
        print(f"{run}: {failure}")
    print(f"{run}: {second} = {first} over {len(losses_a)} steps, {len(parameters)} "
          f"parameters, {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
