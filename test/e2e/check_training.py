#!/usr/bin/env python3
"""Builds the training program of an example model as PyTorch's reference
run was made (examples/models/data/MODEL/reference/OPTIMIZER/config.json),
runs it on the reference data, and compares the loss of every step and
every parameter after the last step with PyTorch's:
|got - want| <= 1e-4 |want| + 1e-6. Standard library only.

Usage: check_training.py MODEL OPTIMIZER WORKDIR
  (parallax-compile on PATH, PARALLAX_SRC naming the source tree)
"""

import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from npy_close import load  # noqa: E402

RTOL, ATOL = 1e-4, 1e-6


def close(got, want):
    return all(abs(g - w) <= RTOL * abs(w) + ATOL for g, w in zip(got, want))


def main():
    model, optimizer, work = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    src = pathlib.Path(os.environ["PARALLAX_SRC"])
    data = src / "examples" / "models" / "data" / model
    reference = data / "reference" / optimizer
    config = json.loads((reference / "config.json").read_text())
    work.mkdir(parents=True, exist_ok=True)
    program = work / "program"
    compile_cmd = ["parallax-compile", str(src / "examples" / "models" / f"{model}.onnx"),
                   "--batch-size", str(config["batch_size"]),
                   "--optimizer", optimizer, "--lr", repr(config["lr"]),
                   "-o", str(program)]
    if "initial_accumulator_value" in config:
        compile_cmd += ["--initial-accumulator-value",
                        repr(config["initial_accumulator_value"])]
    if config["freeze"]:
        compile_cmd += ["--freeze", ",".join(config["freeze"])]
    subprocess.run(compile_cmd, check=True)
    checkpoint = work / "checkpoint"
    metrics = work / "metrics.jsonl"
    subprocess.run([str(program), "--data", str(data / "train"),
                    "--steps", str(config["steps"]), "--metrics", str(metrics),
                    "--save", str(checkpoint)], check=True)

    failures = []
    losses = [json.loads(line)["loss"] for line in metrics.read_text().splitlines()]
    _, want = load(reference / "losses.npy")
    if len(losses) != len(want) or not close(losses, want):
        failures.append(f"losses {losses} != PyTorch's {list(want)}")
    parameters = sorted(p for p in reference.glob("*.npy") if p.name != "losses.npy")
    for path in parameters:
        got_shape, got = load(checkpoint / path.name)
        want_shape, want = load(path)
        if got_shape != want_shape:
            failures.append(f"{path.stem}: shape {got_shape} != {want_shape}")
        elif not close(got, want):
            worst = max(abs(g - w) for g, w in zip(got, want))
            failures.append(f"{path.stem}: differs by up to {worst:.3g}")
    for failure in failures:
        print(f"{model} {optimizer}: {failure}")
    print(f"{model} {optimizer}: {len(losses)} steps, {len(parameters)} "
          f"parameters, {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
