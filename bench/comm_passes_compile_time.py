#!/usr/bin/env python3
"""Compile-time benchmark of the communication passes.

Generates a backward-pass-shaped function with N dense gradients (sizes
cycling through those of a ResNet-like model, 256 B .. 9 MiB), each
followed by some compute, and times --parallax-bucket-allreduce and
--parallax-async-allreduce with --mlir-timing. Reports the pass times and
the number of buckets. Never asserts timings.

Usage: bench/comm_passes_compile_time.py [--build build] [--grads 2000 20000]
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile
import time

SHAPES = ["64", "64x64", "128x64x3x3", "256x256x3x3", "512x512x3x3", "1000x512"]


def generate(num_grads: int) -> str:
    lines = ["func.func @backward(%seed: tensor<64xf32>) {"]
    for i in range(num_grads):
        shape = SHAPES[i % len(SHAPES)]
        lines.append(f"  %g{i} = tensor.empty() : tensor<{shape}xf32>")
        lines.append(f"  %r{i} = parallax.allreduce mean %g{i} : tensor<{shape}xf32>")
        lines.append(f"  %c{i} = arith.addf %seed, %seed : tensor<64xf32>")
    lines.append("  return")
    lines.append("}")
    return "\n".join(lines) + "\n"


def run(opt: pathlib.Path, source: pathlib.Path, passes: list) -> dict:
    start = time.perf_counter()
    proc = subprocess.run(
        [str(opt), str(source), *passes, "--mlir-timing", "-o", "/dev/null"],
        capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    timings = {}
    for line in proc.stderr.splitlines():
        m = re.match(r"\s*([\d.]+) \(\s*[\d.]+%\)\s+(.*\S)", line)
        if m:
            timings[m.group(2)] = float(m.group(1))
    timings["wall (process)"] = wall
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build", type=pathlib.Path)
    parser.add_argument("--grads", type=int, nargs="+", default=[2000, 20000])
    args = parser.parse_args()
    opt = args.build / "bin" / "parallax-opt"
    if not opt.exists():
        sys.exit(f"error: {opt} not found; build first (scripts/build.sh)")

    print(f"{'gradients':>10} {'parse s':>8} {'bucket s':>9} {'async s':>8} "
          f"{'wall s':>7} {'buckets':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.grads:
            source = pathlib.Path(tmp) / f"grads{n}.mlir"
            source.write_text(generate(n))
            t = run(opt, source, ["--parallax-bucket-allreduce",
                                  "--parallax-async-allreduce"])
            bucketed = subprocess.run(
                [str(opt), str(source), "--parallax-bucket-allreduce"],
                capture_output=True, text=True, check=True).stdout
            buckets = bucketed.count("parallax.allreduce ")
            print(f"{n:>10} {t.get('Parser', 0):>8.3f} "
                  f"{t.get('ParallaxBucketAllReduce', 0):>9.3f} "
                  f"{t.get('ParallaxAsyncAllReduce', 0):>8.3f} "
                  f"{t['wall (process)']:>7.2f} {buckets:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
