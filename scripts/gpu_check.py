#!/usr/bin/env python3
"""The GPU check: programs built here with --target cuda, run on a GPU.

  gpu_check.py prepare BUNDLE [--target cuda-sim] [--quick]
                                (here, with the build and Debian's onnx;
                                --quick: the benchmarked models only)
  BUNDLE/gpu_check.py run       (on the GPU machine: standard library only)

`prepare` builds, with build/bin/parallax-compile --target cuda:
- the training program of every example model with a reference run
  (CHECKED: the 8 benchmarked models, torchvision's families, the
  training-mode transformer and the EmbeddingBag models), as PyTorch's
  reference run was made (test/e2e/check_training.py --print-compile),
  with the
  reference data and PyTorch 1.13's losses and final parameters; the
  models with embeddings also compiled for one worker (`--workers 1`: no
  parameter store, their row-sparse updates as kernels);
- the CNN and the LSTM LM compiled for 2 workers, and the LM with every
  variable on parameter servers for 2 and 4 (DISTRIBUTED);
- inference programs of a sample of the ONNX conformance models that the
  CPU and cuda-sim targets pass (one per op family), with their inputs and
  expected outputs as .npy, and one of reductions by warps and by blocks
  (REDUCTIONS_MODEL, expected outputs from numpy in float64);
- the shared libraries the programs load besides the C library and the
  CUDA driver (MPI, protobuf: one-worker programs never initialise MPI),
so the bundle runs where only the NVIDIA driver and cuBLAS (from the CUDA
toolkit, or PyTorch's pip packages, which `run` looks for) are installed.
It is about 110 MiB, 13 MiB compressed (how it travels to a GPU machine:
a device call carries 64 MiB). `--target cuda-sim` builds the same bundle
for the CPU, so the check itself is tried out where there is no GPU.

`run` runs each training program on the GPU and compares every step's
loss and every final parameter with PyTorch's (1e-4 relative, 1e-6
absolute, as test/e2e/training.test), runs the 2-worker programs under
the machine's mpirun through MPI on host memory and through NCCL
(run_distributed) against the same references, runs compute-sanitizer's
memcheck over two of the programs where it is found (run_memcheck),
checks the CNNs again with the step replayed as a CUDA graph
(PARALLAX_CUDA_GRAPHS=1, run_graphs; timed too in the benchmark), runs
each conformance program and
compares its outputs (ONNX's tolerances: rtol 1e-3, atol 1e-7), prints one
line per check, the GPU and each training step's time, then times the
training step of every example model at batch 128 (and, under --profile,
its longest kernels) against PyTorch's on the same GPU (eager and torch.compile; torch_step_benchmark.py, run with
the machine's PyTorch), prints the table, and exits with 1 if any check
failed. scripts/gpu-check.sh wraps both.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
# The models whose step is also timed against PyTorch's (BENCH_BATCH).
OPTIMIZERS = {"lstm_lm": "adagrad", "gru_lm": "sgd", "transformer_lm": "adagrad",
              "wide_deep": "sgd", "cnn": "sgd", "mobile_cnn": "sgd",
              "cnn_train": "sgd", "mobile_cnn_train": "sgd"}
# Checked against their reference runs only: torchvision's families and
# the models of the importer's training-mode features (batch norms with
# batch statistics, Dropout at ratio 0, EmbeddingBag from offsets).
CHECKED = {**OPTIMIZERS, **{m: "sgd" for m in (
    "resnet_train", "mobilenet_v2_train", "squeezenet_train", "regnet_train",
    "densenet_train", "mnasnet_train", "efficientnet_train", "shufflenet_train",
    "mobilenet_v3_train", "transformer_lm_train", "ctr_bag", "ctr_offsets")}}
# Tolerances other than check_training.py's 1e-4 relative, 1e-6 absolute:
# those of the model's CPU tests (test/e2e/training-torchvision.test).
TOLERANCES = {"mobilenet_v3_train": ["--rtol", "1e-3", "--atol", "1e-4"]}
# Models whose tables a program compiled without --workers keeps on a
# parameter server on the host: also built for one worker, where the
# tables' updates are kernels.
ONE_WORKER = ("lstm_lm", "wide_deep")
# (model, optimizer, program suffix, extra check_training.py flags)
TRAINING = [(m, o, "", []) for m, o in CHECKED.items()] + \
    [(m, OPTIMIZERS[m], ".one", ["--workers", "1"]) for m in ONE_WORKER]
# Models whose training step the compiler finds capturable as one CUDA
# graph: checked again with PARALLAX_CUDA_GRAPHS=1 (the step captured at
# the third step and replayed from then on) against the same references.
GRAPHS = ("cnn", "cnn_train", "mobile_cnn_train", "resnet_train",
          "mobilenet_v2_train", "mobilenet_v3_train", "shufflenet_train")
# Several workers sharing the one GPU, each with 1/N of the reference
# batch, launched with mpirun, checked against the one-worker reference:
# (model, optimizer, workers, strategy). The LM with every variable on
# parameter servers: through NCCL, its embedding's rows go between the
# GPUs and are updated by the runtime's kernels (DeviceParameterStore.cpp);
# at 4 workers (one machine to MPI) they are summed on rank 0 first.
DISTRIBUTED = [("cnn", "sgd", 2, "hybrid"), ("lstm_lm", "adagrad", 2, "hybrid"),
               ("lstm_lm", "adagrad", 2, "ps"), ("lstm_lm", "adagrad", 4, "ps")]


def distributed_suffix(workers, strategy):
    """A multi-worker program's name after its model and optimizer."""
    return f".{workers}" + ("" if strategy == "hybrid" else f".{strategy}")
# One conformance model per op family the example models use (their kernels
# are the ones a real model's step is made of), all passing on the CPU.
CONFORMANCE = [
    "node/test_add_bcast", "node/test_matmul_3d", "node/test_gemm_default_matrix_bias",
    "node/test_conv_with_strides_padding", "node/test_maxpool_2d_pads",
    "node/test_averagepool_2d_pads", "node/test_batchnorm_example",
    "node/test_softmax_axis_1", "node/test_logsoftmax_large_number",
    "node/test_reduce_mean_default_axes_keepdims_random",
    "node/test_reduce_max_default_axes_keepdim_example",
    "node/test_reduce_mean_keepdims_example", "node/test_gather_0",
    "node/test_transpose_all_permutations_3", "node/test_concat_3d_axis_1",
    "node/test_tanh", "node/test_sigmoid", "node/test_relu", "node/test_lstm_defaults",
    "node/test_gru_defaults", "node/test_sce_mean_weight", "node/test_where_example",
    # ConvTranspose in 1-d and 3-d: cuDNN's backward data on 2-d calls of
    # unit height and on 5-d descriptors.
    "node/test_convtranspose_1d", "node/test_convtranspose_3d",
]
# Models of 1-d and 3-d convolutions (test/e2e/Inputs, from
# test/e2e/make_conv_models.py): two SGD steps of batch 8 at lr 0.1, every
# weight against PyTorch's (cuDNN's 1-d and 3-d forward, filter and input
# gradients).
CONVOLUTION_MODELS = ("conv1d", "conv3d")
# The training-step benchmark against PyTorch: every example model at this
# batch, SGD, BENCH_STEPS steps (the first two warm-up).
BENCH_BATCH = 128
BENCH_STEPS = 12
# Bounds, so that one hanging program cannot take a GPU lease: each
# program's seconds, and the whole run's (the PyTorch comparison gets what
# is left of it; GPU_CHECK_SECONDS sets it).
PROGRAM_SECONDS = 120
RUN_SECONDS = int(os.environ.get("GPU_CHECK_SECONDS", 420))
SYSTEM_LIBRARIES = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so",
                    "ld-linux", "linux-vdso", "libcuda.so")


# The GPU machine's CPU is not this one: its programs' host code is built
# for any AVX2 machine, not for this machine's instruction sets
# (parallax-compile --cpu).
GPU_MACHINE_CPU = "x86-64-v3"


def prepare(bundle, target, quick):
    root = HERE.parent
    compile_tool = [str(root / "build" / "bin" / "parallax-compile"), "--cpu", GPU_MACHINE_CPU]
    if bundle.exists():
        shutil.rmtree(bundle)
    (bundle / "programs").mkdir(parents=True)
    (bundle / "lib").mkdir()
    for script in ("scripts/gpu_check.py", "test/e2e/check_training.py",
                   "test/e2e/npy_close.py", "scripts/torch_step_benchmark.py",
                   "examples/models/export.py"):
        shutil.copy(root / script, bundle)
    env = dict(os.environ, PARALLAX_SRC=str(root))
    # --quick: the benchmarked models only (how the check is tried out
    # here, ctest gpu-check-cuda-sim); `run` checks what prepare built.
    training = [t for t in TRAINING if not quick or t[0] in OPTIMIZERS]
    (bundle / "training.json").write_text(json.dumps(training) + "\n")
    (bundle / "target").write_text(target + "\n")
    # Training programs read their initial weights from the model when
    # they start: the models travel with them (--init names the copy).
    (bundle / "models").mkdir()
    for model in sorted({t[0] for t in training} | set(OPTIMIZERS)):
        shutil.copy(root / "examples" / "models" / f"{model}.onnx", bundle / "models")
    distributed = [d for d in DISTRIBUTED if not quick or d[:3] == ("cnn", "sgd", 2)]
    (bundle / "distributed.json").write_text(json.dumps(distributed) + "\n")
    programs = []
    builds = [(m, o, s, f) for m, o, s, f in training] + \
        [(m, o, distributed_suffix(n, st), ["--workers", str(n), "--strategy", st])
         for m, o, n, st in distributed]
    for model, optimizer, suffix, flags in builds:
        data = root / "examples" / "models" / "data" / model
        copy = bundle / "examples" / "models" / "data" / model
        if not copy.exists():
            shutil.copytree(data / "train", copy / "train")
            shutil.copytree(data / "reference" / optimizer, copy / "reference" / optimizer)
        program = bundle / "programs" / f"{model}.{optimizer}{suffix}"
        command = subprocess.run(
            [sys.executable, str(root / "test" / "e2e" / "check_training.py"), model,
             optimizer, str(bundle / "unused"), "--target", target, "--print-compile",
             *flags], env=env, check=True, capture_output=True, text=True).stdout.split()
        command[0:1] = compile_tool
        command[command.index("-o") + 1] = str(program)
        if "--workers" in flags and flags[flags.index("--workers") + 1] != "1":
            # What the plan says the workers exchange, to compare with the run.
            command += ["--plan-report", str(program) + ".plan.json"]
        print(f"building {program.name}", flush=True)
        subprocess.run(command, check=True)
        programs.append(program)
    prepare_benchmark(bundle, compile_tool, programs, target)
    prepare_conformance(bundle, compile_tool, programs, target)
    prepare_reductions(bundle, compile_tool, programs, target)
    prepare_convolution_training(bundle, compile_tool, programs, target)
    copy_libraries(bundle, programs)
    size = sum(f.stat().st_size for f in bundle.rglob("*") if f.is_file())
    print(f"bundle {bundle}: {size / 2**20:.1f} MiB, {len(programs)} programs")


def prepare_benchmark(bundle, compile_tool, programs, target):
    """Programs at BENCH_BATCH for one GPU (`--workers 1`: nothing on the
    host but the batch and a sparse update's ids) and their data (the
    reference batches repeated), for the step-time comparison with
    PyTorch."""
    import numpy as np
    root = HERE.parent
    for model in OPTIMIZERS:
        train = root / "examples" / "models" / "data" / model / "train"
        data = bundle / "bench" / model
        data.mkdir(parents=True)
        for array in sorted(train.glob("*.npy")):
            values = np.load(array)
            np.save(data / array.name, np.resize(
                values, (BENCH_BATCH * BENCH_STEPS,) + values.shape[1:]))
        (data / "batch").write_text(f"{BENCH_BATCH}\n")
        config = json.loads((root / "examples" / "models" / "data" / model / "reference" /
                             "sgd" / "config.json").read_text())
        # On the GPU, the same program with a thread per output for every
        # reduction too (--gpu-warp-reductions=false): what the warps gain;
        # and a CNN's with im2col kernels and cuBLAS products instead of
        # cuDNN's convolutions: what cuDNN gains.
        variants = [("", [])]
        if target == "cuda":
            variants.append((".threads", ["--gpu-warp-reductions=false"]))
            if "cnn" in model:
                variants.append((".im2col", ["--gpu-convolutions=im2col"]))
        for suffix, flags in variants:
            program = bundle / "programs" / f"bench.{model}{suffix}"
            print(f"building {program.name}", flush=True)
            subprocess.run([*compile_tool, str(root / "examples" / "models" / f"{model}.onnx"),
                            "--batch-size", str(BENCH_BATCH), "--optimizer", "sgd", "--lr", "0.01",
                            *(["--freeze", ",".join(config["freeze"])] if config["freeze"] else []),
                            "--workers", "1", "--target", target, *flags, "-o", str(program)],
                           check=True)
            programs.append(program)


def prepare_conformance(bundle, compile_tool, programs, target):
    sys.path.insert(0, str(HERE.parent / "test" / "ONNXTestData"))
    import numpy as np
    import onnx
    from onnx import numpy_helper
    from conformance import bindings, load_tensor
    data = pathlib.Path("/usr/share/libonnx-testdata/data")
    for name in CONFORMANCE:
        model_dir = data / name
        model = onnx.load(str(model_dir / "model.onnx"))
        initializers = {i.name for i in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in initializers]
        data_set = sorted(model_dir.glob("test_data_set_*"))[0]
        values = [load_tensor(p) for p in sorted(data_set.glob("input_*.pb"),
                  key=lambda p: int(p.stem.split("_")[1]))]
        case = bundle / "conformance" / model_dir.name
        (case / "inputs").mkdir(parents=True)
        (case / "expected").mkdir()
        for info, value in zip(inputs, values):
            np.save(case / "inputs" / f"{info.name}.npy", value)
        outputs = sorted(data_set.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
        for info, path in zip(model.graph.output, outputs):
            np.save(case / "expected" / f"{info.name}.npy", load_tensor(path))
        program = bundle / "programs" / f"conformance.{model_dir.name}"
        print(f"building {program.name}", flush=True)
        subprocess.run([*compile_tool, str(model_dir / "model.onnx"), "--mode",
                        "inference", "--target", target, "-o", str(program),
                        *bindings(model, values)], check=True)
        programs.append(program)


# Reductions the example models' kernels do not reach at their sizes, as
# one more conformance case (checked the same way): rows a warp reduces
# (40 x 1000), rows a block of 256 threads reduces through shared memory
# (128 x 4096, and 2 x 4099, which no split divides), and a softmax whose
# rows of 5000 blocks take whole.
REDUCTIONS_MODEL = """<ir_version: 8, opset_import: ["" : 17]>
g (float[40,1000] w, float[128,4096] x, float[2,4099] y, float[128,5000] z)
  => (float[40,1] wsum, float[128,1] xsum, float[128,1] xmax, float[2,1] ysum, float[128,5000] zsoft)
{
  axes = Constant <value = int64[1] {1}> ()
  wsum = ReduceSum <keepdims = 1> (w, axes)
  xsum = ReduceSum <keepdims = 1> (x, axes)
  xmax = ReduceMax <axes = [1], keepdims = 1> (x)
  ysum = ReduceSum <keepdims = 1> (y, axes)
  zsoft = Softmax <axis = 1> (z)
}
"""


def prepare_reductions(bundle, compile_tool, programs, target):
    import numpy as np
    case = bundle / "conformance" / "reductions_warps_and_blocks"
    (case / "inputs").mkdir(parents=True)
    (case / "expected").mkdir()
    model = case / "model.onnxtext"
    model.write_text(REDUCTIONS_MODEL)
    rng = np.random.default_rng(0)
    # Positive summands: no cancellation, so ONNX's relative tolerance holds.
    inputs = {"w": rng.random((40, 1000)), "x": rng.random((128, 4096)),
              "y": rng.random((2, 4099)), "z": 4 * rng.standard_normal((128, 5000))}
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    for name, value in inputs.items():
        np.save(case / "inputs" / f"{name}.npy", value)
    wide = {k: v.astype(np.float64) for k, v in inputs.items()}
    z = np.exp(wide["z"] - wide["z"].max(axis=1, keepdims=True))
    expected = {"wsum": wide["w"].sum(1, keepdims=True),
                "xsum": wide["x"].sum(1, keepdims=True),
                "xmax": wide["x"].max(1, keepdims=True),
                "ysum": wide["y"].sum(1, keepdims=True),
                "zsoft": z / z.sum(1, keepdims=True)}
    for name, value in expected.items():
        np.save(case / "expected" / f"{name}.npy", value.astype(np.float32))
    program = bundle / "programs" / f"conformance.{case.name}"
    print(f"building {program.name}", flush=True)
    subprocess.run([*compile_tool, str(model), "--mode", "inference", "--target",
                    target, "-o", str(program)], check=True)
    model.unlink()
    programs.append(program)


def prepare_convolution_training(bundle, compile_tool, programs, target):
    for name in CONVOLUTION_MODELS:
        source = HERE.parent / "test" / "e2e" / "Inputs" / name
        case = bundle / "convolutions" / name
        shutil.copytree(source / "train", case / "train")
        shutil.copytree(source / "reference", case / "reference")
        shutil.copy(source / "model.onnx", case)
        program = bundle / "programs" / f"convolutions.{name}"
        print(f"building {program.name}", flush=True)
        subprocess.run([*compile_tool, str(source / "model.onnx"), "--batch-size", "8",
                        "--lr", "0.1", "--target", target, "-o", str(program)], check=True)
        programs.append(program)


def run_convolution_training(bundle, env, work, deadline):
    from npy_close import parameter_mismatches
    failures = 0
    for case in sorted((bundle / "convolutions").iterdir()):
        saved = work / "convolutions" / case.name
        saved.parent.mkdir(parents=True, exist_ok=True)
        status, output = bounded(
            [str(bundle / "programs" / f"convolutions.{case.name}"), "--data",
             str(case / "train"), "--steps", "2", "--init", str(case / "model.onnx"),
             "--save", str(saved)],
            env, deadline, work / "logs" / f"convolutions.{case.name}.log")
        close = lambda got, want: all(abs(g - w) <= 1e-4 * abs(w) + 1e-6
                                      for g, w in zip(got, want))
        problems = [f"exit {status}: {output.strip()[-300:]}"] if status != 0 else \
            parameter_mismatches(saved, sorted((case / "reference").glob("*.npy")), close)
        failures += bool(problems)
        print(f"{'FAIL' if problems else 'PASS'} training convolutions {case.name}"
              + (": " + "; ".join(problems) if problems else ""), flush=True)
    return failures


def copy_libraries(bundle, programs):
    """The libraries the programs load, but the C library and the driver."""
    needed = set()
    for program in programs:
        for line in subprocess.run(["ldd", str(program)], check=True,
                                   capture_output=True, text=True).stdout.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) > 2 and parts[2].startswith("/"):
                if not any(parts[0].startswith(s) for s in SYSTEM_LIBRARIES):
                    needed.add(parts[2])
    for library in sorted(needed):
        shutil.copy(library, bundle / "lib")


def cuda_library_dirs():
    """Where PyTorch's pip packages keep cuBLAS, cuDNN and NCCL (site-packages/nvidia/...),
    for the Pythons this machine has; the CUDA toolkit's lib64 if any."""
    found = []
    prefixes = {pathlib.Path(sys.prefix), pathlib.Path("/opt/torch/.venv")}
    for prefix in prefixes:
        for name in ("libcublas.so*", "libcudnn.so*", "libnccl.so*"):
            for library in sorted(prefix.glob(f"lib/python3*/site-packages/nvidia/**/{name}")):
                if str(library.parent) not in found:
                    found.append(str(library.parent))
    for toolkit in ("/usr/local/cuda/lib64",):
        if pathlib.Path(toolkit, "libcublas.so").exists():
            found.append(toolkit)
    return found


def bounded(command, env, deadline, log, most=PROGRAM_SECONDS):
    """Runs `command` until `deadline` (time.monotonic()), for at most
    `most` seconds (None: no bound but the deadline); (exit status or None
    when it timed out, its output), the output also written to `log`."""
    seconds = deadline - time.monotonic()
    if most is not None:
        seconds = min(most, seconds)
    try:
        result = subprocess.run(command, env=env, capture_output=True, text=True,
                                timeout=max(1, seconds))
        status, output = result.returncode, result.stdout + result.stderr
    except subprocess.TimeoutExpired as expired:
        decode = lambda b: b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        status, output = None, decode(expired.stdout) + decode(expired.stderr)
        output += f"\ntimed out after {seconds:.0f} s"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(output)
    return status, output


def run(bundle):
    deadline = time.monotonic() + RUN_SECONDS
    env = dict(os.environ)
    cublas = cuda_library_dirs()
    print("cuBLAS, cuDNN, NCCL from: " + (", ".join(cublas) or "nowhere found"), flush=True)
    env["LD_LIBRARY_PATH"] = ":".join(filter(None, [str(bundle / "lib"), *cublas,
                                                    env.get("LD_LIBRARY_PATH")]))
    env["PARALLAX_SRC"] = str(bundle)
    if shutil.which("nvidia-smi"):
        gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
        print(gpus.stdout.strip() or "nvidia-smi: " + gpus.stderr.strip(), flush=True)
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,memory.total",
                                 "--format=csv,noheader"], capture_output=True, text=True)
        print("driver, memory: " + driver.stdout.strip(), flush=True)
    else:
        print("no nvidia-smi on PATH", flush=True)
    print("kernel: " + os.uname().release, flush=True)
    work = bundle / "work"
    logs = work / "logs"
    failures = 0
    training = json.loads((bundle / "training.json").read_text())
    for model, optimizer, suffix, _ in training:
        program = bundle / "programs" / f"{model}.{optimizer}{suffix}"
        started = time.monotonic()
        status, output = bounded(
            [sys.executable, str(bundle / "check_training.py"), model, optimizer,
             str(work / (model + suffix)), "--program", str(program),
             "--init", str(bundle / "models" / f"{model}.onnx"),
             *TOLERANCES.get(model, [])],
            env, deadline,
            logs / f"{program.name}.log")
        elapsed = time.monotonic() - started
        lines = output.strip().splitlines() or ["no output"]
        ok = status == 0
        failures += not ok
        metrics = work / (model + suffix) / "metrics.jsonl"
        steps = [json.loads(l)["time_s"] for l in metrics.read_text().splitlines()] \
            if metrics.exists() else []
        step = f", steps after the first {1e3 * sum(steps[1:]) / max(1, len(steps) - 1):.2f} ms" \
            if len(steps) > 1 else ""
        errors = [l for l in lines if "error" in l or "mismatch" in l
                  or "timed out" in l] or lines[-3:]
        print(f"{'PASS' if ok else 'FAIL'} training {model} {optimizer}{suffix} "
              f"({elapsed:.1f} s{step}): "
              + (lines[-1] if ok else " | ".join(errors[-4:])), flush=True)
    failures += run_graphs(bundle, env, work, deadline)
    failures += run_distributed(bundle, env, work, deadline)
    failures += run_memcheck(bundle, env, work, deadline)
    sys.path.insert(0, str(bundle))
    from npy_close import load
    failures += run_convolution_training(bundle, env, work, deadline)
    for case in sorted((bundle / "conformance").iterdir()):
        out = work / "conformance" / case.name
        out.mkdir(parents=True, exist_ok=True)
        status, output = bounded([str(bundle / "programs" / f"conformance.{case.name}"),
                                  "--inputs", str(case / "inputs"), "--outputs", str(out)],
                                 env, deadline,
                                 logs / f"conformance.{case.name}.log")
        problems = [] if status == 0 else [
            f"exit {status}: {output.strip()[-300:]}"]
        for expected in sorted((case / "expected").glob("*.npy")) if not problems else []:
            got_path = out / expected.name
            if not got_path.exists():
                problems.append(f"{expected.stem} missing")
                continue
            (got_shape, got), (want_shape, want) = load(got_path), load(expected)
            if tuple(got_shape) != tuple(want_shape):
                problems.append(f"{expected.stem}: shape {got_shape} != {want_shape}")
            elif any(not abs(g - w) <= 1e-3 * abs(w) + 1e-7 for g, w in zip(got, want)
                     if not (g != g and w != w)):
                problems.append(f"{expected.stem} differs")
        failures += bool(problems)
        print(f"{'FAIL' if problems else 'PASS'} conformance {case.name}"
              + (": " + "; ".join(problems) if problems else ""), flush=True)
    benchmark(bundle, env, work, deadline)
    print(f"gpu check: {failures} failed")
    return 1 if failures else 0


def run_graphs(bundle, env, work, deadline):
    """The GRAPHS models' training checks with the step replayed as a CUDA
    graph; failures (a program that did not capture its step fails too).
    Skipped for cuda-sim, whose steps run on the host."""
    target = (bundle / "target").read_text().strip()
    if target != "cuda":
        print("SKIP CUDA graphs: built for " + target, flush=True)
        return 0
    failures = 0
    for model in GRAPHS:
        optimizer = CHECKED[model]
        program = bundle / "programs" / f"{model}.{optimizer}"
        if not program.exists():
            continue
        status, output = bounded(
            [sys.executable, str(bundle / "check_training.py"), model, optimizer,
             str(work / (model + ".graphs")), "--program", str(program),
             "--init", str(bundle / "models" / f"{model}.onnx"),
             *TOLERANCES.get(model, [])],
            dict(env, PARALLAX_CUDA_GRAPHS="1"), deadline,
            work / "logs" / f"{program.name}.graphs.log")
        lines = output.strip().splitlines() or ["no output"]
        captured = "runs as one CUDA graph" in output
        ok = status == 0 and captured
        failures += not ok
        why = lines[-1] if ok else "the step was not captured" if status == 0 \
            else " | ".join(lines[-4:])
        print(f"{'PASS' if ok else 'FAIL'} training {model} {optimizer} "
              f"as a CUDA graph: {why}", flush=True)
    return failures


def run_distributed(bundle, env, work, deadline):
    """The multi-worker checks under this machine's mpirun; failures."""
    distributed = json.loads((bundle / "distributed.json").read_text())
    if not distributed:
        return 0
    launcher = shutil.which("mpirun")
    if not launcher:
        print("SKIP distributed: no mpirun on PATH", flush=True)
        return 0
    version = subprocess.run([launcher, "--version"], capture_output=True, text=True)
    print(f"mpirun: {launcher}: "
          + " ".join((version.stdout + version.stderr).split()[:6]), flush=True)
    modes = rank_modes(work)
    failures = 0
    for model, optimizer, workers, strategy in distributed:
        suffix = distributed_suffix(workers, strategy)
        program = bundle / "programs" / f"{model}.{optimizer}{suffix}"
        for mode, variables in modes.items():
            started = time.monotonic()
            status, output = bounded(
                [sys.executable, str(bundle / "check_training.py"), model, optimizer,
                 str(work / f"{model}{suffix}.{mode}"), "--workers", str(workers),
                 "--strategy", strategy, "--program", str(program),
                 "--init", str(bundle / "models" / f"{model}.onnx"),
                 *TOLERANCES.get(model, [])],
                dict(env, **variables), deadline,
                work / "logs" / f"{program.name}.{mode}.log")
            lines = output.strip().splitlines() or ["no output"]
            failures += status != 0
            path = [l.split(": ", 1)[1] for l in lines if "communicate through" in l]
            if status == 0:
                summary = ([l for l in lines if "mismatches" in l] or lines[-1:])[-1]
                result = summary + "; " + traffic_and_time(
                    work / f"{model}{suffix}.{mode}",
                    pathlib.Path(str(program) + ".plan.json"))
            else:
                errors = [l for l in lines if "error" in l.lower() or "mismatch" in l
                          or "timed out" in l] or lines[-3:]
                result = " | ".join(errors[-4:])
            print(f"{'PASS' if status == 0 else 'FAIL'} training {model} {optimizer} "
                  f"{workers} workers {strategy}, {mode} "
                  f"({time.monotonic() - started:.1f} s): "
                  + result + (f" [{path[0]}]" if path else ""), flush=True)
    return failures


def rank_modes(work):
    """The environment of each way ranks sharing the one GPU communicate:
    through MPI on host memory (what the runtime chooses by itself there),
    and through NCCL, made to treat each rank as a machine of its own
    (NCCL_HOSTID, set by a wrapper each rank runs through: NCCL refuses two
    ranks on one GPU of one host) and to talk over the loopback
    interface."""
    wrapper = work / "rank_env.sh"
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text('#!/bin/sh\n'
                       'export NCCL_HOSTID="gpu-check-rank-${OMPI_COMM_WORLD_RANK:-0}"\n'
                       'exec "$@"\n')
    wrapper.chmod(0o755)
    return {"mpi": {"PARALLAX_GPU_COMM": "mpi"},
            "nccl": {"PARALLAX_GPU_COMM": "nccl", "PARALLAX_RANK_WRAPPER": str(wrapper),
                     "NCCL_SOCKET_IFNAME": "lo", "NCCL_DEBUG": "WARN"}}


def compute_sanitizer():
    """compute-sanitizer on PATH or in the CUDA toolkit, or None."""
    found = shutil.which("compute-sanitizer")
    toolkit = pathlib.Path("/usr/local/cuda/bin/compute-sanitizer")
    return found or (str(toolkit) if toolkit.exists() else None)


def run_memcheck(bundle, env, work, deadline):
    """compute-sanitizer's memcheck over 2 steps of the CNN with training-
    mode batch norms, and (when built) of the CNN and of the LM on
    parameter servers at 2 workers through NCCL; failures. Skipped where
    the sanitizer is missing."""
    sanitizer = compute_sanitizer()
    target = (bundle / "target").read_text().strip()
    why = ("built for " + target if target != "cuda"
           else "no compute-sanitizer" if not sanitizer
           else "GPU_CHECK_MEMCHECK=0" if os.environ.get("GPU_CHECK_MEMCHECK") == "0"
           else None)
    if why:
        print("SKIP memcheck: " + why, flush=True)
        return 0
    data = bundle / "examples" / "models" / "data"
    memcheck = [sanitizer, "--tool", "memcheck", "--error-exitcode", "3"]
    runs = [("cnn_train.sgd", memcheck + [
        str(bundle / "programs" / "cnn_train.sgd"), "--data", str(data / "cnn_train" / "train"),
        "--steps", "2", "--init", str(bundle / "models" / "cnn_train.onnx")], {})]
    # Through NCCL: the CNN's buckets, and the LM's parameter store on the
    # GPUs (the runtime's row kernels, its device blocks).
    for model, program in (("cnn", "cnn.sgd.2"), ("lstm_lm", "lstm_lm.adagrad.2.ps")):
        nccl = bundle / "programs" / program
        if not nccl.exists() or not shutil.which("mpirun"):
            continue
        sys.path.insert(0, str(bundle))
        from check_training import mpirun
        variables = rank_modes(work)["nccl"]
        runs.append((f"{program} nccl", [
            *mpirun(2), variables["PARALLAX_RANK_WRAPPER"], *memcheck, str(nccl),
            "--data", str(data / model / "train"), "--steps", "2",
            "--init", str(bundle / "models" / f"{model}.onnx")], variables))
    failures = 0
    for name, command, variables in runs:
        status, output = bounded(command, dict(env, **variables), deadline,
                                 work / "logs" / f"memcheck.{name.replace(' ', '.')}.log")
        summary = [l for l in output.splitlines() if "ERROR SUMMARY" in l]
        failures += status != 0
        print(f"{'PASS' if status == 0 else 'FAIL'} memcheck {name}: "
              + (summary[-1].strip() if summary else output.strip()[-200:]), flush=True)
    return failures


def traffic_and_time(work, plan_path):
    """Worker 0's bytes per step and step time (after the first step) from
    the run's metrics, against the plan's bytes."""
    steps = [json.loads(l) for l in (work / "metrics.jsonl").read_text().splitlines()]
    moved = steps[-1]["bytes_sent"] + steps[-1]["bytes_received"]
    times = sorted(s["time_s"] for s in steps[1:]) or [steps[0]["time_s"]]
    plan = json.loads(plan_path.read_text())
    planned = plan["totals"][plan["strategy"]]["bytes_per_step"]
    return (f"{moved} bytes a step (plan {planned:.0f}), "
            f"median step {1e3 * times[len(times) // 2]:.2f} ms")


def torch_python():
    """A Python with PyTorch: this one, or the GPU machine's venv."""
    for python in (sys.executable, "/opt/torch/.venv/bin/python", "/usr/bin/python3"):
        if shutil.which(python) and subprocess.run(
                [python, "-c", "import torch, numpy"], capture_output=True).returncode == 0:
            return python
    return None


def mean_step_ms(metrics, warm_up=2):
    """Milliseconds per step of a benchmark run's metrics, after the
    warm-up steps."""
    times = [json.loads(l)["time_s"] for l in metrics.read_text().splitlines()][warm_up:]
    return 1e3 * sum(times) / len(times)


def benchmark(bundle, env, work, deadline):
    """Parallax's training step against PyTorch's (eager, torch.compile) on
    the same batches; a table of ms per step (ratios, not absolutes, carry
    from one machine to another)."""
    parallax, graphs = {}, {}
    for model in OPTIMIZERS:
        metrics = work / "bench" / f"{model}.jsonl"
        metrics.parent.mkdir(parents=True, exist_ok=True)
        program = [str(bundle / "programs" / f"bench.{model}"), "--data",
                   str(bundle / "bench" / model), "--init",
                   str(bundle / "models" / f"{model}.onnx")]
        status, output = bounded(program + ["--steps", str(BENCH_STEPS), "--metrics",
                                            str(metrics)],
                                 env, deadline, work / "logs" / f"bench.{model}.log")
        if status != 0:
            parallax[model] = "timed out" if status is None else "exit %d" % status
            print(f"benchmark {model}: {parallax[model]}: {output.strip()[-300:]}", flush=True)
            continue
        parallax[model] = mean_step_ms(metrics)
        # The same steps with each batch copied at its own step, the host
        # waiting (PARALLAX_GPU_PREFETCH=0): what the data loader's
        # overlap saves.
        unstaged = work / "bench" / f"{model}.no-prefetch.jsonl"
        status, output = bounded(program + ["--steps", str(BENCH_STEPS), "--metrics",
                                            str(unstaged)],
                                 dict(env, PARALLAX_GPU_PREFETCH="0"), deadline,
                                 work / "logs" / f"bench.{model}.no-prefetch.log")
        if status == 0:
            print(f"data loader {model}: {parallax[model]:.3f} ms a step with each batch "
                  f"copied during the step before, {mean_step_ms(unstaged):.3f} ms "
                  f"copied at its step (PARALLAX_GPU_PREFETCH=0)", flush=True)
        # The same steps replayed as one CUDA graph (PARALLAX_CUDA_GRAPHS=1),
        # timed after the capture (the third step).
        graphed = work / "bench" / f"{model}.graphs.jsonl"
        status, output = bounded(program + ["--steps", str(BENCH_STEPS), "--metrics",
                                            str(graphed)],
                                 dict(env, PARALLAX_CUDA_GRAPHS="1"), deadline,
                                 work / "logs" / f"bench.{model}.graphs.log")
        if (bundle / "target").read_text().strip() != "cuda":
            pass
        elif status == 0 and "runs as one CUDA graph" in output:
            graphs[model] = mean_step_ms(graphed, warm_up=3)
            print(f"cuda graphs {model}: {mean_step_ms(metrics, warm_up=3):.3f} ms a "
                  f"step as launches, {graphs[model]:.3f} ms replayed as one CUDA graph",
                  flush=True)
        else:
            reason = [l for l in output.splitlines() if "PARALLAX_CUDA_GRAPHS" in l]
            print(f"cuda graphs {model}: " + (reason[0] if reason else
                                              output.strip()[-300:]), flush=True)
        # The same steps with a thread per output for every reduction, and
        # with im2col kernels instead of cuDNN's convolutions.
        for suffix, what, this, other in (
                (".threads", "warp reductions",
                 "with a warp (or, for rows of 4096 or more, a block) per output of "
                 "reductions over rows",
                 "with a thread per output (--gpu-warp-reductions=false)"),
                (".im2col", "convolutions", "through cuDNN",
                 "as im2col kernels and cuBLAS products (--gpu-convolutions=im2col)")):
            variant = bundle / "programs" / f"bench.{model}{suffix}"
            if not variant.exists():
                continue
            metrics_of_variant = work / "bench" / f"{model}{suffix}.jsonl"
            status, output = bounded([str(variant)] + program[1:] +
                                     ["--steps", str(BENCH_STEPS), "--metrics",
                                      str(metrics_of_variant)],
                                     env, deadline, work / "logs" / f"bench.{model}{suffix}.log")
            if status == 0:
                print(f"{what} {model}: {parallax[model]:.3f} ms a step {this}, "
                      f"{mean_step_ms(metrics_of_variant):.3f} ms {other}", flush=True)
            else:
                print(f"{what} {model}: the {suffix[1:]} program: {output.strip()[-300:]}",
                      flush=True)
        # Where the step's time goes: the same run under --profile (each
        # kernel and cuBLAS product timed by CUDA events).
        profile = work / "bench" / f"{model}.profile.json"
        status, output = bounded(program + ["--steps", "6", "--profile", str(profile)],
                                 env, deadline, work / "logs" / f"profile.{model}.log")
        if status == 0:
            report = json.loads(profile.read_text())
            sites = ", ".join(f"{s['site']} {1e3 * s['seconds']:.3f}"
                              for s in report["sites"][:6])
            families = ", ".join(f"{f['family']} {1e3 * f['seconds']:.3f}"
                                 for f in report["families"])
            print(f"profile {model}: step {1e3 * report['step_seconds']:.3f} ms; "
                  f"{families}; longest: {sites}", flush=True)
        else:
            print(f"profile {model}: {output.strip()[-300:]}", flush=True)
    rows = {model: {} for model in OPTIMIZERS}
    python = torch_python()
    if python:
        status, output = bounded([python, str(bundle / "torch_step_benchmark.py"),
                                  str(bundle / "export.py"), str(bundle / "bench"),
                                  "--steps", str(BENCH_STEPS)], dict(os.environ),
                                 deadline, work / "logs" / "pytorch.log", most=None)
        for line in output.splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                rows[entry["model"]][entry["mode"]] = entry.get("ms_per_step",
                                                                entry.get("error"))
        if status != 0:
            print("PyTorch benchmark: " + output.strip()[-300:])
    else:
        print("PyTorch benchmark: no Python with torch and numpy found")
    print(f"training step, batch {BENCH_BATCH}, SGD, ms per step (after 2 warm-up steps; "
          f"as a graph, PARALLAX_CUDA_GRAPHS=1, after the capture, the third):")
    print(f"{'model':16} {'Parallax':>10} {'as a graph':>10} {'PyTorch eager':>14} "
          f"{'torch.compile':>14} {'eager/Parallax':>15}")
    for model in OPTIMIZERS:
        ours, eager = parallax[model], rows[model].get("eager", "-")
        compiled = rows[model].get("torch.compile", "-")
        graph = graphs.get(model, "-")
        ratio = f"{eager / ours:.2f}x" if all(isinstance(v, float) for v in (ours, eager)) else "-"
        cell = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)[:14]
        print(f"{model:16} {cell(ours):>10} {cell(graph):>10} {cell(eager):>14} "
              f"{cell(compiled):>14} {ratio:>15}")


def main():
    arguments = sys.argv[1:]
    if arguments[:1] == ["prepare"] and len(arguments) >= 2:
        options = arguments[2:]
        quick = "--quick" in options
        if quick:
            options.remove("--quick")
        target = "cuda"
        if options:
            if len(options) != 2 or options[0] != "--target" or \
                    options[1] not in ("cuda", "cuda-sim"):
                sys.exit(__doc__)
            target = options[1]
        prepare(pathlib.Path(arguments[1]).resolve(), target, quick)
        return 0
    if arguments == ["run"]:
        return run(HERE)
    sys.exit(__doc__)

if __name__ == "__main__":
    sys.exit(main())
