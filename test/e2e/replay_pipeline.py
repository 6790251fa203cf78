"""Replays the pipelines `parallax-compile --dump-pipeline` printed.

usage: replay_pipeline.py PIPELINES IMPORTED OUTPUT [--until PASS]
                          [--plan-report REPORT]

PIPELINES holds the two lines parallax-compile printed (the gradient
pipeline, then the lowering); IMPORTED is the model imported by
`parallax-translate --import-onnx --mlir-print-debuginfo`. Runs them with
parallax-opt into OUTPUT. With --until, the lowering stops after that pass.
With --plan-report, checks that every variable's partition count in the
report is the one the replayed IR records, and prints a summary line.
"""

import argparse
import json
import re
import subprocess
import sys


def passes(pipeline):
    """The anchor and the top-level passes of `anchor(p1{..},p2,...)`."""
    anchor, body = pipeline.split("(", 1)
    body = body.rsplit(")", 1)[0]
    parts, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return anchor, parts


def opt(pipeline, source, output, debuginfo):
    command = ["parallax-opt", source, "--pass-pipeline=" + pipeline, "-o", output]
    if debuginfo:
        command.append("--mlir-print-debuginfo")
    subprocess.run(command, check=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pipelines")
    parser.add_argument("imported")
    parser.add_argument("output")
    parser.add_argument("--until")
    parser.add_argument("--plan-report")
    args = parser.parse_args()
    gradients, lowering = open(args.pipelines).read().split("\n")[:2]
    if args.until:
        anchor, parts = passes(lowering)
        names = [p.split("{")[0] for p in parts]
        if args.until not in names:
            sys.exit(f"{args.until} is not in the lowering pipeline: {names}")
        lowering = anchor + "(" + ",".join(parts[: names.index(args.until) + 1]) + ")"
    middle = args.output + ".gradients.mlir"
    opt(gradients, args.imported, middle, debuginfo=True)
    opt(lowering, middle, args.output, debuginfo=False)
    if not args.plan_report:
        return
    ir = open(args.output).read()
    built = {
        m.group(1): (m.group(2), int(m.group(3)))
        for m in re.finditer(
            r"parallax\.variable\b[^@\n]*@\"?([^\" :]+)\"?[^\n]*?"
            r"distribution = #parallax\.distribution<(\w+), partitions = (\d+)>",
            ir)
    }
    report = json.load(open(args.plan_report))
    problems = 0
    for v in report["variables"]:
        planned = (v["placement"], v["partitions"])
        if built.get(v["name"]) != planned:
            print(f"{v['name']}: planned {planned}, built {built.get(v['name'])}")
            problems += 1
    on_servers = sum(v["placement"] == "ps" for v in report["variables"])
    print(f"{len(report['variables'])} variables ({on_servers} on servers), "
          f"{problems} differ from the plan")


if __name__ == "__main__":
    main()
