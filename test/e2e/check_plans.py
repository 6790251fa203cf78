#!/usr/bin/env python3
"""Checks the golden plan reports (test/e2e/plans/*.json) for the
properties the plan must have by construction: every report lists every
variable with (at least) the contract's fields; sparse variables are exactly the
embedding tables read only through gathers; dense variables go to
AllReduce; from 4 workers on sparse variables go to PS, except those a
machine touches whole (machine_alpha 1), which AllReduce moves without
ids; the hybrid's
bytes per step are the least of the three strategies. Standard library
only.

Usage: check_plans.py DIR
"""

import json
import pathlib
import sys

FIELDS = {"name", "shape", "bytes", "gradient", "alpha", "placement",
          "partitions", "predicted_bytes_per_step"}
SPARSE = {"embedding.weight", "position.weight", "wide.0.weight",
          "wide.1.weight", "wide.2.weight", "deep.0.weight", "deep.1.weight",
          "deep.2.weight"}


def main():
    problems = []
    reports = sorted(pathlib.Path(sys.argv[1]).glob("*.json"))
    for path in reports:
        plan = json.loads(path.read_text())
        workers = plan["workers"]
        for v in plan["variables"]:
            if not FIELDS <= set(v):
                problems.append(f"{path.name}: {v.get('name')}: fields {sorted(v)}")
            sparse = v["gradient"] == "sparse"
            if sparse != (v["name"] in SPARSE):
                problems.append(f"{path.name}: {v['name']} is {v['gradient']}")
            if not sparse and v["placement"] != "allreduce":
                problems.append(f"{path.name}: dense {v['name']} on {v['placement']}")
            whole = v.get("machine_alpha") == 1
            expected = "allreduce" if whole else "ps"
            if sparse and workers >= 4 and v["placement"] != expected:
                problems.append(f"{path.name}: sparse {v['name']} on {v['placement']}")
        totals = {k: t["bytes_per_step"] for k, t in plan["totals"].items()}
        if totals["hybrid"] > min(totals["allreduce"], totals["ps"]):
            problems.append(f"{path.name}: hybrid moves more than another strategy: {totals}")
    for problem in problems:
        print(problem)
    print(f"{len(reports)} plans, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
