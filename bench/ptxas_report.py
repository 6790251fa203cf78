#!/usr/bin/env python3
"""Registers and spills of every kernel of the example models (--target
cuda), as ptxas reports them for the GPU architecture: one markdown row
per model and mode (training, inference), for docs/gpu.md.

  ptxas_report.py [--gpu-arch sm_90] [--cuda-toolkit DIR]

Builds each model's PTX with build/bin/parallax-compile --emit ptx, runs
`ptxas -v` on it, and prints kernels, the most registers a kernel uses,
kernels over 64 registers (fewer than 32 warps per SM at 256 threads),
kernels with spills and their spill bytes, and ptxas's compile time.
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ["cnn", "mobile_cnn", "lstm_lm", "gru_lm", "transformer_lm", "wide_deep"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu-arch", default="sm_90")
    parser.add_argument("--cuda-toolkit", default="/usr/local/cuda")
    args = parser.parse_args()
    ptxas = pathlib.Path(args.cuda_toolkit) / "bin" / "ptxas"
    print(f"| model | program | kernels | most registers | kernels > 64 registers "
          f"| kernels spilling (bytes) | ptxas time |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for model in MODELS:
            for mode in ("train", "inference"):
                ptx = pathlib.Path(work) / f"{model}.{mode}.ptx"
                subprocess.run([str(ROOT / "build" / "bin" / "parallax-compile"),
                                str(ROOT / "examples" / "models" / f"{model}.onnx"),
                                "--batch-size", "32", "--mode", mode, "--target", "cuda",
                                "--gpu-arch", args.gpu_arch, "--emit", "ptx", "-o", str(ptx)],
                               check=True)
                report = subprocess.run([str(ptxas), f"-arch={args.gpu_arch}", "-v",
                                         str(ptx), "-o", "/dev/null"], check=True,
                                        capture_output=True, text=True).stderr
                registers = [int(r) for r in re.findall(r"Used (\d+) registers", report)]
                spills = [int(a) + int(b) for a, b in re.findall(
                    r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)]
                milliseconds = sum(float(t) for t in re.findall(r"Compile time = ([\d.]+) ms",
                                                                report))
                spilling = [s for s in spills if s]
                print(f"| {model} | {'training' if mode == 'train' else 'inference'} "
                      f"| {len(registers)} | {max(registers)} "
                      f"| {sum(r > 64 for r in registers)} "
                      f"| {len(spilling)} ({sum(spilling)}) | {milliseconds / 1e3:.2f} s |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
