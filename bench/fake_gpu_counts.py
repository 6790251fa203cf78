#!/usr/bin/env python3
"""What a training step of a --target cuda program asks of the GPU, counted
without one: each model built twice (two values of one parallax-compile
flag, by default --gpu-convolutions=cudnn and =im2col), run for 2 and 4
steps on test/FakeCudaDriver (PARALLAX_FAKE_CUDA_REPORT=1), and the
difference halved: kernel launches, cuDNN convolutions and cuBLAS products
per step, the host's waits for the stream per step (each one drains the
GPU's queue), the most device memory allocated at once (and how much of it
is managed memory, which the host can reach), and the compile time.
No kernel runs, so there is no step time: scripts/gpu-check.sh measures
that on a GPU.

  /usr/bin/python3 bench/fake_gpu_counts.py [--models M ...] [--batch B]

A model is an example model's name, or a directory holding model.onnx and
its train/ data (test/e2e/Inputs/conv1d, conv3d).
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ["cnn", "cnn_train", "mobile_cnn", "mobile_cnn_train", "resnet_train",
          "mobilenet_v2_train", "squeezenet_train"]


def counts(program, data, steps, env):
    report = subprocess.run([str(program), "--data", str(data), "--steps", str(steps)],
                            env=env, capture_output=True, text=True, check=True).stderr
    number = lambda pattern: float(re.search(pattern, report).group(1))
    return (number(r"(\d+) launches"), number(r"(\d+) cuDNN"), number(r"(\d+) cuBLAS"),
            number(r"at most ([0-9.]+) MiB of device"),
            number(r"at most ([0-9.]+) MiB of it managed"),
            number(r"waited for a stream (\d+) times"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--flag", default="--gpu-convolutions")
    parser.add_argument("--values", nargs="+", default=["cudnn", "im2col"])
    parser.add_argument("--build", default=str(ROOT / "build"))
    args = parser.parse_args()
    build = pathlib.Path(args.build)
    env = {"LD_LIBRARY_PATH": str(build / "test" / "fake-cuda-driver"),
           "PARALLAX_FAKE_CUDA_REPORT": "1"}
    print(f"| model | {args.flag} | launches | cuDNN calls | cuBLAS products | "
          f"host waits | device memory (MiB) | of it managed (MiB) | compile (s) |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as work:
        for model in args.models:
            directory = pathlib.Path(model)
            if directory.is_dir():
                onnx, data = directory / "model.onnx", directory / "train"
                model = directory.name
            else:
                onnx = ROOT / "examples" / "models" / f"{model}.onnx"
                data = ROOT / "examples" / "models" / "data" / model / "train"
            for value in args.values:
                program = pathlib.Path(work) / f"{model}.{value}"
                start = time.monotonic()
                subprocess.run([str(build / "bin" / "parallax-compile"), str(onnx),
                                "--batch-size", str(args.batch), "--target", "cuda",
                                f"{args.flag}={value}", "-o", str(program)],
                               check=True, capture_output=True)
                seconds = time.monotonic() - start
                two, four = counts(program, data, 2, env), counts(program, data, 4, env)
                step = [(b - a) / 2 for a, b in zip(two, four)]
                print(f"| {model} | {value} | {step[0]:.0f} | {step[1]:.0f} | {step[2]:.0f} | "
                      f"{step[5]:.0f} | {four[3]:.2f} | {four[4]:.2f} | {seconds:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
