#!/usr/bin/python3
"""Models past one machine's share: compile cost, program size, start-up,
per-worker memory and step time as the embedding tables grow.

Models (written here with onnx.helper, weights as external data, Zipf ids):
  ctr-0.15  CTR tables of 1M + 200K + 1K rows x 32 (154 MB)
  ctr-1     the same tables 6.5x larger (1.0 GB)
  ctr-2.5   16.3x larger (2.5 GB)
  lm1b      an LM1B-shaped input embedding, 793,472 x 1024 (3.25 GB), with
            a 10,000-word softmax so that it trains on a CPU
Each trains with Adagrad (lr 0.05) at 1, 2 and 4 workers (hybrid plan,
--workers N, one thread per worker). Reported per configuration:
parallax-compile's time and peak memory, the program's size, start-up
(a run of --steps 0), the median step time after 2 warm-up steps, each
worker's peak RSS against its fair share ((tables + Adagrad state) / N +
the dense part), and the plan's predicted bytes per step (alpha measured
on the data with --profile-data) against the runtime's count. Never asserts anything; writes a
JSON file of the results.

Usage: /usr/bin/python3 bench/scale_benchmark.py [--models ctr-0.15 lm1b]
           [--workers 1 2 4] [--steps 8] [--work DIR] [--json FILE]
Needs about 8 GB of disk in the work directory and, for lm1b at one
worker, 7 GB of memory.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "build" / "bin"
PEAK = ROOT / "test" / "e2e" / "peak_rss.py"
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
MPIRUN = ["mpirun", "--oversubscribe", "--mca", "btl", "self,vader",
          "--bind-to", "none"]
CTR_ROWS = [1_000_000, 200_000, 1_000]
MODELS = {
    "ctr-0.15": ("ctr", 1.0),
    "ctr-1": ("ctr", 6.5),
    "ctr-2.5": ("ctr", 16.3),
    "lm1b": ("lm", 1.0),
}
BATCH = {"ctr": 256, "lm": 8}


def external(name, shape, path, rng):
    """A float32 initializer of `shape` whose values (normal, 0.01 scale)
    are written to `path` in chunks, as external data."""
    rows, width = shape
    with open(path, "wb") as f:
        for first in range(0, rows, 1 << 20):
            count = min(1 << 20, rows - first)
            (0.01 * rng.standard_normal((count, width), np.float32)).tofile(f)
    tensor = TensorProto()
    tensor.name, tensor.data_type = name, TensorProto.FLOAT
    tensor.dims.extend(shape)
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in [("location", path.name), ("offset", "0"),
                       ("length", str(rows * width * 4))]:
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def zipf_ids(rng, rows, shape):
    ranks = rng.zipf(1.1, size=shape)
    ranks = np.where(ranks > rows, rng.integers(1, rows + 1, size=shape), ranks)
    return (rng.permutation(rows)[ranks - 1]).astype(np.int64)


def make_ctr(directory, scale, rng, examples):
    """Three tables looked up by the id columns, concatenated, a 96 x 1
    layer, squared error against the click."""
    rows = [int(r * scale) for r in CTR_ROWS]
    inits, nodes, looked_up = [], [], []
    for i, r in enumerate(rows):
        inits.append(external(f"table{i}", [r, 32], directory / f"table{i}.data", rng))
        nodes += [
            helper.make_node("Gather", ["ids", f"col{i}"], [f"ids{i}"], axis=1),
            helper.make_node("Gather", [f"table{i}", f"ids{i}"], [f"emb{i}"]),
        ]
        inits.append(numpy_helper.from_array(np.array(i, np.int64), f"col{i}"))
        looked_up.append(f"emb{i}")
    inits.append(numpy_helper.from_array(
        0.1 * rng.standard_normal((96, 1)).astype(np.float32), "fc.weight"))
    nodes += [
        helper.make_node("Concat", looked_up, ["features"], axis=1),
        helper.make_node("MatMul", ["features", "fc.weight"], ["logit2"]),
        helper.make_node("Squeeze", ["logit2", "axis1"], ["logit"]),
        helper.make_node("Sub", ["logit", "clicked"], ["error"]),
        helper.make_node("Mul", ["error", "error"], ["squared"]),
        helper.make_node("ReduceMean", ["squared"], ["loss"], keepdims=0),
    ]
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "axis1"))
    graph = helper.make_graph(
        nodes, "ctr",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 3]),
         helper.make_tensor_value_info("clicked", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    data = directory / "data"
    data.mkdir(exist_ok=True)
    np.save(data / "ids.npy",
            np.stack([zipf_ids(rng, r, (examples,)) for r in rows], 1))
    np.save(data / "clicked.npy",
            rng.integers(0, 2, size=examples).astype(np.float32))
    return graph, sum(r * 32 * 4 for r in rows), 96 * 4


def make_lm(directory, rng, examples, vocab=793_472, dim=1024, words=10_000):
    """Mean of 20 token embeddings, a 1024 x 10,000 softmax, cross entropy
    against the next word."""
    inits = [external("embedding", [vocab, dim], directory / "embedding.data", rng),
             numpy_helper.from_array(
                 0.01 * rng.standard_normal((dim, words)).astype(np.float32),
                 "softmax.weight")]
    nodes = [
        helper.make_node("Gather", ["embedding", "tokens"], ["emb"]),
        helper.make_node("ReduceMean", ["emb"], ["context"], axes=[1], keepdims=0),
        helper.make_node("MatMul", ["context", "softmax.weight"], ["logits"]),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "next"], ["loss"],
                         reduction="mean"),
    ]
    graph = helper.make_graph(
        nodes, "lm1b",
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, ["N", 20]),
         helper.make_tensor_value_info("next", TensorProto.INT64, ["N"])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    data = directory / "data"
    data.mkdir(exist_ok=True)
    np.save(data / "tokens.npy", zipf_ids(rng, vocab, (examples, 20)))
    np.save(data / "next.npy", zipf_ids(rng, words, (examples,)))
    return graph, vocab * dim * 4, dim * words * 4


def peak(prefix):
    """The peak RSS files a peak_rss.py run left, in bytes."""
    return [int(p.read_text()) * 1024 for p in sorted(prefix.parent.glob(prefix.name + ".*"))]


def run_model(name, workers_list, steps, work):
    kind, scale = MODELS[name]
    directory = work / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    rng = np.random.default_rng(0)
    batch = BATCH[kind]
    examples = batch * max(workers_list) * steps
    start = time.perf_counter()
    if kind == "ctr":
        graph, sparse_bytes, dense_bytes = make_ctr(directory, scale, rng, examples)
    else:
        graph, sparse_bytes, dense_bytes = make_lm(directory, rng, examples)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.save(model, directory / "model.onnx")
    print(f"{name}: {sparse_bytes / 1e9:.2f} GB of tables written in "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    results = []
    for workers in workers_list:
        program = directory / f"program.{workers}"
        report = directory / f"plan.{workers}.json"
        rss = directory / f"compile.{workers}.rss"
        start = time.perf_counter()
        subprocess.run([sys.executable, PEAK, rss, BIN / "parallax-compile",
                        directory / "model.onnx", "--batch-size", str(batch),
                        "--optimizer", "adagrad", "--lr", "0.05",
                        "--workers", str(workers), "--plan-report", report,
                        "--profile-data", directory / "data", "-o", program],
                       check=True, env=ENV, stdout=subprocess.DEVNULL)
        compile_s = time.perf_counter() - start
        launch = MPIRUN + ["-np", str(workers)]
        start = time.perf_counter()
        subprocess.run(launch + [program, "--data", directory / "data", "--steps", "0"],
                       check=True, env=ENV, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        startup_s = time.perf_counter() - start
        metrics = directory / f"metrics.{workers}.jsonl"
        ranks = directory / f"run.{workers}.rss"
        subprocess.run(launch + [sys.executable, PEAK, ranks, program, "--data",
                                 directory / "data", "--steps", str(steps),
                                 "--metrics", metrics, "--log-every", "1000"],
                       check=True, env=ENV, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        lines = [json.loads(line) for line in metrics.read_text().splitlines()]
        plan = json.loads(report.read_text())
        predicted = sum(v["predicted_bytes_per_step"][v["placement"]]
                        for v in plan["variables"])
        fair = 2 * sparse_bytes / workers + 2 * dense_bytes
        result = {
            "model": name, "workers": workers, "table_bytes": sparse_bytes,
            "compile_s": compile_s, "compile_peak_bytes": peak(rss)[0],
            "program_bytes": program.stat().st_size, "startup_s": startup_s,
            "step_s": statistics.median(l["time_s"] for l in lines[2:]),
            "worker_peak_bytes": peak(ranks), "fair_share_bytes": fair,
            "placements": {v["name"]: v["placement"] for v in plan["variables"]},
            "predicted_bytes_per_step": predicted,
            "measured_bytes_per_step": statistics.mean(
                l["bytes_sent"] + l["bytes_received"] for l in lines[2:]),
        }
        print(json.dumps(result), file=sys.stderr)
        results.append(result)
    shutil.rmtree(directory, ignore_errors=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--work", type=pathlib.Path)
    parser.add_argument("--json", type=pathlib.Path)
    args = parser.parse_args()
    work = args.work or pathlib.Path(tempfile.mkdtemp(prefix="parallax-scale-"))
    results = []
    for name in args.models:
        results += run_model(name, args.workers, args.steps, work)
    print(f"{'model':9} {'N':>2} {'compile':>8} {'peak':>7} {'program':>8} "
          f"{'start-up':>8} {'step':>8} {'worker peak / fair share':>26}")
    for r in results:
        peaks = r["worker_peak_bytes"]
        print(f"{r['model']:9} {r['workers']:2} {r['compile_s']:7.2f}s "
              f"{r['compile_peak_bytes'] / 2**20:5.0f}MB "
              f"{r['program_bytes'] / 2**20:6.2f}MB {r['startup_s']:7.2f}s "
              f"{r['step_s'] * 1e3:6.1f}ms "
              f"{max(peaks) / 2**30:9.2f} / {r['fair_share_bytes'] / 2**30:.2f} GB "
              f"({max(peaks) / r['fair_share_bytes']:.2f}x)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
