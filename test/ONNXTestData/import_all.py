#!/usr/bin/env python3
"""Imports every model of ONNX's backend test data with parallax-translate.

Each model under DATA/{node,pytorch-converted,pytorch-operator,simple}/*/model.onnx
is imported with `parallax-translate --import-onnx`. A model is

  imported     the import succeeded;
  unsupported  the import failed with a diagnostic saying what is not
               supported (an operator, an attribute value, an element type);
  failed       anything else: a crash, a timeout, a failure without such a
               diagnostic. Failed must be 0.

Prints one line per failed model and closes with
`N imported, N unsupported, N failed`; exits 1 when any failed.
`--markdown FILE` writes the per-operator coverage table.
"""

import argparse
import collections
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
UNSUPPORTED = re.compile(
    r"unsupported operator|(is|are) not supported|unsupported element type|"
    r"newer than the newest supported opset")
OPERATOR_NOTE = re.compile(r"operator '([^']+)' of domain '([^']+)'")


def classify(translate: str, model: pathlib.Path):
    try:
        proc = subprocess.run(
            [translate, "--import-onnx", str(model), "-o", os.devnull],
            capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "failed", "timeout", []
    if proc.returncode == 0:
        return "imported", "", []
    if proc.returncode < 0 or proc.returncode > 1:
        return "failed", f"exit status {proc.returncode}: {proc.stderr[-2000:]}", []
    ops = OPERATOR_NOTE.findall(proc.stderr)
    if UNSUPPORTED.search(proc.stderr):
        return "unsupported", proc.stderr.strip().splitlines()[0], ops
    return "failed", proc.stderr.strip(), ops


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--translate", required=True)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--markdown", type=pathlib.Path)
    args = parser.parse_args()

    data = pathlib.Path(args.data)
    models = sorted(p for suite in SUITES for p in (data / suite).glob("*/model.onnx"))
    if not models:
        print(f"error: no models under {data}; install libonnx-testdata",
              file=sys.stderr)
        return 1

    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(classify, args.translate, m): m for m in models}
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()

    counts = collections.Counter()
    unsupported_ops = collections.Counter()
    for model in models:
        status, detail, ops = results[model]
        counts[status] += 1
        for op, _domain in ops:
            unsupported_ops[op] += 1
        if status == "failed":
            print(f"FAILED {model.relative_to(data)}: {detail}")

    if args.markdown:
        write_markdown(args.markdown, data, models, results, unsupported_ops)
    print(f"{counts['imported']} imported, {counts['unsupported']} unsupported, "
          f"{counts['failed']} failed")
    return 1 if counts["failed"] else 0


def write_markdown(path, data, models, results, unsupported_ops):
    by_suite = collections.defaultdict(collections.Counter)
    for model in models:
        suite = model.relative_to(data).parts[0]
        by_suite[suite][results[model][0]] += 1
    lines = [
        "| suite | models | imported | unsupported | failed |",
        "|---|---:|---:|---:|---:|",
    ]
    for suite in SUITES:
        c = by_suite[suite]
        lines.append(f"| {suite} | {sum(c.values())} | {c['imported']} | "
                     f"{c['unsupported']} | {c['failed']} |")
    lines += ["", "Unsupported operators, by number of test models that use them:", "",
              "| operator | models |", "|---|---:|"]
    for op, n in sorted(unsupported_ops.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {op} | {n} |")
    other = [m for m in models if results[m][0] == "unsupported" and not results[m][2]]
    if other:
        lines += ["", "Models whose operators are supported but not one of their "
                  "attribute values or element types:", ""]
        for m in other:
            reason = results[m][1].split("error: ", 1)[-1]
            lines.append(f"- `{m.relative_to(data).parent}`: {reason}")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
