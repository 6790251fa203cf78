#!/usr/bin/env python3
"""PyTorch's training step on the example models, for the GPU check.

  torch_step_benchmark.py EXPORT_PY BENCH_DIR [--steps S] [--device D]

Builds each model of examples/models/export.py (its `models()`), reads
BENCH_DIR/MODEL/*.npy (the batches the Parallax program trains on, in the
training-data layout, BENCH_DIR/MODEL/batch holding the batch size), and
times SGD steps (lr 0.01) in eager mode and, where the PyTorch has it,
under torch.compile: the mean of the steps after two warm-up steps, the
device synchronised around each. Prints one JSON object per model and mode:
{"model", "mode", "ms_per_step"} (or "error"). The device is CUDA where
PyTorch sees one, else the CPU (how it is checked without a GPU).
"""

import argparse
import importlib.util
import json
import pathlib
import sys
import time

import numpy as np
import torch


def load_export(export_py):
    spec = importlib.util.spec_from_file_location("export", export_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_exported(name, model, export):
    """The model in the mode its ONNX file was exported in: training mode
    for export.TRAINING_MODE (batch statistics), else eval mode for batch
    norms (their statistics fixed) but training mode for everything else
    (cuDNN's RNNs have a backward pass only in training mode)."""
    model.train()
    if name not in export.TRAINING_MODE:
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.eval()
    return model


def time_steps(model, batches, device, steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for step in range(steps):
        batch = [b.to(device, non_blocking=True) for b in batches[step % len(batches)]]
        if device.type == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = model(*batch)
        loss.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    return 1e3 * sum(times[2:]) / max(1, len(times) - 2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("export_py")
    parser.add_argument("bench", type=pathlib.Path)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    # Every model eager first, then every model under torch.compile: its
    # compile time is long, and a caller that stops this early keeps the
    # eager figures.
    runs = []
    export = load_export(args.export_py)
    for name, (model, inputs) in export.models(large=False).items():
        directory = args.bench / name
        if not directory.exists():
            continue
        batch = int((directory / "batch").read_text())
        arrays = [np.load(directory / f"{input_name}.npy") for input_name in inputs]
        count = len(arrays[0]) // batch
        batches = [[torch.from_numpy(a[i * batch:(i + 1) * batch]) for a in arrays]
                   for i in range(count)]
        runs.append((name, as_exported(name, model.to(device), export), batches))
    for mode in ("eager", "torch.compile"):
        for name, model, batches in runs:
            if mode == "torch.compile" and not hasattr(torch, "compile"):
                print(json.dumps({"model": name, "mode": mode,
                                  "error": f"not in PyTorch {torch.__version__}"}))
                continue
            try:
                runnable = model if mode == "eager" else torch.compile(model)
                ms = time_steps(runnable, batches, device, args.steps)
                print(json.dumps({"model": name, "mode": mode, "device": device.type,
                                  "ms_per_step": round(ms, 3)}), flush=True)
            except Exception as error:  # a model torch.compile cannot take
                print(json.dumps({"model": name, "mode": mode,
                                  "error": str(error).splitlines()[0][:200]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
