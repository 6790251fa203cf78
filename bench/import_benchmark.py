#!/usr/bin/python3
"""Import-time benchmark of parallax-translate --import-onnx.

Imports (1) a generated model whose embedding table is ~100 MB (200,000 x
128 float32, inline protobuf data) followed by a small MLP and a loss, and
(2) the example transformer language model, several times each; reports
the best wall time and the peak resident memory of the importer process,
and the ratio of peak memory to the model file size, for text output and
for --emit-bytecode (text output spells every initializer in hex, twice
its size). Times include process start-up. Never asserts timings.

Needs Debian's python3-onnx and python3-numpy to generate the large model.
Usage: /usr/bin/python3 bench/import_benchmark.py [--build build] [--repeat 3]
"""

import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent


def embedding_model(path: pathlib.Path, rows=200_000, dim=128):
    rng = np.random.default_rng(0)
    table = numpy_helper.from_array(
        rng.standard_normal((rows, dim), dtype=np.float32), "embedding.weight")
    fc = numpy_helper.from_array(
        rng.standard_normal((dim, 2), dtype=np.float32), "fc.weight")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["embedding.weight", "ids"], ["e"]),
         helper.make_node("ReduceMean", ["e"], ["pooled"], axes=[1], keepdims=0),
         helper.make_node("MatMul", ["pooled", "fc.weight"], ["logits"]),
         helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss"])],
        "embedding_bag",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 16]),
         helper.make_tensor_value_info("y", TensorProto.INT64, ["batch"])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [table, fc])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(path))


def measure(translate, model, repeat, extra):
    best = float("inf")
    peak_kb = 0
    for _ in range(repeat):
        # Each run in a fresh child whose peak RSS getrusage reports.
        proc = subprocess.run(
            [sys.executable, "-c",
             "import resource, subprocess, sys, time;"
             "t = time.perf_counter();"
             "subprocess.run(sys.argv[1:], check=True);"
             "print(time.perf_counter() - t,"
             " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
             translate, "--import-onnx", str(model), "--batch-size", "32",
             "-o", os.devnull, *extra],
            capture_output=True, text=True, check=True)
        wall, rss = proc.stdout.split()
        best = min(best, float(wall))
        peak_kb = max(peak_kb, int(rss))
    return best, peak_kb * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    translate = str(args.build / "bin" / "parallax-translate")
    with tempfile.TemporaryDirectory() as tmp:
        big = pathlib.Path(tmp) / "embedding_100mb.onnx"
        embedding_model(big)
        models = [big, ROOT / "examples/models/transformer_lm.onnx"]
        print(f"{'model':<28} {'output':<9} {'file MB':>8} {'wall s':>7} "
              f"{'peak MB':>8} {'peak/file':>9}")
        for model in models:
            size = model.stat().st_size
            for output, extra in [("text", []), ("bytecode", ["--emit-bytecode"])]:
                wall, peak = measure(translate, model, args.repeat, extra)
                print(f"{model.name:<28} {output:<9} {size / 1e6:>8.1f} "
                      f"{wall:>7.2f} {peak / 1e6:>8.1f} {peak / size:>9.2f}")


if __name__ == "__main__":
    main()
