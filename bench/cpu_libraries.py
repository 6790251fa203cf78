#!/usr/bin/python3
"""The CPU libraries Parallax could route its ops to, measured on the
shapes of its models: OpenBLAS (what programs call), BLIS and oneDNN.

Matrix products: each library's single-precision GEMM, called through
ctypes in a child process of its own (each reads its settings when it
loads), one thread unless --threads, on
  - square products of 512, 1024 and 2048;
  - the products of issue 20's language model (100,000-word softmax over
    320 tokens of width 128: the logits, the weight gradient, the hidden
    gradient);
  - the matrix products of every convolution of torchvision's ResNet-18
    and MobileNetV2 (batch 32, 32x32 images), as Parallax lowers them:
    forward Cout x (N*Ho*Wo) x (Cin*Kh*Kw), filter gradient Cout x
    (Cin*Kh*Kw) x (N*Ho*Wo), input gradient (Cin*Kh*Kw) x (N*Ho*Wo) x
    Cout, summed over the model (not the depthwise convolutions, which
    Parallax runs as generated loops).
Libraries: OpenBLAS 0.3.21 with the kernels Parallax's runtime chooses
(SkylakeX on AVX-512, Haswell on AVX2) and with its own choice
(OPENBLAS_CORETYPE unset); BLIS 0.9 (libblis4-pthread; it picks kernels by
CPU family and model, its generic C kernels on a CPU it does not know, and
Debian's build takes no override); oneDNN 2.6 (dnnl_sgemm; the library PyTorch uses for
its CPU convolutions). Each shape's time is the best of --repeat calls
after one warm-up call, and the best of --rounds rounds that alternate the
libraries.

Convolutions as whole primitives: oneDNN's own convolution kernels
(direct and Winograd, not im2col + GEMM) time themselves with
DNNL_VERBOSE=1; a PyTorch 1.13 training step of ResNet-18 and MobileNetV2
(oneDNN enabled, one thread) under it gives the time of each model's
convolutions by direction (forward, input gradient, filter gradient) and
kind (depthwise or not), to set beside the matrix products above and
Parallax's --profile report of the same step.

Needs Debian's libblis4-pthread (scripts/setup-debian.sh --bench) and
PyTorch (which brings libdnnl2). Never asserts timings.

Usage: /usr/bin/python3 bench/cpu_libraries.py [--threads 1] [--repeat 3] [--rounds 2]
       [--skip-convolutions] [--json FILE]
"""

import argparse
import ctypes
import json
import os
import pathlib
import re
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIB = pathlib.Path("/usr/lib/x86_64-linux-gnu")
OPENBLAS = LIB / "openblas-pthread" / "libopenblas.so.0"
BLIS = LIB / "blis-pthread" / "libblis.so.4"
DNNL = LIB / "libdnnl.so.2"

CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS = 101, 111, 112


def cpu_flags():
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def chosen_core(flags):
    """The OpenBLAS core Parallax's runtime runs on this CPU
    (lib/Runtime/CpuKernels.cpp's choice by features)."""
    if {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


def conv_layers(name):
    """(Cin, Cout, Kh, Kw, groups, N, Ho, Wo) of every convolution of a
    torchvision model at batch 32 on 32x32 images."""
    import torch
    import torchvision
    model = getattr(torchvision.models, name)(num_classes=10).eval()
    layers = []

    def hook(module, inputs, output):
        layers.append((module.in_channels, module.out_channels,
                       *module.kernel_size, module.groups, *output.shape[:1],
                       *output.shape[2:]))
    for module in model.modules():
        if isinstance(module, torch.nn.Conv2d):
            module.register_forward_hook(hook)
    with torch.no_grad():
        model(torch.zeros(32, 3, 32, 32))
    return layers


def gemm_shapes():
    """Named groups of (M, N, K, transA, transB, count) products."""
    groups = {f"square {n}": [(n, n, n, False, False, 1)] for n in (512, 1024, 2048)}
    t, h, v = 320, 128, 100_000
    groups["LM logits 320x100000x128"] = [(t, v, h, False, True, 1)]
    groups["LM weight grad 100000x128x320"] = [(v, h, t, True, False, 1)]
    groups["LM hidden grad 320x128x100000"] = [(t, h, v, False, False, 1)]
    for model in ("resnet18", "mobilenet_v2"):
        products = []
        for cin, cout, kh, kw, g, n, ho, wo in conv_layers(model):
            if g != 1:
                continue  # depthwise: loops in Parallax, not products
            patch, points = cin * kh * kw, n * ho * wo
            products += [(cout, points, patch, False, False, 1),
                         (cout, patch, points, False, True, 1),
                         (patch, points, cout, True, False, 1)]
        groups[f"{model} convolutions (fwd + both grads)"] = products
    return groups


def gemm_child(library, threads, repeat):
    """Runs in a child whose environment holds the library's settings;
    prints {group: seconds} for one call of every product of the group."""
    c_float, c_int, c_char = ctypes.c_float, ctypes.c_int, ctypes.c_char
    pointer = ctypes.POINTER(ctypes.c_float)
    if library == "oneDNN":
        lib = ctypes.CDLL(str(DNNL))
        lib.dnnl_sgemm.argtypes = [c_char, c_char, ctypes.c_int64, ctypes.c_int64,
                                   ctypes.c_int64, c_float, pointer, ctypes.c_int64,
                                   pointer, ctypes.c_int64, c_float, pointer,
                                   ctypes.c_int64]

        def gemm(m, n, k, ta, tb, a, b, c):
            status = lib.dnnl_sgemm(b"T" if ta else b"N", b"T" if tb else b"N",
                                    m, n, k, 1.0, a, k if not ta else m, b,
                                    n if not tb else k, 0.0, c, n)
            if status != 0:
                raise RuntimeError(f"dnnl_sgemm failed: status {status}")
        # dnnl_cpu_isa_t's values in oneDNN 2.6 (dnnl_types.h).
        isa = {0x0: "all", 0x1: "sse41", 0x3: "avx", 0x7: "avx2",
               0x27: "avx512_core", 0x67: "avx512_core_vnni",
               0xe7: "avx512_core_bf16", 0x3e7: "avx512_core_amx"}
        kernels = isa.get(lib.dnnl_get_effective_cpu_isa(),
                          hex(lib.dnnl_get_effective_cpu_isa()))
    else:
        lib = ctypes.CDLL(str(BLIS if library == "BLIS" else OPENBLAS))
        lib.cblas_sgemm.argtypes = [c_int] * 6 + [c_float, pointer, c_int, pointer,
                                                  c_int, c_float, pointer, c_int]
        if library == "BLIS":
            lib.bli_thread_set_num_threads.argtypes = [ctypes.c_int64]
            lib.bli_thread_set_num_threads(threads)
            lib.bli_arch_string.restype = ctypes.c_char_p
            kernels = lib.bli_arch_string(lib.bli_arch_query_id()).decode()
        else:
            lib.openblas_get_corename.restype = ctypes.c_char_p
            kernels = lib.openblas_get_corename().decode()

        def gemm(m, n, k, ta, tb, a, b, c):
            lib.cblas_sgemm(CBLAS_ROW_MAJOR, CBLAS_TRANS if ta else CBLAS_NO_TRANS,
                            CBLAS_TRANS if tb else CBLAS_NO_TRANS, m, n, k, 1.0, a,
                            k if not ta else m, b, n if not tb else k, 0.0, c, n)
    rng = np.random.default_rng(0)
    results = {"kernels": kernels}
    for group, products in gemm_shapes().items():
        total = 0.0
        for m, n, k, ta, tb, count in products:
            a = rng.standard_normal(m * k, dtype=np.float32)
            b = rng.standard_normal(k * n, dtype=np.float32)
            c = np.empty(m * n, dtype=np.float32)
            args = [x.ctypes.data_as(pointer) for x in (a, b, c)]
            gemm(m, n, k, ta, tb, *args)  # warm-up
            best = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                gemm(m, n, k, ta, tb, *args)
                best = min(best, time.perf_counter() - start)
            # Check the product against NumPy once (same result within
            # float32 rounding), so a wrong call cannot look fast.
            if m * n * k <= 2048 ** 3 and m <= 4096 and n <= 4096:
                am = a.reshape((k, m) if ta else (m, k))
                bm = b.reshape((n, k) if tb else (k, n))
                want = (am.T if ta else am).astype(np.float64) @ \
                    (bm.T if tb else bm).astype(np.float64)
                error = np.abs(c.reshape(m, n) - want).max() / max(1.0, np.abs(want).max())
                if error > 1e-4:
                    raise RuntimeError(f"{library}: wrong product {m}x{n}x{k}: {error}")
            total += best * count
        results[group] = total
    print(json.dumps(results))


def run_gemm(library, core, threads, repeat):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads), BLIS_NUM_THREADS=str(threads))
    env.pop("OPENBLAS_CORETYPE", None)
    if core:
        env["OPENBLAS_CORETYPE"] = core
    out = subprocess.run([sys.executable, __file__, "--gemm-child", library,
                          "--threads", str(threads), "--repeat", str(repeat)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def flops(products):
    return sum(2 * m * n * k * count for m, n, k, _, _, count in products)


def parse_verbose(line):
    """(primitive, implementation, direction, problem, seconds) of one
    oneDNN verbose line of an executed primitive, or None."""
    fields = line.split(",")
    if len(fields) < 8 or not fields[0].endswith("_verbose") or fields[1] != "exec":
        return None
    return fields[3], fields[4], fields[5], fields[-2], float(fields[-1]) / 1e3


def convolution_child(model_name, steps):
    """A PyTorch training step under DNNL_VERBOSE=1 (set by the parent);
    the last step's convolution primitives are what it reports."""
    import torch
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT / "examples" / "models"))
    from torchvision_benchmark import build
    torch.set_num_threads(1)
    model = build(model_name, training=True)
    images = torch.randn(32, 3, 32, 32)
    labels = torch.randint(0, 10, (32,))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        if step == steps - 1:
            print("=== last step ===", flush=True)
        optimizer.zero_grad()
        model(images, labels).backward()
        optimizer.step()


def run_convolutions(model_name):
    env = dict(os.environ, DNNL_VERBOSE="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--convolution-child", model_name],
                         env=env, check=True, capture_output=True, text=True).stdout
    last = out.split("=== last step ===", 1)[1]
    totals, kernels = {}, set()
    for line in last.splitlines():
        parsed = parse_verbose(line)
        if not parsed:
            continue
        primitive, implementation, direction, problem, seconds = parsed
        if primitive == "convolution":
            grouped = re.match(r"g(\d+)", problem)
            kind = "depthwise" if grouped and int(grouped.group(1)) > 1 else "dense"
            key = f"{direction} ({kind})"
            kernels.add(implementation)
        else:  # layout changes between PyTorch's tensors and oneDNN's
            key = primitive
        totals[key] = totals.get(key, 0.0) + seconds
    return {"seconds": totals, "kernels": sorted(kernels)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--skip-convolutions", action="store_true")
    parser.add_argument("--json", type=pathlib.Path)
    parser.add_argument("--gemm-child", help=argparse.SUPPRESS)
    parser.add_argument("--convolution-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.gemm_child:
        gemm_child(args.gemm_child, args.threads, args.repeat)
        return
    if args.convolution_child:
        convolution_child(args.convolution_child, 3)
        return
    for path in (OPENBLAS, BLIS, DNNL):
        if not path.exists():
            sys.exit(f"cpu_libraries: {path} is missing "
                     "(scripts/setup-debian.sh --bench installs it)")
    core = chosen_core(cpu_flags())
    libraries = [(f"OpenBLAS {core}", "OpenBLAS", core),
                 ("OpenBLAS own choice", "OpenBLAS", None),
                 ("BLIS", "BLIS", None), ("oneDNN", "oneDNN", None)]
    results = {"threads": args.threads, "gemm_s": {}, "gemm_gflop": {},
               "convolutions": {}}
    # Rounds alternate the libraries, so that a slow spell of the machine
    # does not land on one of them; each group keeps its best round.
    for round_ in range(args.rounds):
        for label, library, library_core in libraries:
            print(f"GEMM: {label} (round {round_ + 1}/{args.rounds})",
                  file=sys.stderr, flush=True)
            times = run_gemm(library, library_core, args.threads, args.repeat)
            best = results["gemm_s"].setdefault(label, times)
            for group, seconds in times.items():
                if group != "kernels":
                    best[group] = min(best[group], seconds)
    groups = gemm_shapes()
    results["gemm_gflop"] = {g: flops(p) / 1e9 for g, p in groups.items()}
    labels = [label for label, _, _ in libraries]
    print(f"| products ({args.threads} thread{'s' if args.threads > 1 else ''}) | GFLOP | "
          + " | ".join(labels) + " |")
    print("|---|--:|" + "--:|" * len(labels))
    for group in groups:
        gflop = results["gemm_gflop"][group]
        cells = [f"{1e3 * results['gemm_s'][l][group]:.1f} ms "
                 f"({gflop / results['gemm_s'][l][group]:.0f})" for l in labels]
        print(f"| {group} | {gflop:.2f} | " + " | ".join(cells) + " |")
    print("| kernels | | " + " | ".join(results["gemm_s"][l]["kernels"] for l in labels)
          + " |")
    print("(ms per call, or per model step for a model's group; GFLOP/s in parentheses)")
    if not args.skip_convolutions:
        for model in ("resnet18", "mobilenet_v2"):
            print(f"convolutions: {model}", file=sys.stderr, flush=True)
            results["convolutions"][model] = run_convolutions(model)
        print("\n| oneDNN's primitives in a PyTorch training step (1 thread) | ms |")
        print("|---|--:|")
        for model, r in results["convolutions"].items():
            for key, seconds in sorted(r["seconds"].items()):
                print(f"| {model}: {key} | {1e3 * seconds:.1f} |")
            convolutions = sum(t for k, t in r["seconds"].items() if "(" in k)
            print(f"| {model}: all convolutions | {1e3 * convolutions:.1f} |")
            print(f"| {model}: kernels | {', '.join(r['kernels'])} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
