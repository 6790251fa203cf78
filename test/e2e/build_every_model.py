#!/usr/bin/env python3
"""Builds every example model into a program, training and inference.

  build_every_model.py --compile PARALLAX_COMPILE [--target cuda]
                       [--gpu-arch sm_90] [--jobs N] [-- EXTRA_FLAGS...]

For each examples/models/*.onnx (not the *.opset14.onnx copies, the same
graphs at an older opset), runs `parallax-compile MODEL --mode train` and
`--mode inference` with `-o PROGRAM`, the whole way to an executable:
for --target cuda that is every kernel through ptxas for --gpu-arch and
the host side linked against the CUDA runtime library. Prints one line
per program (seconds, size) and fails naming each build that failed,
with the end of its error output. No GPU is needed.
"""

import argparse
import concurrent.futures
import os
import pathlib
import subprocess
import sys
import tempfile
import time

MODELS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "models"


def build(compile_tool, model, mode, target, arch, extra, work):
    program = pathlib.Path(work) / f"{model.stem}.{mode}"
    command = [compile_tool, str(model), "--mode", mode, "--batch-size", "8",
               "--target", target, "-o", str(program), *extra]
    if target == "cuda":
        command += ["--gpu-arch", arch]
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if result.returncode != 0 or not program.exists():
        tail = "\n    ".join(result.stderr.strip().splitlines()[-5:])
        return False, f"{model.stem} ({mode}): exit {result.returncode}\n    {tail}"
    size = program.stat().st_size
    program.unlink()
    return True, f"{model.stem} ({mode}): {seconds:.1f} s, {size / 1e6:.1f} MB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", required=True, help="parallax-compile")
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--gpu-arch", default="sm_90")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("extra", nargs="*", help="more parallax-compile flags")
    args = parser.parse_args()

    models = sorted(m for m in MODELS.glob("*.onnx")
                    if not m.name.endswith(".opset14.onnx"))
    if not models:
        print(f"no models in {MODELS}")
        return 1
    builds = [(m, mode) for m in models for mode in ("train", "inference")]
    failures = []
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(build, args.compile, m, mode, args.target,
                               args.gpu_arch, args.extra, work)
                   for m, mode in builds]
        for future in futures:
            ok, line = future.result()
            print(("built " if ok else "FAILED ") + line, flush=True)
            if not ok:
                failures.append(line)
    print(f"{len(builds) - len(failures)} of {len(builds)} programs built "
          f"({len(models)} models, training and inference, --target "
          f"{args.target})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
