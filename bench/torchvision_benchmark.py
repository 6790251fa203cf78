#!/usr/bin/python3
"""Training steps of torchvision's classification models: Parallax against
PyTorch 1.13, one thread each (or --threads N each), the same weights,
data and SGD.

For each model (torchvision 0.14, 10 classes), exports it with its
cross-entropy loss (opset 14, no constant folding) in eval mode (batch
norm with its running statistics, which parallax-compile keeps frozen) or,
with --mode train, for training (TrainingMode.TRAINING: batch statistics,
running statistics updated every step, dropout), builds
the training program (parallax-compile -O3 --batch-size B --lr 0.01),
trains S steps of B 32x32 images on both sides and prints the largest
relative difference of the per-step losses (beside the difference between
PyTorch's own float32 and float64 runs: where small batch statistics make
a model chaotic, rounding alone moves the losses that much), the median
step time of each (after the first step) and their ratio (parallax /
PyTorch; <= 1.0 is faster), parallax-compile's time, and each side's
peak resident memory (PyTorch's in a process of its own running the same
steps). Constant initial tensors (fresh batch-norm weights and
statistics) are perturbed slightly first: the exporter would merge equal
initializers into one shared variable. Never asserts timings.

A model with dropout (mobilenet_v2's classifier) draws other masks than
PyTorch, so its losses differ beyond the first step.

Needs Debian's python3-torch and python3-torchvision; usage:
  /usr/bin/python3 bench/torchvision_benchmark.py [--models resnet18 ...]
      [--batch 32] [--steps 6] [--mode eval|train] [--threads N]
      [--profile DIR]
--profile DIR also writes DIR/<model>.profile.json, the Parallax
program's --profile report (bench/roofline.py prints and plots it).
"""

import argparse
import copy
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import torch
import torchvision

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "models"))
from export import (Classifier, distinct_initial_values,  # noqa: E402
                    restore_initializers)

ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def build(name, training):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(num_classes=10)
    return Classifier(distinct_initial_values(model)).train(training)


def run(name, batch, steps, compile_tool, work, training, threads=1,
        profile_dir=None):
    model = build(name, training)
    g = torch.Generator().manual_seed(1)
    images = torch.randn(batch * steps, 3, 32, 32, generator=g)
    labels = torch.randint(0, 10, (batch * steps,), generator=g)
    onnx_path = work / f"{name}.onnx"
    torch.onnx.export(copy.deepcopy(model) if training else model,
                      (images[:batch], labels[:batch]), str(onnx_path),
                      input_names=["images", "labels"], output_names=["loss"],
                      opset_version=14, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
    parameters = {n for n, _ in model.named_parameters()}
    frozen = [] if training else [
        i.name for i in onnx.load(str(onnx_path), load_external_data=False)
        .graph.initializer
        if i.name not in parameters and i.data_type == onnx.TensorProto.FLOAT]
    if training:
        restore_initializers(onnx_path, model)
    data = work / f"{name}.data"
    data.mkdir()
    np.save(data / "images.npy", images.numpy())
    np.save(data / "labels.npy", labels.numpy())
    program = work / name
    start = time.perf_counter()
    subprocess.run([compile_tool, str(onnx_path), "-O3", "--batch-size", str(batch),
                    "--lr", "0.01", *(["--freeze", ",".join(frozen)] if frozen else []),
                    "-o", str(program)], check=True, env=ENV)
    compile_s = time.perf_counter() - start
    metrics = work / f"{name}.jsonl"
    profile = ["--profile", str(profile_dir / f"{name}.profile.json")] \
        if profile_dir else []
    parallax_kib = peak_kib([str(program), "--data", str(data), "--metrics",
                             str(metrics), "--log-every", str(steps),
                             "--threads", str(threads), *profile])
    # PyTorch's peak in a process of its own, running the same steps.
    pytorch_kib = peak_kib([sys.executable, __file__, "--models", name,
                            "--batch", str(batch), "--threads", str(threads),
                            "--mode", "train" if training else "eval",
                            "--pytorch-only", str(data)])
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    ours = [r["loss"] for r in records]
    torch.set_num_threads(threads)
    # PyTorch's own float32 run against float64: how far rounding alone
    # moves the losses (small batch statistics make some models chaotic).
    wide = copy.deepcopy(model).double()
    theirs, torch_times = sgd_steps(model, images, labels, batch)
    exact, _ = sgd_steps(wide, images.double(), labels, batch)

    def relative(xs, ys):
        return max(abs(a - b) / abs(b) for a, b in zip(xs, ys))

    return {"model": name, "loss_rel_diff": relative(ours, theirs),
            "pytorch_f32_f64_diff": relative(theirs, exact),
            "parallax_s": statistics.median(r["time_s"] for r in records[1:]),
            "pytorch_s": statistics.median(torch_times[1:]), "compile_s": compile_s,
            "parallax_mb": parallax_kib / 1024, "pytorch_mb": pytorch_kib / 1024}


def peak_kib(command):
    """Runs `command` and returns its peak resident memory in KiB. Through
    a small interpreter (test/e2e/peak_rss.py): Linux carries the peak of
    the forking process over to its child, and this one holds PyTorch."""
    with tempfile.TemporaryDirectory() as tmp:
        prefix = pathlib.Path(tmp) / "peak"
        subprocess.run([sys.executable, str(ROOT / "test/e2e/peak_rss.py"),
                        str(prefix), *command], check=True, env=ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return int(pathlib.Path(f"{prefix}.0").read_text())


def pytorch_steps(name, training, data, batch, threads):
    """PyTorch's training steps alone on DATA (for its peak memory)."""
    torch.set_num_threads(threads)
    model = build(name, training)
    sgd_steps(model, torch.from_numpy(np.load(data / "images.npy")),
              torch.from_numpy(np.load(data / "labels.npy")), batch)


def sgd_steps(model, images, labels, batch):
    """SGD (lr 0.01) over the examples in batches: each step's loss and
    time."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    losses, times = [], []
    for start in range(0, len(images), batch):
        chunk = slice(start, start + batch)
        begin = time.perf_counter()
        optimizer.zero_grad()
        loss = model(images[chunk], labels[chunk])
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - begin)
        losses.append(loss.item())
    return losses, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--mode", choices=["eval", "train"], default="eval")
    parser.add_argument("--threads", type=int, default=1,
                        help="Parallax's --threads and torch.set_num_threads")
    parser.add_argument("--profile", type=pathlib.Path,
                        help="write each Parallax run's --profile report here")
    parser.add_argument("--pytorch-only", type=pathlib.Path, metavar="DATA",
                        help="run only PyTorch's steps of the first model on "
                        "DATA (images.npy, labels.npy): how its peak memory "
                        "is measured")
    args = parser.parse_args()
    if args.pytorch_only:
        pytorch_steps(args.models[0], args.mode == "train", args.pytorch_only,
                      args.batch, args.threads)
        return
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    compile_tool = str(args.build / "bin" / "parallax-compile")
    print(f"{'model':<18} {'loss diff':>10} {'f32/f64':>8} {'parallax s':>11} "
          f"{'pytorch s':>10} {'ratio':>6} {'compile s':>10} "
          f"{'parallax MB':>12} {'pytorch MB':>11}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            r = run(name, args.batch, args.steps, compile_tool, pathlib.Path(tmp),
                    args.mode == "train", args.threads, args.profile)
            print(f"{name:<18} {r['loss_rel_diff']:>10.1e} "
                  f"{r['pytorch_f32_f64_diff']:>8.1e} {r['parallax_s']:>11.3f} "
                  f"{r['pytorch_s']:>10.3f} {r['parallax_s'] / r['pytorch_s']:>6.2f} "
                  f"{r['compile_s']:>10.1f} {r['parallax_mb']:>12.0f} "
                  f"{r['pytorch_mb']:>11.0f}", flush=True)


if __name__ == "__main__":
    main()
