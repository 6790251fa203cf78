#!/usr/bin/python3
"""ONNX conformance: compiles and runs ONNX's backend test models.

For every model of ONNX's test data (Debian libonnx-testdata:
node, pytorch-converted, pytorch-operator, simple) that imports, builds an
inference program with `parallax-compile --mode inference` (symbolic
dimensions bound from the test data), runs it on each test_data_set_*, and
compares every output with the expected one using ONNX's default
tolerances (rtol 1e-3, atol 1e-7; integers and booleans exactly). With
--target cuda-sim the GPU pipeline's kernels run on the CPU; with --target
cuda (no GPU needed) each program is only built, its kernels through ptxas.

A model whose import stops with a "not supported" diagnostic is skipped.
A model without tensor test data is only imported (parallax-translate
beside parallax-compile): it too must import or say what is not
supported. So every model of the test data is imported at least once.
With --constant-inputs, graph inputs the importer needs at compile time
(most node tests feed Resize's scales or Reshape's shape as inputs) are
first made constants of the test data's values.
Known failures are listed, each with its reason, in conformance-xfail.txt;
a failure not listed there, or a listed model that passes, fails the run.
With --baseline RESULTS (another run's --results, the CPU target's), a
model that passed there and does not pass here fails the run too.
Closes with `conformance: N passed, N failed, N skipped`.

Needs Debian's python3-onnx and python3-numpy (run with /usr/bin/python3).
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

# The suites, the "not supported" diagnostics and the import check are
# import_all.py's.
from import_all import SUITES, UNSUPPORTED, classify  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def load_tensor(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def bindings(model, inputs):
    """--bind NAME=VALUE for each symbolic dimension, from the test data."""
    binds = {}
    for info, value in zip(model.graph.input, inputs):
        dims = info.type.tensor_type.shape.dim
        for dim, size in zip(dims, value.shape):
            if dim.dim_param:
                binds[dim.dim_param] = size
    return [f"--bind={k}={v}" for k, v in sorted(binds.items())]


# The importer's message for an input it needs at compile time.
RUN_TIME_INPUT = re.compile(r"\('([^']+)'\) is computed at run time")


def input_files(data_set):
    return sorted(data_set.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))


def with_constant_inputs(model, names, data_sets, graph_inputs, path):
    """Writes `model` with the graph inputs `names` turned into Constant
    nodes holding the test data's values (the same in every data set), as
    a deployed model holds its scales and shapes. False when they differ
    or are not graph inputs."""
    position = {info.name: i for i, info in enumerate(graph_inputs)}
    if not names or any(n not in position for n in names):
        return False
    values = {}
    for n in names:
        tensors = [load_tensor(input_files(d)[position[n]]) for d in data_sets]
        if any(not np.array_equal(t, tensors[0]) for t in tensors[1:]):
            return False
        values[n] = tensors[0]
    constants = [onnx.helper.make_node("Constant", [], [n],
                                       value=numpy_helper.from_array(v, n))
                 for n, v in values.items()]
    kept = [i for i in model.graph.input if i.name not in values]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(constants + nodes)
    onnx.save(model, str(path))
    return True


def check(compile_tool, model_dir, work, target="cpu", constant_inputs=False):
    """Returns (status, detail): passed, failed or skipped."""
    model_path = model_dir / "model.onnx"
    model = onnx.load(str(model_path), load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in initializers]
    data_sets = sorted(model_dir.glob("test_data_set_*"))

    def import_only(reason):
        """Nothing to run: the model must still import, or say what is not
        supported."""
        translate = pathlib.Path(compile_tool).with_name("parallax-translate")
        status, detail, _ = classify(str(translate), model_path)
        if status == "failed":
            return "failed", "import: " + detail.strip()[-300:]
        return "skipped", reason

    if not data_sets:
        return import_only("no test data")
    try:
        first = [load_tensor(p) for p in input_files(data_sets[0])]
    except Exception:
        # Sequence and optional test data: not tensors, not supported.
        return import_only("test data is not tensors")
    constants = set()
    program = work / "program"
    # Without a GPU, --target cuda is checked up to the kernels' binary:
    # every kernel through ptxas (an object file holds the fat binary).
    build_only = target == "cuda"
    try:
        proc = subprocess.run(
            [compile_tool, str(model_path), "--mode", "inference",
             "--target", target, "-o", str(program),
             *(["--emit", "obj"] if build_only else []),
             *bindings(model, first)],
            capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "failed", "compile: timeout"
    if proc.returncode != 0 and constant_inputs:
        # Inputs needed at compile time (Resize's scales, Reshape's shape)
        # become constants, once.
        constants = set(RUN_TIME_INPUT.findall(proc.stderr))
        constant_path = work / "model.onnx"
        if with_constant_inputs(model, constants, data_sets, graph_inputs,
                                constant_path):
            proc = subprocess.run(
                [compile_tool, str(constant_path), "--mode", "inference",
                 "--target", target, "-o", str(program),
                 *(["--emit", "obj"] if build_only else []),
                 *bindings(model, first)],
                capture_output=True, text=True, timeout=300)
        else:
            constants = set()
    if proc.returncode != 0:
        if UNSUPPORTED.search(proc.stderr):
            return "skipped", "not supported"
        return "failed", "compile: " + proc.stderr.strip().splitlines()[-1][:300]
    if build_only:
        return "passed", ""
    for data_set in data_sets:
        inputs_dir, outputs_dir = work / "in", work / "out"
        for d in (inputs_dir, outputs_dir):
            d.mkdir(exist_ok=True)
            for f in d.iterdir():
                f.unlink()
        for info, path in zip(graph_inputs, input_files(data_set)):
            if info.name not in constants:
                np.save(inputs_dir / f"{info.name}.npy", load_tensor(path))
        try:
            run = subprocess.run([str(program), "--inputs", str(inputs_dir),
                                  "--outputs", str(outputs_dir)],
                                 capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return "failed", "run: timeout"
        if run.returncode != 0:
            return "failed", f"run: exit {run.returncode}: {run.stderr.strip()[-300:]}"
        output_files = sorted(data_set.glob("output_*.pb"),
                              key=lambda p: int(p.stem.split("_")[1]))
        for info, path in zip(model.graph.output, output_files):
            want = load_tensor(path)
            got_path = outputs_dir / f"{info.name}.npy"
            if not got_path.exists():
                return "failed", f"output '{info.name}' missing"
            got = np.load(got_path)
            if got.shape != want.shape:
                return "failed", f"output '{info.name}': shape {got.shape}, expected {want.shape}"
            if want.dtype.kind in "fc":
                ok = np.allclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True)
            else:
                ok = np.array_equal(got, want)
            if not ok:
                err = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
                return "failed", f"output '{info.name}' differs (max abs error {err:.3g}) in {data_set.name}"
    return "passed", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", required=True, help="parallax-compile")
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--target", default="cpu",
                        help="parallax-compile --target (cuda-sim: the GPU "
                        "pipeline's kernels run on the CPU; cuda: build "
                        "only, every kernel through ptxas)")
    parser.add_argument("--xfail", default=HERE / "conformance-xfail.txt", type=pathlib.Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--filter", default="", help="only tests whose path contains this")
    parser.add_argument("--write-xfail", type=pathlib.Path,
                        help="write the current failures as an xfail list")
    parser.add_argument("--constant-inputs", action="store_true",
                        help="graph inputs the importer needs at compile "
                        "time (scales, shapes, axes) become constants of "
                        "the test data's values, as in a deployed model")
    parser.add_argument("--results", type=pathlib.Path,
                        help="write each model's status as JSON (for "
                             "import_all.py --conformance)")
    parser.add_argument("--baseline", type=pathlib.Path,
                        help="another run's --results: every model passed "
                             "there must pass here")
    args = parser.parse_args()

    data = pathlib.Path(args.data)
    dirs = sorted(d for s in SUITES for d in (data / s).iterdir()
                  if (d / "model.onnx").exists() and args.filter in str(d))
    xfail = {}
    if args.xfail.exists():
        for line in args.xfail.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, reason = line.partition(":")
                xfail[name.strip()] = reason.strip()

    if args.target == "cuda":
        xfail = {}  # nothing is compared: a known wrong result builds too
    results = {}
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        def job(d):
            work = pathlib.Path(tmp) / d.relative_to(data).as_posix().replace("/", "__")
            work.mkdir()
            try:
                return check(args.compile, d, work, args.target,
                             args.constant_inputs)
            except Exception as e:  # a broken test file, not a Parallax bug
                return "failed", f"harness: {e}"
        futures = {pool.submit(job, d): d for d in dirs}
        for future in concurrent.futures.as_completed(futures):
            results[futures[future].relative_to(data).as_posix()] = future.result()

    if args.results:
        args.results.write_text(json.dumps(
            {name: status for name, (status, _) in sorted(results.items())},
            indent=0) + "\n")
    counts = collections.Counter()
    for name in sorted(results):
        status, detail = results[name]
        if status == "failed" and name in xfail:
            counts["xfail"] += 1
            continue
        if status == "passed" and name in xfail:
            print(f"UNEXPECTED PASS {name} (listed in {args.xfail.name}: {xfail[name]})")
            counts["failed"] += 1
            continue
        if status == "failed":
            print(f"FAILED {name}: {detail}")
        counts[status] += 1
    if args.baseline:
        baseline = json.loads(args.baseline.read_text())
        for name in sorted(results):
            if baseline.get(name) == "passed" and results[name][0] != "passed":
                print(f"FAILED {name}: passes in {args.baseline} and is "
                      f"{results[name][0]} here: {results[name][1]}")
                counts["failed"] += 1
    if args.write_xfail:
        lines = [f"{n}: {results[n][1]}" for n in sorted(results) if results[n][0] == "failed"]
        args.write_xfail.write_text("\n".join(lines) + "\n")
    print(f"({counts['xfail']} expected failures listed in {args.xfail.name})")
    print(f"conformance: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped'] + counts['xfail']} skipped")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
