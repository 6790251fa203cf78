#!/usr/bin/python3
"""Two builds of one training program, side by side: steps and profiles.

Runs programs A and B (built by two compilers from the same model) in
alternating rounds on the same data, at each thread count: first with
`--metrics` (the median step after the first), then with `--profile` (the
step's time by site). Prints, per program and thread count, the rounds'
median steps, the last loss (equal losses mean the same arithmetic), the
part of the step outside the matrix products, and the time of the sites
whose name contains each --sites substring (e.g. MaxPool, transpose).
Alternating rounds because this machine's load moves from minute to
minute: compare the ranges, A's against B's. Never asserts timings.

Usage:
  /usr/bin/python3 bench/program_ab.py A B --data DIR [--threads 1 2]
      [--rounds 3] [--steps 12] [--sites MaxPool transpose]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

# The programs choose their BLAS kernels by the CPU's features; a core type
# forced in the environment would decide for them.
ENV = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}


def run(program, args):
    subprocess.run([program] + args, env=ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def step_and_loss(metrics):
    rows = [json.loads(line) for line in open(metrics)]
    return statistics.median(r["time_s"] for r in rows[1:]) * 1e3, rows[-1]["loss"]


def profile_sums(report, patterns):
    sites = json.load(open(report))["sites"]
    outside = sum(s["seconds"] for s in sites
                  if s["family"] != "matrix product (BLAS)") * 1e3
    return outside, [sum(s["seconds"] for s in sites if p in s["site"]) * 1e3
                     for p in patterns]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--data", required=True)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--sites", nargs="*", default=[])
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name, program in (("A", args.a), ("B", args.b)):
                for t in args.threads:
                    common = ["--data", args.data, "--threads", str(t),
                              "--steps", str(args.steps),
                              "--log-every", str(args.steps)]
                    metrics = os.path.join(tmp, "m.jsonl")
                    report = os.path.join(tmp, "p.json")
                    run(program, common + ["--metrics", metrics])
                    run(program, common + ["--profile", report])
                    step, loss = step_and_loss(metrics)
                    outside, sites = profile_sums(report, args.sites)
                    results.setdefault((name, t), []).append(
                        (step, loss, outside, sites))
    span = lambda xs: "%.2f-%.2f" % (min(xs), max(xs))
    for t in args.threads:
        for name, program in (("A", args.a), ("B", args.b)):
            rounds = results[(name, t)]
            line = ["%s %s, %d thread%s:" % (name, program, t, "s"[t == 1:]),
                    "step %s ms" % span([x[0] for x in rounds]),
                    "loss %s" % rounds[-1][1],
                    "outside the products %s ms" % span([x[2] for x in rounds])]
            for i, pattern in enumerate(args.sites):
                line.append("%s %s ms" % (pattern, span([x[3][i] for x in rounds])))
            print(line[0], " | ".join(line[1:]))


if __name__ == "__main__":
    main()
