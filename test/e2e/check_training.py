#!/usr/bin/env python3
"""Builds the training program of an example model as PyTorch's reference
run was made (examples/models/data/MODEL/reference/OPTIMIZER/config.json),
runs it on the reference data, and compares the loss of every step and
every parameter after the last step with PyTorch's:
|got - want| <= 1e-4 |want| + 1e-6 (--rtol and --atol change them).
Standard library only.

With --workers N (and --strategy S) the program is built for N workers,
each with 1/N of the reference batch, and run with mpirun: it must still
match the one-worker PyTorch run.

Usage: check_training.py MODEL OPTIMIZER WORKDIR [--workers N]
                         [--strategy hybrid|allreduce|ps] [--target T]
  (parallax-compile on PATH, PARALLAX_SRC naming the source tree; mpirun on
  PATH for --workers)
"""

import argparse

import json
import os
import pathlib
import shlex
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from npy_close import load, parameter_mismatches  # noqa: E402

def closeness(rtol, atol):
    def close(got, want):
        return all(abs(g - w) <= rtol * abs(w) + atol for g, w in zip(got, want))
    return close


# The default tolerance (compare_runs.py uses it too).
close = closeness(1e-4, 1e-6)


def mpirun(workers):
    """The launcher prefix for `workers` ranks on this machine (as root,
    more ranks than cores, shared-memory transport only). PARALLAX_MPIRUN
    replaces the `mpirun` command (with options of its own, such as
    `-x NAME=VALUE`)."""
    launcher = shlex.split(os.environ.get("PARALLAX_MPIRUN", "mpirun"))
    return launcher + ["--oversubscribe", "--allow-run-as-root",
                       "--mca", "btl", "self,vader", "-np", str(workers)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("optimizer")
    parser.add_argument("work", type=pathlib.Path)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--strategy", default="hybrid")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="relative tolerance (1e-3 for the torchvision "
                        "models: long float32 sums over a batch's pixels "
                        "differ by summation order)")
    parser.add_argument("--atol", type=float, default=1e-6,
                        help="absolute tolerance (for weights near zero)")
    parser.add_argument("--launch", type=int, default=0,
                        help="compile without --workers and run the program "
                        "under mpirun -np N (the number of workers read at "
                        "run time)")
    parser.add_argument("--program", type=pathlib.Path,
                        help="run this program, built before (as --print-"
                        "compile says), instead of compiling one")
    parser.add_argument("--init", help="the program's --init (the model its "
                        "initial weights are read from, when not where it "
                        "was compiled from)")
    parser.add_argument("--print-compile", action="store_true",
                        help="print the parallax-compile command line for "
                        "WORKDIR/program and stop")
    parser.add_argument("--target", default="cpu",
                        help="parallax-compile's --target (cuda-sim runs the "
                        "GPU pipeline's kernels on the CPU)")
    args = parser.parse_args()
    if args.launch and args.workers:
        sys.exit("--launch and --workers exclude each other")
    model, optimizer, work = args.model, args.optimizer, args.work
    src = pathlib.Path(os.environ["PARALLAX_SRC"])
    data = src / "examples" / "models" / "data" / model
    reference = data / "reference" / optimizer
    config = json.loads((reference / "config.json").read_text())
    work.mkdir(parents=True, exist_ok=True)
    program = work / "program"
    workers = max(args.workers, args.launch, 1)
    if config["batch_size"] % workers:
        sys.exit(f"batch {config['batch_size']} does not split over {workers} workers")
    compile_cmd = ["parallax-compile", str(src / "examples" / "models" / f"{model}.onnx"),
                   "--batch-size", str(config["batch_size"] // workers),
                   "--optimizer", optimizer, "--lr", repr(config["lr"]),
                   "--target", args.target, "-o", str(program)]
    if "initial_accumulator_value" in config:
        compile_cmd += ["--initial-accumulator-value",
                        repr(config["initial_accumulator_value"])]
    if config["freeze"]:
        compile_cmd += ["--freeze", ",".join(config["freeze"])]
    if "bind" in config:
        compile_cmd += ["--bind", ",".join(f"{name}={value}" for name, value
                                           in config["bind"].items())]
    if args.workers:
        compile_cmd += ["--workers", str(args.workers), "--strategy", args.strategy]
    elif args.launch:
        compile_cmd += ["--strategy", args.strategy]
    if args.print_compile:
        print(" ".join(compile_cmd))
        return 0
    if args.program:
        program = args.program
    else:
        subprocess.run(compile_cmd, check=True)
    checkpoint = work / "checkpoint"
    metrics = work / "metrics.jsonl"
    launcher = mpirun(workers) if args.workers or args.launch else []
    # A command each rank runs the program through (the GPU check sets
    # per-rank environment variables with it).
    if launcher and os.environ.get("PARALLAX_RANK_WRAPPER"):
        launcher += shlex.split(os.environ["PARALLAX_RANK_WRAPPER"])
    subprocess.run(launcher + [str(program), "--data", str(data / "train"),
                    "--steps", str(config["steps"]), "--metrics", str(metrics),
                    "--save", str(checkpoint),
                    *(["--init", args.init] if args.init else [])], check=True)

    failures = []
    losses = [json.loads(line)["loss"] for line in metrics.read_text().splitlines()]
    _, want = load(reference / "losses.npy")
    tolerant = closeness(args.rtol, args.atol)
    if len(losses) != len(want) or not tolerant(losses, want):
        failures.append(f"losses {losses} != PyTorch's {list(want)}")
    parameters = sorted(p for p in reference.glob("*.npy") if p.name != "losses.npy")
    failures += parameter_mismatches(checkpoint, parameters, tolerant)
    run = f"{model} {optimizer}"
    if args.workers:
        run += f" {args.workers} workers {args.strategy}"
    elif args.launch:
        run += f" {args.launch} workers at run time {args.strategy}"
    for failure in failures:
        print(f"{run}: {failure}")
    print(f"{run}: {len(losses)} steps, {len(parameters)} "
          f"parameters, {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
