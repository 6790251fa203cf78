#!/usr/bin/env python3
"""Compares two training runs: every step's loss (PREFIX.jsonl) and every
saved variable (PREFIX.out/*.npy) of the second against the first,
|got - want| <= 1e-4 |want| + 1e-6, or with --exact bit for bit.
Standard library only.

Usage: compare_runs.py [--exact] FIRST_PREFIX SECOND_PREFIX
"""

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from npy_close import parameter_mismatches  # noqa: E402
from check_training import close, closeness  # noqa: E402


def losses(prefix):
    path = pathlib.Path(str(prefix) + ".jsonl")
    return [json.loads(line)["loss"] for line in path.read_text().splitlines()]


def main():
    args = sys.argv[1:]
    exact = "--exact" in args
    if exact:
        args.remove("--exact")
    same = closeness(0.0, 0.0) if exact else close
    first, second = (pathlib.Path(p) for p in args[:2])
    want, got = losses(first), losses(second)
    failures = []
    if len(got) != len(want) or not same(got, want):
        failures.append(f"losses {got} != {want}")
    variables = sorted(pathlib.Path(str(first) + ".out").glob("*.npy"))
    failures += parameter_mismatches(pathlib.Path(str(second) + ".out"),
                                     variables, same)
    for failure in failures:
        print(failure)
    print(f"{len(want)} steps, {len(variables)} variables, "
          f"{len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
