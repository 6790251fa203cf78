#!/usr/bin/python3
"""Parallax's training step against PyTorch as installed and PyTorch at its
best, so that a win is never a configuration accident.

PyTorch 1.13 (Debian's) has knobs that change its CPU speed severalfold,
and its defaults are not always the best on a given CPU. Each knob is
set before the library loads, in a child process per configuration:
  - OpenBLAS's kernels (its linear layers): the library's own choice
    (OPENBLAS_CORETYPE unset) or each core this CPU can run (Haswell
    with AVX2, SkylakeX with AVX-512);
  - ATen's vector kernels: its default (AVX2) or ATEN_CPU_CAPABILITY=avx512
    where the CPU has AVX-512;
  - threads: torch.set_num_threads(1 .. cores);
  - for convolutional models, oneDNN (torch.backends.mkldnn.enabled) on
    or off, and the channels_last memory format or not.
"As installed" is PyTorch's defaults with OPENBLAS_CORETYPE unset (its
thread count is whatever torch.get_num_threads() says); "at its best" is
the fastest configuration of the whole grid. A configuration stops after
its first timed step when that step is twice as long as the best median
so far (it cannot be the best).

Parallax's program (parallax-compile -O3 --batch-size B --lr 0.01, the
same model, weights and data; SGD) runs with --threads 1 and --threads
CORES with no environment variable of ours set (OPENBLAS_CORETYPE
removed: the runtime chooses its libraries, oneDNN and OpenBLAS, and their
kernels itself).

Models: torchvision's resnet18 and mobilenet_v2 exported for training
(batch statistics, dropout; 10 classes, 32x32 images, batch 32), and
lstm_lm_100k, the language model of issue 20 (100,000-word vocabulary,
128-wide embedding and LSTM, batch 16 x 20 tokens: 24.6 GFLOP of matrix
products a step). Each step time is the median after the first step;
with --repeat R every measurement is taken R times, interleaved, and the
least median kept. Never asserts timings.

Usage:
  /usr/bin/python3 bench/pytorch_at_its_best.py [--models resnet18 ...]
      [--steps 6] [--repeat 1] [--json FILE]
"""

import argparse
import copy
import itertools
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from torch import nn

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "models"))
sys.path.insert(0, str(ROOT / "bench"))
from export import LanguageModel, restore_initializers  # noqa: E402
from cpu_libraries import cpu_flags  # noqa: E402
from torchvision_benchmark import build as build_torchvision  # noqa: E402

CONVOLUTIONAL = {"resnet18", "mobilenet_v2"}
LM_VOCAB, LM_WIDTH, LM_BATCH, LM_SEQ = 100_000, 128, 16, 20


def model_and_data(name, steps):
    """The model (training mode), its inputs by name for `steps` steps
    (whole arrays, batch-major) and the batch size."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    if name == "lstm_lm_100k":
        model = LanguageModel(LM_VOCAB, LM_WIDTH, LM_WIDTH, nn.LSTM).train()
        count = LM_BATCH * steps
        inputs = {"tokens": torch.randint(0, LM_VOCAB, (count, LM_SEQ), generator=g),
                  "targets": torch.randint(0, LM_VOCAB, (count, LM_SEQ), generator=g)}
        return model, inputs, LM_BATCH
    model = build_torchvision(name, training=True)
    inputs = {"images": torch.randn(32 * steps, 3, 32, 32, generator=g),
              "labels": torch.randint(0, 10, (32 * steps,), generator=g)}
    return model, inputs, 32


def torch_child(config):
    """Times PyTorch's steps under `config` (the environment is already
    set); prints {"median_s": ...}."""
    torch.set_num_threads(config["threads"])
    torch.backends.mkldnn.enabled = config["mkldnn"]
    model, inputs, batch = model_and_data(config["model"], config["steps"])
    arrays = list(inputs.values())
    if config["channels_last"]:
        model = model.to(memory_format=torch.channels_last)
        arrays[0] = arrays[0].contiguous(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for step in range(config["steps"]):
        chunk = slice(step * batch, (step + 1) * batch)
        begin = time.perf_counter()
        optimizer.zero_grad()
        loss = model(*(a[chunk] for a in arrays))
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - begin)
        if step > 0 and times[-1] > config["give_up_s"]:
            break  # far slower than the best so far: it cannot be the best
    print(json.dumps({"median_s": statistics.median(times[1:])}))


def base_environment():
    env = dict(os.environ)
    for key in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS",
                "OPENBLAS_NUM_THREADS", "PARALLAX_BLAS", "PARALLAX_BLAS_CORE"):
        env.pop(key, None)
    return env


def torch_grid(name, flags, cores):
    cores_types = [None] + (["Haswell"] if "avx2" in flags else []) + \
        (["SkylakeX"] if "avx512f" in flags else [])
    isas = [None] + (["avx512"] if "avx512f" in flags else [])
    convolutional = name in CONVOLUTIONAL
    for blas, isa, threads, mkldnn, channels_last in itertools.product(
            cores_types, isas, range(1, cores + 1),
            [True, False] if convolutional else [True],
            [False, True] if convolutional else [False]):
        yield {"blas": blas, "isa": isa, "threads": threads, "mkldnn": mkldnn,
               "channels_last": channels_last}


def describe(config):
    parts = [f"BLAS {config['blas'] or 'own choice'}",
             f"ATen {config['isa'] or 'default'}", f"{config['threads']} thr"]
    if config["mkldnn"] is False:
        parts.append("no oneDNN")
    if config["channels_last"]:
        parts.append("channels_last")
    return ", ".join(parts)


def run_torch(name, config, steps, give_up_s=float("inf")):
    env = base_environment()
    if config["blas"]:
        env["OPENBLAS_CORETYPE"] = config["blas"]
    if config["isa"]:
        env["ATEN_CPU_CAPABILITY"] = config["isa"]
    child = dict(config, model=name, steps=steps, give_up_s=give_up_s)
    out = subprocess.run([sys.executable, __file__, "--torch-child", json.dumps(child)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])["median_s"]


def prepare_parallax(name, steps, work, compile_tool):
    model, inputs, batch = model_and_data(name, steps)
    onnx_path = work / f"{name}.onnx"
    first = tuple(v[:batch] for v in inputs.values())
    torch.onnx.export(copy.deepcopy(model), first, str(onnx_path),
                      input_names=list(inputs), output_names=["loss"],
                      opset_version=14, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
    restore_initializers(onnx_path, model)
    data = work / f"{name}.data"
    data.mkdir()
    for key, value in inputs.items():
        np.save(data / f"{key}.npy", value.numpy())
    program = work / name
    # One worker's program: no collectives, tables updated in place.
    subprocess.run([compile_tool, str(onnx_path), "-O3", "--batch-size", str(batch),
                    "--lr", "0.01", "--workers", "1", "-o", str(program)], check=True,
                   env=base_environment())
    return program, data


def run_parallax(program, data, threads, steps, work):
    metrics = work / f"{program.name}.{threads}.jsonl"
    metrics.unlink(missing_ok=True)
    subprocess.run([str(program), "--data", str(data), "--metrics", str(metrics),
                    "--log-every", str(steps), "--threads", str(threads)],
                   check=True, env=base_environment(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    return statistics.median(r["time_s"] for r in records[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--models", nargs="+",
                        default=["resnet18", "mobilenet_v2", "lstm_lm_100k"])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", type=pathlib.Path, help="write the results here")
    parser.add_argument("--torch-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_child:
        torch_child(json.loads(args.torch_child))
        return
    flags, cores = cpu_flags(), len(os.sched_getaffinity(0))
    compile_tool = str(args.build / "bin" / "parallax-compile")
    # As installed: no knob set, PyTorch's own thread count.
    installed_threads = int(subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
        env=base_environment(), check=True, capture_output=True, text=True).stdout)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for name in args.models:
            print(f"{name}: compiling", file=sys.stderr, flush=True)
            program, data = prepare_parallax(name, args.steps, work, compile_tool)
            # As installed first: it is measured in full, and the others
            # give up once they are twice as slow as the best so far.
            grid = sorted(torch_grid(name, flags, cores), key=lambda c: not (
                c["blas"] is None and c["isa"] is None and c["mkldnn"]
                and c["threads"] == installed_threads and not c["channels_last"]))
            installed = 0
            parallax = {t: float("inf") for t in (1, cores)}
            torch_times = [float("inf")] * len(grid)
            for round_ in range(args.repeat):
                for threads in parallax:
                    parallax[threads] = min(parallax[threads], run_parallax(
                        program, data, threads, args.steps, work))
                for i, config in enumerate(grid):
                    print(f"{name}: PyTorch {i + 1}/{len(grid)} (round "
                          f"{round_ + 1}/{args.repeat}): {describe(config)}",
                          file=sys.stderr, flush=True)
                    torch_times[i] = min(torch_times[i], run_torch(
                        name, config, args.steps, 2 * min(torch_times)))
            best = min(range(len(grid)), key=lambda i: torch_times[i])
            ours = min(parallax.values())
            result = {"model": name,
                      "parallax_s": {str(t): s for t, s in parallax.items()},
                      "pytorch_installed_s": torch_times[installed],
                      "pytorch_installed": describe(grid[installed]),
                      "pytorch_best_s": torch_times[best],
                      "pytorch_best": describe(grid[best]),
                      "vs_installed": ours / torch_times[installed],
                      "vs_best": ours / torch_times[best],
                      "pytorch_grid": [dict(c, median_s=t)
                                       for c, t in zip(grid, torch_times)]}
            results.append(result)
            print(f"{name}: parallax {parallax[1]:.3f} s (1 thread), "
                  f"{parallax[cores]:.3f} s ({cores}); PyTorch as installed "
                  f"{result['pytorch_installed_s']:.3f} s ({result['pytorch_installed']}); "
                  f"at its best {result['pytorch_best_s']:.3f} s ({result['pytorch_best']}); "
                  f"parallax / installed {result['vs_installed']:.2f}, "
                  f"/ best {result['vs_best']:.2f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
