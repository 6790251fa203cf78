#!/usr/bin/python3
"""GEMM throughput of programs built by parallax-compile.

Builds ONNX models computing Y = A @ B (f32, N x N x N), compiles them with
parallax-compile --mode inference (f32 products through OpenBLAS, and with
--blas=false as generated loops), runs each program on random inputs with
--repeat R, and reports GFLOP/s from the best time of the model itself,
which programs print with PARALLAX_TIMING=1 (excluding .npy I/O). NumPy's
matmul (Debian numpy on OpenBLAS) is the reference. OpenBLAS runs single
threaded (OPENBLAS_NUM_THREADS=1) for all. Never asserts timings.

Usage: /usr/bin/python3 bench/gemm_benchmark.py [--build build] [--sizes 512 1024]
"""

import argparse
import os
import pathlib
import subprocess
import tempfile
import time

# NumPy's OpenBLAS reads this when it loads: single-threaded like the programs.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402
import onnx
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", PARALLAX_TIMING="1")


def model(path, n, op):
    nodes = [helper.make_node("MatMul", ["A", "B"], ["Y"])]
    graph = helper.make_graph(
        nodes, op,
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [n, n]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, n])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def best_time(cmd, repeat):
    """The best of the model times the program reports (PARALLAX_TIMING)
    over `repeat` runs in one process (--repeat)."""
    run = subprocess.run(cmd + ["--repeat", str(repeat)], check=True, env=ENV,
                         capture_output=True, text=True)
    return min(float(line.split()[1]) for line in run.stderr.splitlines()
               if line.startswith("forward: "))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--loops-max", type=int, default=512,
                        help="largest size also timed as generated loops")
    args = parser.parse_args()
    compile_tool = str(args.build / "bin" / "parallax-compile")
    print(f"{'N':>6} {'parallax+BLAS':>14} {'loops':>10} {'numpy':>10}   (GFLOP/s)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for n in args.sizes:
            flops = 2.0 * n ** 3
            inputs, outputs = tmp / "in", tmp / "out"
            inputs.mkdir(exist_ok=True)
            rng = np.random.default_rng(0)
            a = rng.standard_normal((n, n), dtype=np.float32)
            b = rng.standard_normal((n, n), dtype=np.float32)
            np.save(inputs / "A.npy", a)
            np.save(inputs / "B.npy", b)
            times = {}
            variants = [("blas", "matmul", [])]
            if n <= args.loops_max:
                variants.append(("loops", "matmul", ["--blas=false"]))
            for name, op, extra in variants:
                onnx_path = tmp / f"{op}{n}.onnx"
                model(onnx_path, n, op)
                program = tmp / f"{name}{n}"
                subprocess.run([compile_tool, str(onnx_path), "--mode", "inference",
                                "-O3", "-o", str(program), *extra], check=True)
                times[name] = best_time([str(program), "--inputs", str(inputs),
                                         "--outputs", str(outputs)], args.repeat)
            start = time.perf_counter()
            for _ in range(args.repeat):
                a @ b
            numpy_time = (time.perf_counter() - start) / args.repeat
            rate = lambda t: flops / t / 1e9
            loops = f"{rate(times['loops']):10.2f}" if "loops" in times else f"{'-':>10}"
            print(f"{n:>6} {rate(times['blas']):14.1f} {loops} {flops / numpy_time / 1e9:10.1f}")


if __name__ == "__main__":
    main()
