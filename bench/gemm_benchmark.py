#!/usr/bin/python3
"""GEMM throughput of programs built by parallax-compile.

Builds ONNX models computing Y = A @ B (f32, N x N x N), compiles them with
parallax-compile --mode inference (f32 products through the runtime's BLAS
library, and with --blas=false as generated loops), runs each program on
random inputs with --repeat R (20), and reports GFLOP/s from the best time
of the model itself, which programs print with PARALLAX_TIMING=1 (excluding
.npy I/O). The BLAS program runs four ways: as the runtime chooses (the
default: oneDNN where it loads), on OpenBLAS with the kernels the runtime
chooses from the CPU's features (PARALLAX_BLAS=openblas), with OpenBLAS's
own choice (PARALLAX_BLAS_CORE=library, what programs ran before the
runtime chose) and with its SSE3 kernels (what that choice is on CPUs
OpenBLAS does not know). The references are each library called directly:
NumPy's matmul (Debian numpy on OpenBLAS) as installed and with the core
the runtime chose (OPENBLAS_CORETYPE), and oneDNN's dnnl_sgemm; the best
of them is the best single-thread GEMM this machine's libraries reach.
Everything runs on one thread (OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1,
PARALLAX_THREADS=1). Never asserts timings.

Usage: /usr/bin/python3 bench/gemm_benchmark.py [--build build] [--sizes 512 1024]
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# NumPy's OpenBLAS reads this when it loads: single-threaded like the programs.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402
import onnx
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
           PARALLAX_THREADS="1", PARALLAX_TIMING="1")


def model(path, n, op):
    nodes = [helper.make_node("MatMul", ["A", "B"], ["Y"])]
    graph = helper.make_graph(
        nodes, op,
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [n, n]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n, n])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def best_time(cmd, repeat, env):
    """The best of the model times the program reports (PARALLAX_TIMING)
    over `repeat` runs in one process (--repeat)."""
    run = subprocess.run(cmd + ["--repeat", str(repeat)], check=True,
                         env=dict(ENV, **env), capture_output=True, text=True)
    return min(float(line.split()[1]) for line in run.stderr.splitlines()
               if line.startswith("forward: "))


NUMPY_TIMER = """
import sys, time
import numpy as np
n, repeat = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
best = float("inf")
for _ in range(repeat + 1):
    start = time.perf_counter()
    a @ b
    best = min(best, time.perf_counter() - start)
print(best)
"""


def numpy_time(n, repeat, core=None):
    """NumPy's best matmul time in a fresh process (OpenBLAS reads its
    core type when it loads)."""
    env = dict(ENV)
    env.pop("OPENBLAS_CORETYPE", None)
    if core:
        env["OPENBLAS_CORETYPE"] = core
    run = subprocess.run([sys.executable, "-c", NUMPY_TIMER, str(n), str(repeat)],
                         check=True, env=env, capture_output=True, text=True)
    return float(run.stdout)


DNNL_TIMER = """
import ctypes, sys, time
import numpy as np
n, repeat = int(sys.argv[1]), int(sys.argv[2])
lib = ctypes.CDLL("libdnnl.so.2")
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
c = np.empty((n, n), dtype=np.float32)
f, i, p = ctypes.c_float, ctypes.c_int64, ctypes.c_void_p
lib.dnnl_sgemm.argtypes = [ctypes.c_char, ctypes.c_char, i, i, i, f, p, i, p, i, f, p, i]
best = float("inf")
for _ in range(repeat + 1):
    start = time.perf_counter()
    status = lib.dnnl_sgemm(b"N", b"N", n, n, n, 1, a.ctypes.data, n, b.ctypes.data, n,
                            0, c.ctypes.data, n)
    best = min(best, time.perf_counter() - start)
    assert status == 0, f"dnnl_sgemm: status {status}"
assert np.allclose(c, a @ b, rtol=1e-3, atol=1e-3)
print(best)
"""


def dnnl_time(n, repeat):
    """oneDNN's best dnnl_sgemm time in a fresh process, or None where
    libdnnl.so.2 is not installed."""
    run = subprocess.run([sys.executable, "-c", DNNL_TIMER, str(n), str(repeat)],
                         env=ENV, capture_output=True, text=True)
    return float(run.stdout) if run.returncode == 0 else None


def chosen(program, inputs, outputs, env):
    """The library and kernels the runtime chose under `env` (--verbose)."""
    run = subprocess.run([program, "--inputs", str(inputs), "--outputs", str(outputs),
                          "--verbose"], check=True, env=dict(ENV, **env),
                         capture_output=True, text=True)
    match = re.search(r"BLAS: (\S+) [0-9.]+, (\S+) kernels", run.stderr)
    return match.groups() if match else (None, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    # A program's first runs page-fault their fresh output buffers in
    # (until freed memory is reused, about 8 runs; a fault costs some 10 us
    # in this machine's VM): 20 runs measure the steady state.
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--loops-max", type=int, default=512,
                        help="largest size also timed as generated loops")
    args = parser.parse_args()
    compile_tool = str(args.build / "bin" / "parallax-compile")
    print(f"{'N':>6} {'parallax':>9} {'parallax':>9} {'parallax':>9} {'parallax':>9}"
          f" {'loops':>7} {'numpy':>9} {'numpy':>9} {'oneDNN':>9} {'parallax /':>11}"
          f"   (GFLOP/s)")
    print(f"{'':>6} {'(chosen)':>9} {'(OpenBLAS)':>9} {'(library)':>9} {'(SSE3)':>9}"
          f" {'':>7} {'(as inst.)':>9} {'(best)':>9} {'':>9} {'best lib.':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        library = core = None
        for n in args.sizes:
            flops = 2.0 * n ** 3
            inputs, outputs = tmp / "in", tmp / "out"
            inputs.mkdir(exist_ok=True)
            rng = np.random.default_rng(0)
            np.save(inputs / "A.npy", rng.standard_normal((n, n), dtype=np.float32))
            np.save(inputs / "B.npy", rng.standard_normal((n, n), dtype=np.float32))
            times = {}
            variants = [("blas", [], {}), ("openblas", [], {"PARALLAX_BLAS": "openblas"}),
                        ("library", [], {"PARALLAX_BLAS_CORE": "library"}),
                        ("sse3", [], {"PARALLAX_BLAS_CORE": "Prescott"})]
            if n <= args.loops_max:
                variants.append(("loops", ["--blas=false"], {}))
            for name, extra, env in variants:
                onnx_path = tmp / f"matmul{n}.onnx"
                model(onnx_path, n, "matmul")
                program = tmp / f"{'loops' if extra else 'blas'}{n}"
                if not program.exists():
                    subprocess.run([compile_tool, str(onnx_path), "--mode", "inference",
                                    "-O3", "-o", str(program), *extra], check=True)
                if library is None and name == "blas":
                    library = chosen(str(program), inputs, outputs, {})
                    core = chosen(str(program), inputs, outputs,
                                  {"PARALLAX_BLAS": "openblas"})[1]
                times[name] = best_time([str(program), "--inputs", str(inputs),
                                         "--outputs", str(outputs)], args.repeat, env)
            installed = numpy_time(n, args.repeat)
            best = numpy_time(n, args.repeat, core)
            onednn = dnnl_time(n, args.repeat)
            best_library = min(t for t in (installed, best, onednn) if t)
            rate = lambda t: flops / t / 1e9
            column = lambda key: f"{rate(times[key]):9.1f}" if key in times else f"{'-':>9}"
            loops = f"{rate(times['loops']):7.1f}" if "loops" in times else f"{'-':>7}"
            print(f"{n:>6} {column('blas')} {column('openblas')} {column('library')}"
                  f" {column('sse3')} {loops} {rate(installed):9.1f} {rate(best):9.1f}"
                  f" {rate(onednn) if onednn else float('nan'):9.1f}"
                  f" {best_library / times['blas']:10.0%}")
        print(f"(chosen: {library[0]}, {library[1]} kernels; OpenBLAS with the runtime's"
              f" core: {core}; numpy best: OPENBLAS_CORETYPE={core})")


if __name__ == "__main__":
    main()
