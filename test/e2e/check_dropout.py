#!/usr/bin/env python3
"""Checks training-mode Dropout (counter-based masks) on
test/e2e/Inputs/dropout.onnxtext: two Dropout nodes of ratio 0.3 on x, a
loss mean((dropped * w)^2). Standard library only.

- Inference programs draw the masks of examples 0..B-1: the keep rate is
  within 6 standard deviations of 0.7, kept values are x / 0.7 exactly,
  the second node's mask is another draw, a compile with another --seed
  draws other masks, and the same compile draws the same.
- Training: step 0's loss is the probe's, and the update of w is the one
  the probe's mask gives (the backward multiplies by the forward's mask);
  2 workers on half batches equal one worker (losses and weights); 3 steps,
  save, restore, 5 more equal 8 straight, byte for byte; the program's
  --seed changes the run.

Usage: check_dropout.py WORKDIR [--target cpu|cuda-sim]
  (parallax-compile and mpirun on PATH, PARALLAX_SRC naming the source tree)
"""

import argparse
import json
import math
import os
import pathlib
import struct
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from npy_close import load, save  # noqa: E402
from check_training import mpirun  # noqa: E402

RATIO, BATCH, STEPS, LR = 0.3, 32, 8, 0.05


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work", type=pathlib.Path)
    parser.add_argument("--target", default="cpu")
    args = parser.parse_args()
    work, target = args.work, args.target
    work.mkdir(parents=True, exist_ok=True)
    model = pathlib.Path(os.environ["PARALLAX_SRC"]) / "test" / "e2e" / \
        "Inputs" / "dropout.onnxtext"
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    def compile_(out, *flags):
        subprocess.run(["parallax-compile", str(model), "--target", target,
                        "-o", str(out), *flags], check=True)

    # Inference: the masks of examples 0..BATCH-1.
    ones = work / "ones"
    ones.mkdir(exist_ok=True)
    save(ones / "x.npy", (BATCH, 64), [1.0] * (BATCH * 64))

    def probe(name, *flags):
        program = work / name
        compile_(program, "--mode", "inference", "--batch-size", str(BATCH),
                 *flags)
        out = work / (name + ".out")
        subprocess.run(["rm", "-rf", str(out)], check=True)
        subprocess.run([str(program), "--inputs", str(ones), "--outputs",
                        str(out)], check=True)
        return {n: load(out / f"{n}.npy")[1]
                for n in ("dropped", "mask", "again", "loss")}

    p = probe("probe")
    n = BATCH * 64
    kept = sum(p["mask"])
    sd = math.sqrt(n * RATIO * (1 - RATIO))
    check(abs(kept - n * (1 - RATIO)) <= 6 * sd,
          f"keep rate {kept / n:.4f} is not within 6 sd of {1 - RATIO}")
    scale = f32(1 / (1 - RATIO))
    check(all((v == scale) if m else (v == 0)
              for v, m in zip(p["dropped"], p["mask"])),
          f"kept values are not x / (1 - ratio) = {scale}, dropped ones not 0")
    differ = sum(a != b for a, b in zip(p["dropped"], p["again"])) / n
    check(abs(differ - 2 * RATIO * (1 - RATIO)) <= 0.05,
          f"the two nodes' masks differ in {differ:.3f} of the elements, "
          f"independent draws in {2 * RATIO * (1 - RATIO):.3f}")
    check(probe("probe.same")["dropped"] == p["dropped"],
          "the same compile drew other masks")
    check(probe("probe.seed7", "--seed", "7")["dropped"] != p["dropped"],
          "--seed 7 drew the same masks")

    # Training data: STEPS batches of pseudo-random x (examples 0..BATCH-1
    # are ones, so step 0 meets the probe's masks).
    data = work / "train"
    data.mkdir(exist_ok=True)
    state, values = 1, [1.0] * (BATCH * 64)
    for _ in range((STEPS - 1) * BATCH * 64):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        values.append((state >> 40) / 2**24 * 2 - 1)
    save(data / "x.npy", (STEPS * BATCH, 64), values)

    def train(name, steps, *flags, workers=1, run_flags=()):
        program = work / f"{name}.prog"
        compile_(program, "--batch-size", str(BATCH // workers), "--lr",
                 str(LR), *(["--workers", str(workers)] if workers > 1 else []),
                 *flags)
        save_dir = work / name
        subprocess.run(["rm", "-rf", str(save_dir)], check=True)
        metrics = work / f"{name}.jsonl"
        subprocess.run((mpirun(workers) if workers > 1 else []) +
                       [str(program), "--data", str(data), "--steps",
                        str(steps), "--save", str(save_dir), "--metrics",
                        str(metrics), *run_flags], check=True)
        losses = [json.loads(line)["loss"]
                  for line in metrics.read_text().splitlines()]
        return program, save_dir, losses, load(save_dir / "w.npy")[1]

    program, full, losses, w = train("one", STEPS)
    check(math.isclose(losses[0], p["loss"][0], rel_tol=1e-5),
          f"step 0's loss {losses[0]} is not the probe's {p['loss'][0]}")
    # One step's update from w = 1 (lr, d(mean((d w)^2))/dw = 2 sum_n d^2 w
    # / (B 64)), by the probe's mask.
    _, _, _, w1 = train("first", 1)
    for j in range(64):
        grad = 2 * sum(p["dropped"][i * 64 + j] ** 2
                       for i in range(BATCH)) / (BATCH * 64)
        if not math.isclose(w1[j], 1 - LR * grad, rel_tol=1e-5):
            failures.append(f"w[{j}] after one step is {w1[j]}, the "
                            f"forward's mask gives {1 - LR * grad}")
            break

    _, _, losses2, w2 = train("two", STEPS, workers=2)
    check(all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-7)
              for a, b in zip(losses, losses2)) and len(losses) == len(losses2),
          f"2 workers' losses {losses2} != one worker's {losses}")
    check(all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-7)
              for a, b in zip(w, w2)), "2 workers' weights != one worker's")

    part = work / "part"
    subprocess.run(["rm", "-rf", str(part)], check=True)
    for extra in (["--steps", "3"], ["--steps", str(STEPS), "--restore",
                                      str(part)]):
        subprocess.run([str(program), "--data", str(data), "--save",
                        str(part), *extra], check=True)
    check((part / "w.npy").read_bytes() == (full / "w.npy").read_bytes(),
          "3 steps + restore + 5 steps differ from 8 steps")

    _, _, _, w_seed = train("seed5", STEPS, run_flags=("--seed", "5"))
    check(w_seed != w, "the program's --seed 5 gave the same weights")

    for failure in failures:
        print(f"dropout {target}: {failure}")
    print(f"dropout {target}: keep rate {kept / n:.4f}, {len(losses)} steps, "
          f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
