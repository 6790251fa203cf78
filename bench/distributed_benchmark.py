#!/usr/bin/python3
"""Distributed training of the example models in their --large form:
Parallax's hybrid, AllReduce-only and PS-only programs against PyTorch 1.13
DistributedDataParallel (gloo, CPU), on this machine's loopback.

For each model (examples/models/export.py --large: 100,000-word language
models, a CTR model with 1,000,000 + 100,000 + 1,000 ids, a small CNN) and N
workers, each worker trains B examples per step with SGD (lr 0.01), one
thread per worker. Token and id inputs are drawn from a Zipf distribution
(s = 1.1) over each table, as words and categorical features are in real
data; float inputs are normal. Reports per configuration the median step
time after W warm-up steps, examples/s (N B / step time), and the bytes the
busiest worker sent and received per step (the runtime's accounting) next
to the plan's prediction for the busiest machine (alpha measured on the
data with --profile-data). PyTorch runs DDP
with the embeddings dense and with sparse=True. Never asserts timings;
writes a JSON file of the results and, with --plot, PNG plots.

With --cluster M[xG]:RATE[:DELAY] (root) everything runs on M emulated
machines (scripts/emulated-cluster.sh: network namespaces on a bridge,
each NIC shaped to RATE, e.g. 1gbit), G workers each (default 1), over
TCP: Parallax through the cluster's mpirun, each DDP worker inside its
machine's namespace with gloo on that machine's NIC. The worker count is
then M x G. There each Parallax program is planned for the cluster
(--cluster machines=M,workers-per-machine=G,bandwidth=RATE,
latency=--latency) and also run over shared memory, where communication
is almost free: the predicted step is that compute time plus the plan's
communication time (seconds_per_step of the strategy), printed beside the
measured one, and so are the bytes that crossed the busiest machine's NIC
per step (its counters over the whole run, start-up and headers included,
divided by the steps): what the plan's bytes predict for any number of
workers per machine (the runtime's per-worker accounting equals it only
with one). Before the models, one 32 MB AllReduce of the runtime
(build/bin/parallax-allreduce-bench) measures the rate the emulated NICs
deliver: on a machine whose cores cannot keep up with M machines' TCP
stacks at RATE (10gbit on 2 cores), or where the runtime's ring is short
of the wire, it is below RATE, and each run's prediction is printed again
with the plan's bandwidth time scaled to it ("pred@del"). Last, the
latency per round that best explains the runs (least squares of measured
- compute - bytes at the delivered rate against the plan's
rounds_per_step, in relative terms) and every run's prediction with it.

Needs Debian's python3-torch (and python3-matplotlib for --plot), OpenMPI's
mpirun; usage:
  /usr/bin/python3 bench/distributed_benchmark.py [--workers 2 4]
      [--batch 32] [--steps 30] [--repeats R] [--models lstm_lm ...] [--lm-width W]
      [--cluster 4:1gbit[:DELAY] | 2x2:1gbit] [--latency 50us] [--no-ddp]
      [--json results.json] [--plot DIR]
"""

import argparse
import json
import os
import pathlib
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "models"))
import export  # noqa: E402  (the example models' definitions)

ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
MPIRUN = ["mpirun", "--oversubscribe", "--mca", "btl", "self,vader",
          "--bind-to", "none"]
STRATEGIES = ["hybrid", "allreduce", "ps"]
# The example models' id bounds in the --large form (export.models).
TABLE_ROWS = {"tokens": 100_000, "targets": 100_000}
CTR_ROWS = [1_000_000, 100_000, 1_000]


def benchmark_models(lm_width):
    """The example models' --large form; with `lm_width` W, lstm_lm's
    embedding and LSTM are W wide (W = 128: the 51 MB embedding and softmax
    weight of the network issue's language model)."""
    models = export.models(large=True)
    if lm_width:
        model, inputs = models["lstm_lm"]
        models["lstm_lm"] = (export.LanguageModel(TABLE_ROWS["tokens"], lm_width,
                                                  lm_width, torch.nn.LSTM), inputs)
    return models


def zipf_ids(rng, rows, shape):
    """Ids in [0, rows) with Zipf(1.1) frequencies, a random id per rank."""
    ranks = rng.zipf(1.1, size=shape)
    ranks = np.where(ranks > rows, rng.integers(1, rows + 1, size=shape), ranks)
    permutation = rng.permutation(rows)
    return permutation[ranks - 1].astype(np.int64)


def make_data(name, inputs, examples, directory, seed=0):
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for key, value in inputs.items():
        shape = (examples,) + tuple(value.shape[1:])
        if key == "clicked":
            array = rng.integers(0, 2, size=shape).astype(np.float32)
        elif key == "labels":
            array = rng.integers(0, 10, size=shape).astype(np.int64)
        elif value.is_floating_point():
            array = rng.standard_normal(shape).astype(np.float32)
        elif key == "categorical":
            array = np.stack([zipf_ids(rng, rows, (examples,)) for rows in CTR_ROWS], 1)
        else:
            array = zipf_ids(rng, TABLE_ROWS[key], shape)
        arrays[key] = array
        np.save(directory / f"{key}.npy", array)
    return arrays


def median_step(metrics, warmup):
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    return statistics.median(line["time_s"] for line in lines[warmup:])


def parallax_run(compile_tool, onnx, frozen, data, workers, strategy, batch, steps,
                 warmup, work, repeats, cluster_plan=None, delivered=None):
    program = work / f"program.{workers}.{strategy}"
    report = work / f"plan.{workers}.{strategy}.json"
    command = [compile_tool, str(onnx), "-O3", "--batch-size", str(batch), "--lr", "0.01",
               "--workers", str(workers), "--strategy", strategy,
               "--plan-report", str(report), "--profile-data", str(data),
               "-o", str(program)]
    if cluster_plan:
        command += ["--cluster", cluster_plan]
    if frozen:
        command += ["--freeze", ",".join(frozen)]
    start = time.perf_counter()
    subprocess.run(command, check=True, env=ENV, stdout=subprocess.DEVNULL)
    compile_s = time.perf_counter() - start
    metrics = work / f"metrics.{workers}.{strategy}.jsonl"
    local = work / f"metrics.{workers}.{strategy}.shm.jsonl"
    train = [str(program), "--data", str(data), "--steps", str(steps)]
    steps_s, computes_s, nic_moved = [], [], []
    # On the cluster, each run is followed by the same ranks over shared
    # memory: the step's compute, on the same shared cores, with almost
    # free communication. Repeats alternate the two, and the medians of
    # the runs' medians are reported.
    for _ in range(repeats):
        nic_before = nic_bytes()
        subprocess.run(launcher(workers) + train + ["--metrics", str(metrics),
                                                    "--metrics-all-ranks"],
                       check=True, env=ENV, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        nic_moved.append([after - before
                          for before, after in zip(nic_before, nic_bytes())])
        steps_s.append(median_step(metrics, warmup))
        if cluster_plan:
            subprocess.run(MPIRUN + ["-np", str(workers)] + train
                           + ["--metrics", str(local)], check=True, env=ENV,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            computes_s.append(median_step(local, warmup))
    step_s = statistics.median(steps_s)
    moved = []  # per rank: mean bytes sent + received per step
    for rank in range(workers):
        rank_lines = [json.loads(line) for line in
                      pathlib.Path(f"{metrics}.{rank}").read_text().splitlines()]
        moved.append(statistics.mean(line["bytes_sent"] + line["bytes_received"]
                                     for line in rank_lines[warmup:]))
    plan = json.loads(report.read_text())
    predicted = sum(v["predicted_bytes_per_step"][v["placement"]] for v in plan["variables"])
    result = {"step_s": step_s, "examples_per_s": workers * batch / step_s,
              "step_s_runs": steps_s, "bytes_per_worker": max(moved),
              "predicted_bytes": predicted, "compile_s": compile_s}
    if nic_moved[0]:
        # The whole run (start-up and first pulls included) over its steps.
        result["nic_bytes_per_step"] = statistics.median(
            max(run) for run in nic_moved) / steps
    if cluster_plan:
        result["compute_s"] = statistics.median(computes_s)
        result["compute_s_runs"] = computes_s
        totals = plan["totals"][strategy]
        result["predicted_comm_s"] = totals["seconds_per_step"]
        result["predicted_step_s"] = result["compute_s"] + result["predicted_comm_s"]
        result["rounds_per_step"] = totals["rounds_per_step"]
        result["bandwidth_s"] = (totals["seconds_per_step"] - totals["rounds_per_step"]
                                 * plan["cluster"]["latency_s"])
        # The same at the rate the cluster delivers (never above the plan's).
        nominal = plan["cluster"]["bandwidth_bytes_per_s"]
        result["delivered_bandwidth_s"] = (result["bandwidth_s"] * nominal
                                           / min(delivered, nominal))
        result["delivered_predicted_step_s"] = (result["predicted_step_s"]
                                                - result["bandwidth_s"]
                                                + result["delivered_bandwidth_s"])
    return result


def delivered_rate(build, machines, workers):
    """Bytes per second each way through a NIC that the runtime's AllReduce
    gets on the emulated cluster: one 32 MB bucket, the median of 5 (a
    bucket that large crosses each NIC 2 (M-1)/M times its size each way,
    by machine where machines have several workers)."""
    run = subprocess.run(
        launcher(workers) + [str(build / "bin" / "parallax-allreduce-bench"),
                       "--sizes-mb", "32", "--repeats", "5"],
        check=True, env=ENV, capture_output=True, text=True)
    probe = json.loads([line for line in run.stdout.splitlines()
                        if line.startswith("{")][-1])
    return 2 * (machines - 1) / machines * probe["bytes"] / probe["comm_s"]


def fit_latency(results):
    """The latency per round that best explains the cluster runs: least
    squares of (measured - compute - bytes at the delivered rate) against the
    plan's rounds per step, through the origin, each run weighted by
    1 / measured^2 (relative errors: a 500 ms step's noise must not outweigh
    a 3 ms step's rounds). Prints it and every run's prediction with it;
    returns it (None without runs that have rounds)."""
    runs = [r for r in results if r.get("rounds_per_step")]
    if not runs:
        return None
    residual = [r["step_s"] - r["compute_s"] - r["delivered_bandwidth_s"] for r in runs]
    rounds = [r["rounds_per_step"] for r in runs]
    weight = [1 / r["step_s"] ** 2 for r in runs]
    latency = max(0.0, sum(w * e * n for w, e, n in zip(weight, residual, rounds))
                  / sum(w * n * n for w, n in zip(weight, rounds)))
    print(f"\nlatency per round fitted to the {len(runs)} runs: "
          f"{latency * 1e6:.0f} us (plan again with --latency "
          f"{latency * 1e6:.0f}us)")
    print(f"{'model':<15} {'system':<18} {'rounds':>6} {'measured ms':>11} "
          f"{'predicted ms':>12} {'meas/pred':>9}")
    for r in runs:
        predicted = (r["compute_s"] + r["delivered_bandwidth_s"]
                     + r["rounds_per_step"] * latency)
        r["fitted_predicted_step_s"] = predicted
        print(f"{r['model']:<15} {r['system']:<18} {r['rounds_per_step']:>6} "
              f"{r['step_s'] * 1e3:>11.2f} {predicted * 1e3:>12.2f} "
              f"{r['step_s'] / predicted:>9.2f}")
    return latency


def tc_rate_as_bandwidth(rate):
    """tc's 1gbit / 100mbit as the cost model's 1Gbps / 100Mbps."""
    for suffix, unit in (("gbit", "Gbps"), ("mbit", "Mbps")):
        if rate and rate.lower().endswith(suffix):
            return rate[:-len(suffix)] + unit
    sys.exit(f"--cluster: rate '{rate}' is not like 1gbit or 100mbit")


def cluster_hosts():
    """The emulated machines' addresses, or [] on this machine's loopback."""
    hosts = os.environ.get("CLUSTER_HOSTS", "")
    return hosts.split(",") if hosts and os.environ.get("CLUSTER_MPIRUN") else []


def nic_bytes():
    """Bytes sent + received so far through each emulated machine's NIC
    (its veth's counters, Ethernet, IP and TCP headers included); [] off
    the cluster."""
    counts = []
    for host in cluster_hosts():
        counters = subprocess.run(
            [os.environ["CLUSTER_AGENT"], host,
             "cat /sys/class/net/px*n*/statistics/tx_bytes "
             "/sys/class/net/px*n*/statistics/rx_bytes"],
            check=True, capture_output=True, text=True).stdout.split()
        counts.append(sum(int(c) for c in counters))
    return counts


def launcher(workers):
    """mpirun for `workers` ranks: the emulated cluster's, or shared memory."""
    if cluster_hosts():
        return shlex.split(os.environ["CLUSTER_MPIRUN"])
    return MPIRUN + ["-np", str(workers)]


def ddp_child(name, rank, workers, batch, steps, warmup, data_dir, sparse, port,
              lm_width):
    """One DDP worker (run in its own process)."""
    torch.set_num_threads(1)
    hosts = cluster_hosts()
    os.environ.update(MASTER_ADDR=hosts[0] if hosts else "127.0.0.1",
                      MASTER_PORT=str(port))
    if hosts:
        # Inside a machine's namespace: its one NIC besides loopback.
        os.environ["GLOO_SOCKET_IFNAME"] = next(
            nic for nic in sorted(os.listdir("/sys/class/net")) if nic != "lo")
    torch.distributed.init_process_group("gloo", rank=rank, world_size=workers)
    torch.manual_seed(0)
    model, inputs = benchmark_models(lm_width)[name]
    export.distinct_initial_values(model)
    model.eval()
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding):
            module.sparse = sparse
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    data = {k: torch.from_numpy(np.load(pathlib.Path(data_dir) / f"{k}.npy"))
            for k in inputs}
    times = []
    for step in range(steps):
        first = (step * workers + rank) * batch
        chunk = [v[first:first + batch] for v in data.values()]
        torch.distributed.barrier()
        start = time.perf_counter()
        opt.zero_grad()
        ddp(*chunk).backward()
        opt.step()
        times.append(time.perf_counter() - start)
    if rank == 0:
        print(json.dumps({"step_s": statistics.median(times[warmup:])}))
    torch.distributed.destroy_process_group()


def ddp_run(name, workers, batch, steps, warmup, data, sparse, port, lm_width):
    hosts = cluster_hosts()
    per_machine = int(os.environ.get("CLUSTER_RANKS", "1"))

    def command(rank):
        child = ([sys.executable, __file__, "--ddp-child", name, "--rank", str(rank),
                  "--workers-of-child", str(workers), "--batch", str(batch),
                  "--steps", str(steps), "--warmup", str(warmup),
                  "--data-of-child", str(data), "--port", str(port)]
                 + (["--sparse"] if sparse else [])
                 + (["--lm-width", str(lm_width)] if lm_width else []))
        if not hosts:
            return child
        return [os.environ["CLUSTER_AGENT"], hosts[rank // per_machine],
                shlex.join(child)]

    children = [subprocess.Popen(command(rank), env=ENV, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
                for rank in range(workers)]
    outputs = [child.communicate()[0] for child in children]
    if any(child.returncode for child in children):
        return None
    step_s = json.loads(outputs[0].strip().splitlines()[-1])["step_s"]
    return {"step_s": step_s, "examples_per_s": workers * batch / step_s}


def plot(results, directory):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    directory.mkdir(parents=True, exist_ok=True)
    for metric, label, fname in (("examples_per_s", "examples/s", "throughput"),
                                 ("bytes_per_worker", "bytes per step (busiest worker)",
                                  "bytes")):
        models = sorted({r["model"] for r in results})
        fig, axes = plt.subplots(1, len(models), figsize=(3.2 * len(models), 3.2))
        for ax, model in zip(np.atleast_1d(axes), models):
            rows = [r for r in results if r["model"] == model and metric in r]
            systems = sorted({r["system"] for r in rows}, key=lambda s: (s.startswith("ddp"), s))
            workers = sorted({r["workers"] for r in rows})
            width = 0.8 / max(len(systems), 1)
            for i, system in enumerate(systems):
                values = [next((r[metric] for r in rows if r["system"] == system
                                and r["workers"] == n), 0) for n in workers]
                ax.bar(np.arange(len(workers)) + i * width, values, width, label=system)
            ax.set_xticks(np.arange(len(workers)) + 0.4 - width / 2)
            ax.set_xticklabels([f"{n} workers" for n in workers])
            ax.set_title(model)
            if metric == "bytes_per_worker":
                ax.set_yscale("log")
        np.atleast_1d(axes)[0].set_ylabel(label)
        np.atleast_1d(axes)[-1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(directory / f"distributed_{fname}.png", dpi=110)
        plt.close(fig)


def run_on_cluster(spec):
    """Runs this benchmark again inside an emulated cluster, which the
    script removes on every exit path."""
    parts = spec.split(":")
    machines, _, ranks = parts[0].partition("x")
    if (len(parts) not in (2, 3) or not machines.isdigit() or int(machines) < 2
            or not (ranks or "1").isdigit() or int(ranks or "1") < 1):
        sys.exit(f"--cluster '{spec}': expected M[xG]:RATE[:DELAY] with M >= 2 "
                 "and G >= 1, e.g. 4:1gbit or 2x2:1gbit")
    script = ROOT / "scripts" / "emulated-cluster.sh"
    command = ["bash", str(script), "--machines", machines, "--ranks",
               ranks or "1", "--rate", parts[1], "--timeout", "7200"]
    if len(parts) == 3:
        command += ["--delay", parts[2]]
    rest, skip = ["--link-rate", parts[1]], False
    for arg in sys.argv[1:]:
        if skip:
            skip = False
        elif arg == "--cluster":
            skip = True
        elif not arg.startswith("--cluster="):
            rest.append(arg)
    os.execvp("bash", command + ["--", sys.executable, __file__] + rest)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=ROOT / "build", type=pathlib.Path)
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each Parallax program (alternately on "
                        "the cluster and over shared memory with --cluster); "
                        "the median of their median steps is reported")
    parser.add_argument("--models", nargs="+",
                        default=["lstm_lm", "gru_lm", "transformer_lm", "wide_deep", "cnn"])
    parser.add_argument("--json", type=pathlib.Path)
    parser.add_argument("--plot", type=pathlib.Path)
    parser.add_argument("--cluster", metavar="M[xG]:RATE[:DELAY]",
                        help="run on M emulated machines of G workers each with "
                        "NICs of RATE (root)")
    parser.add_argument("--latency", default="50us",
                        help="the cost model's latency per round on --cluster "
                             "(e.g. 50us, 1ms)")
    parser.add_argument("--lm-width", type=int,
                        help="lstm_lm's embedding and hidden width (default: "
                             "the example's 16 and 32; 128 is the network "
                             "issue's 100K x 128 model)")
    parser.add_argument("--no-ddp", action="store_true",
                        help="run Parallax's strategies only (no PyTorch DDP)")
    parser.add_argument("--link-rate", help=argparse.SUPPRESS)
    parser.add_argument("--ddp-child", help=argparse.SUPPRESS)
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--workers-of-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-of-child", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--sparse", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cluster:
        return run_on_cluster(args.cluster)
    if args.ddp_child:
        return ddp_child(args.ddp_child, args.rank, args.workers_of_child, args.batch,
                         args.steps, args.warmup, args.data_of_child, args.sparse,
                         args.port, args.lm_width)
    cluster_plan, delivered = None, None
    if cluster_hosts():
        per_machine = int(os.environ.get("CLUSTER_RANKS", "1"))
        args.workers = [len(cluster_hosts()) * per_machine]
        cluster_plan = (f"machines={len(cluster_hosts())},workers-per-machine="
                        f"{per_machine},bandwidth={tc_rate_as_bandwidth(args.link_rate)},"
                        f"latency={args.latency}")
        delivered = delivered_rate(args.build, len(cluster_hosts()), args.workers[0])
        print(f"the emulated NICs deliver {delivered * 8 / 1e9:.2f} Gb/s each way "
              f"to a 32 MB AllReduce (the links: {args.link_rate})", flush=True)
    torch.manual_seed(0)
    compile_tool = str(args.build / "bin" / "parallax-compile")
    results = []
    port = 29500
    print(f"{'model':<15} {'N':>2} {'system':<13} {'step ms':>9} {'examples/s':>11} "
          f"{'moved B/step':>14} {'plan B':>12}"
          + (f" {'compute ms':>10} {'pred ms':>9} {'meas/pred':>9} {'pred@del':>9} "
             f"{'meas/p@d':>9} {'NIC B/step':>12}"
             if cluster_plan else ""),
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        all_models = benchmark_models(args.lm_width)
        for name in args.models:
            model, inputs = all_models[name]
            export.distinct_initial_values(model)
            export.export(name, model, inputs, tmp, 17, "")
            frozen = [n for n, b in model.named_buffers() if b.is_floating_point()]
            data = tmp / f"{name}.data"
            make_data(name, inputs, max(args.workers) * args.batch * args.steps, data)
            for workers in args.workers:
                rows = []
                for strategy in STRATEGIES:
                    r = parallax_run(compile_tool, tmp / f"{name}.onnx", frozen, data,
                                     workers, strategy, args.batch, args.steps,
                                     args.warmup, tmp, args.repeats, cluster_plan,
                                     delivered)
                    rows.append(dict(r, system=f"parallax-{strategy}"))
                for sparse in () if args.no_ddp else (False, True):
                    port += 1
                    r = ddp_run(name, workers, args.batch, args.steps, args.warmup, data,
                                sparse, port, args.lm_width)
                    if r:
                        rows.append(dict(r, system="ddp-sparse" if sparse else "ddp-dense"))
                for r in rows:
                    r.update(model=name, workers=workers, batch=args.batch)
                    sent = r.get("bytes_per_worker")
                    plan = (f"{r['predicted_bytes']:.0f}" if "predicted_bytes" in r
                            else "")
                    prediction = ""
                    if "predicted_step_s" in r:
                        prediction = (f" {r['compute_s'] * 1e3:>10.2f} "
                                      f"{r['predicted_step_s'] * 1e3:>9.2f} "
                                      f"{r['step_s'] / r['predicted_step_s']:>9.2f} "
                                      f"{r['delivered_predicted_step_s'] * 1e3:>9.2f} "
                                      f"{r['step_s'] / r['delivered_predicted_step_s']:>9.2f} "
                                      f"{r['nic_bytes_per_step']:>12.0f}")
                    print(f"{name:<15} {workers:>2} {r['system']:<13} "
                          f"{r['step_s'] * 1e3:>9.2f} {r['examples_per_s']:>11.0f} "
                          f"{'' if sent is None else f'{sent:14.0f}':>14} "
                          f"{plan:>12}{prediction}", flush=True)
                results += rows
    if cluster_plan:
        fit_latency(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
