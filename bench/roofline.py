#!/usr/bin/python3
"""Where each training step's time goes, against this machine's roofline.

Reads the reports of `PROGRAM --profile FILE.json` (docs/training.md,
"Where the step's time goes") and prints, per report, the step's time by
family of kernels: milliseconds per step, share, FLOPs and bytes the
compiler counted, achieved GFLOP/s and GB/s and the fraction of the
roofline: the least time the peaks the program measured at its end allow
(per site, its FLOPs at the GEMM peak or its bytes at the bandwidth of the
memory level they fit in, whichever is longer) over the time taken.
It also prints the time of the kernels outside the matrix products
against their own roofline: compare the reports of `--threads 1` and
`--threads 2` to see what a second thread can gain where they are bound
by memory. `--plot FILE.png` draws the rooflines (GEMM peak, memory and
L2-cache bandwidth) with one point per family (area: share of the step).

With --models it first produces the reports: each example model
(examples/models/<name>.onnx) is compiled with parallax-compile -O3
--batch-size B, trained for S steps on its example data repeated to fill
them, with --profile, T threads per worker. Never asserts timings.

Usage:
  /usr/bin/python3 bench/roofline.py REPORT.json... [--plot FILE.png]
  /usr/bin/python3 bench/roofline.py --models cnn_train,lstm_lm
      [--batch 32] [--steps 12] [--threads 1] [--out DIR] [--plot FILE.png]
      [--markdown]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = ROOT / "examples" / "models"
TRAINING_MODELS = ["cnn_train", "mobile_cnn_train", "mobilenet_v3_train",
                   "shufflenet_train", "lstm_lm", "gru_lm", "transformer_lm",
                   "transformer_train", "ctr_bag", "wide_deep"]


def produce(name, args, out):
    """Compiles and trains example model `name` with --profile; returns
    the report's path."""
    import numpy as np
    program = out / f"{name}.bin"
    subprocess.run([str(args.build / "bin" / "parallax-compile"),
                    str(MODELS / f"{name}.onnx"), "-O3", "--batch-size",
                    str(args.batch), "-o", str(program)], check=True)
    data = out / f"{name}.data"
    data.mkdir(exist_ok=True)
    examples = args.batch * args.steps
    for source in sorted((MODELS / "data" / name / "train").glob("*.npy")):
        array = np.load(source)
        reps = -(-examples // array.shape[0])
        np.save(data / source.name,
                np.concatenate([array] * reps)[:examples])
    report = out / f"{name}.profile.json"
    env = dict(os.environ, PARALLAX_THREADS=str(args.threads))
    subprocess.run([str(program), "--data", str(data), "--steps",
                    str(args.steps), "--profile", str(report), "--log-every",
                    str(args.steps)], check=True, env=env)
    return report


def fraction(entry):
    value = entry.get("roofline_fraction")
    return f"{100 * value:.0f}%" if value is not None else ""


def print_report(label, report, markdown):
    peaks = report["peaks"]
    step = report["step_seconds"]
    print(f"\n{label}: step {step * 1e3:.2f} ms ({report['steps']} steps, "
          f"{report['workers']} worker(s) x {report['threads']} thread(s)), "
          f"{100 * report['roofline_fraction']:.0f}% of its roofline; peaks "
          f"GEMM {peaks['gflops']:.1f} GFLOP/s, memory "
          f"{peaks['gbytes_per_second']:.1f} GB/s, L2 cache "
          f"{peaks['cache_gbytes_per_second']:.1f} GB/s")
    # Outside the products: what a second thread has to speed up, against
    # the least time the measured peaks allow it (docs/benchmarks.md, "two
    # threads against memory").
    rest = [site for site in report["sites"]
            if not site["family"].startswith("matrix product")]
    taken = sum(site["seconds"] for site in rest)
    least = sum(site.get("roofline_seconds", 0.0) for site in rest)
    share = 100 * least / taken if taken else 0
    print(f"  outside the matrix products: {taken * 1e3:.2f} ms, roofline "
          f"{least * 1e3:.2f} ms ({share:.0f}% of it)")
    rows = [(f["family"], f["seconds"] * 1e3, 100 * f["share"], f["flops"] / 1e6,
             f["bytes"] / 1e6, f["gflops"], f["gbytes_per_second"], fraction(f))
            for f in report["families"]]
    outside = report["outside_sites"]
    rows.append(("(outside every site)", outside["seconds"] * 1e3,
                 100 * outside["share"], 0, 0, 0, 0, ""))
    if markdown:
        print("\n| family | ms/step | share | MFLOP | MB | GFLOP/s | GB/s | of roofline |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|")
        for r in rows:
            print(f"| {r[0]} | {r[1]:.3f} | {r[2]:.1f}% | {r[3]:.1f} | {r[4]:.1f} "
                  f"| {r[5]:.2f} | {r[6]:.2f} | {r[7]} |")
        return
    print(f"  {'family':<28} {'ms/step':>9} {'share':>6} {'MFLOP':>9} {'MB':>8} "
          f"{'GFLOP/s':>8} {'GB/s':>7} {'roofline':>8}")
    for r in rows:
        print(f"  {r[0]:<28} {r[1]:>9.3f} {r[2]:>5.1f}% {r[3]:>9.1f} {r[4]:>8.1f} "
              f"{r[5]:>8.2f} {r[6]:>7.2f} {r[7]:>8}")


def plot(reports, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    count = len(reports)
    columns = min(count, 3)
    rows = -(-count // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 4 * rows),
                             squeeze=False)
    for ax, (label, report) in zip(axes.flat, reports):
        peaks = report["peaks"]
        gflops = peaks["gflops"]
        xs = [2 ** (i / 4) for i in range(-40, 41)]
        for key, style in (("gbytes_per_second", "-"),
                           ("cache_gbytes_per_second", "--")):
            ax.plot(xs, [min(gflops, x * peaks[key]) for x in xs],
                    color="black", linestyle=style)
        for f in report["families"]:
            if f["flops"] <= 0 or f["seconds"] <= 0:
                continue
            ax.scatter(f["intensity"], f["gflops"], s=2000 * f["share"] + 10,
                       alpha=0.6)
            ax.annotate(f["family"], (f["intensity"], f["gflops"]), fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("FLOP per byte")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{label}: {report['step_seconds'] * 1e3:.1f} ms/step",
                     fontsize=9)
    for ax in list(axes.flat)[count:]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"\nplot written to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="*", type=pathlib.Path)
    parser.add_argument("--models", help="comma-separated example models, or all")
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=pathlib.Path,
                        help="where --models keeps programs and reports")
    parser.add_argument("--plot", type=pathlib.Path)
    parser.add_argument("--markdown", action="store_true",
                        help="tables in Markdown, for docs/benchmarks.md")
    args = parser.parse_args()
    if not args.reports and not args.models:
        parser.error("give reports or --models")
    paths = [(p.stem, p) for p in args.reports]
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or pathlib.Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        if args.models:
            names = TRAINING_MODELS if args.models == "all" else args.models.split(",")
            for name in names:
                paths.append((name, produce(name, args, out)))
        reports = [(label, json.loads(path.read_text())) for label, path in paths]
    for label, report in reports:
        print_report(label, report, args.markdown)
    if args.plot:
        plot(reports, args.plot)


if __name__ == "__main__":
    sys.exit(main())
