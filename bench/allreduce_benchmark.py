#!/usr/bin/python3
"""The runtime's dense AllReduce against the wire's limit, with and without
the communication thread, side by side in one run.

Runs build/bin/parallax-allreduce-bench (bench/allreduce_benchmark.cpp) on
M emulated machines (scripts/emulated-cluster.sh: network namespaces, each
NIC shaped to RATE, one rank each, OpenMPI over TCP), once with the
communication thread (PARALLAX_COMM_THREAD=1, the default) and once
without (0: one MPI_Iallreduce driven by the main thread's MPI calls). For
each bucket size it prints the AllReduce time, its ratio to the ring's
bound 2 (M-1)/M x bytes / rate, and the fraction of a concurrent compute
stretch the AllReduce hid behind. Never asserts timings.

Needs root (namespaces) and the build; usage:
  /usr/bin/python3 bench/allreduce_benchmark.py [--cluster 4:1gbit]
      [--sizes-mb 1 8 32 115] [--repeats 3] [--json results.json]
"""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RATE_UNITS = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}


def rate_bytes_per_second(rate):
    """tc's '1gbit', '100mbit' as bytes per second."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)bit", rate.lower())
    if not match:
        sys.exit(f"--cluster: rate '{rate}' is not like 1gbit or 100mbit")
    return float(match.group(1)) * RATE_UNITS[match.group(2)] / 8


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cluster", default="4:1gbit", metavar="M:RATE")
    parser.add_argument("--sizes-mb", type=float, nargs="+",
                        default=[1, 8, 32, 115])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()

    machines, rate = args.cluster.split(":", 1)
    machines = int(machines)
    per_second = rate_bytes_per_second(rate)
    program = pathlib.Path(args.build) / "bin" / "parallax-allreduce-bench"
    if not program.exists():
        sys.exit(f"{program} is missing: scripts/build.sh "
                 "parallax-allreduce-bench")
    sizes = " ".join(str(s) for s in args.sizes_mb)
    # Both settings on one cluster, one after the other.
    inner = " ; ".join(
        f"PARALLAX_COMM_THREAD={on} $CLUSTER_MPIRUN -x PARALLAX_COMM_THREAD "
        f"{program} --sizes-mb {sizes} --repeats {args.repeats}"
        for on in (1, 0))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    run = subprocess.run(
        [str(ROOT / "scripts" / "emulated-cluster.sh"), "--machines",
         str(machines), "--rate", rate, "--timeout", "1800", "--", "sh", "-c",
         inner], env=env, stdout=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"the benchmark failed (exit {run.returncode})")
    results = [json.loads(line) for line in run.stdout.splitlines()
               if line.startswith("{")]
    print(f"{machines} machines x 1 rank, {rate} each, OpenMPI over TCP")
    print(f"{'bucket':>9} {'thread':>6} {'allreduce':>10} {'ring bound':>10} "
          f"{'ratio':>6} {'hidden':>7}")
    for r in results:
        bound = 2 * (machines - 1) / machines * r["bytes"] / per_second
        r["ring_bound_s"] = bound
        print(f"{r['bytes'] / 1e6:>7.0f}MB {('on' if r['comm_thread'] else 'off'):>6} "
              f"{r['comm_s']:>9.3f}s {bound:>9.3f}s "
              f"{r['comm_s'] / bound:>6.2f} {100 * r['hidden']:>6.0f}%")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
