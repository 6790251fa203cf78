#!/usr/bin/env python3
"""Interrupts training programs the hard way and checks what is left.

  check_interruptions.py kill-during-save PROGRAM DATA WORK [--kills N]
      Saves a first checkpoint, then runs PROGRAM with --save-every 1 and
      SIGKILLs it N times at varying moments (most land inside a save:
      every file is fsync'ed). After every kill, WORK/ckpt must be one
      complete checkpoint: a manifest whose every file is readable with its shape.
      Then a run restoring from it continues and cleans up the leftovers.

  check_interruptions.py stopped-peer PROGRAM DATA WORK [--timeout S]
      Runs PROGRAM on 2 MPI ranks, stops rank 1 (SIGSTOP) once both have
      trained a few steps, and checks that the job ends by itself within
      the communication timeout plus a margin, naming rank 1.

Neither depends on timing for its verdict: the invariant holds at any
kill point, and a stopped rank stays stopped however slow the machine.
"""
import argparse
import glob
import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np

MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--mca", "btl",
          "self,vader"]


def complete_checkpoint(path):
    """None when `path` is a complete checkpoint, else what is wrong."""
    try:
        manifest = json.load(open(os.path.join(path, "checkpoint.json")))
    except (OSError, ValueError) as error:
        return f"no readable manifest: {error}"
    for variable in manifest["variables"]:
        try:
            array = np.load(os.path.join(path, variable["file"]))
        except (OSError, ValueError) as error:
            return f"{variable['file']}: {error}"
        if list(array.shape) != variable["shape"]:
            return f"{variable['file']}: shape {array.shape}"
    return None


def kill_during_save(args):
    checkpoint = os.path.join(args.work, "ckpt")
    rng = random.Random(0)
    mid_save = 0
    # A first checkpoint, so that one must exist after every kill.
    subprocess.run([args.program, "--data", args.data, "--save", checkpoint,
                    "--steps", "2"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    for kill in range(args.kills):
        process = subprocess.Popen(
            [args.program, "--data", args.data, "--save", checkpoint,
             "--save-every", "1", "--log-every", "1000000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 0.4))
        process.send_signal(signal.SIGKILL)
        process.wait()
        forget_openmp_registration(process.pid)
        parent = os.path.dirname(checkpoint)
        leftovers = [n for n in os.listdir(parent)
                     if n.startswith("ckpt.partial.") or n.startswith("ckpt.old.")]
        mid_save += bool(leftovers)
        problem = complete_checkpoint(checkpoint)
        if problem:
            print(f"kill {kill}: '{checkpoint}' is not a complete "
                  f"checkpoint: {problem} (beside it: {leftovers})")
            return 1
    # Resuming cleans up whatever the last kill left.
    steps = json.load(open(os.path.join(checkpoint, "checkpoint.json")))["step"]
    subprocess.run([args.program, "--data", args.data, "--restore", checkpoint,
                    "--save", checkpoint, "--steps", str(steps + 2)],
                   check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    leftovers = [n for n in os.listdir(os.path.dirname(checkpoint))
                 if n.startswith("ckpt.partial.") or n.startswith("ckpt.old.")]
    if leftovers:
        print(f"leftovers after a clean run: {leftovers}")
        return 1
    print(f"{args.kills} kills: a complete checkpoint after each "
          f"({mid_save} left a save unfinished), none left after resuming",
          file=sys.stderr)
    print("kill-during-save: ok")
    return 0


def forget_openmp_registration(pid):
    """Removes the registration LLVM's OpenMP runtime left in /dev/shm for
    killed process `pid`. Killed between creating it and sizing it, it is
    empty, and a later process given the same pid dies of SIGBUS reading
    it at start-up."""
    for path in glob.glob(f"/dev/shm/__KMP_REGISTERED_LIB_{pid}_*"):
        try:
            os.remove(path)
        except OSError:
            pass


def rank_pid(program, rank):
    """The pid of `program`'s MPI rank `rank`, or None."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
            environ = open(f"/proc/{entry}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if (cmdline and cmdline[0] == program.encode() and
                f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ):
            return int(entry)
    return None


def stopped_peer(args):
    metrics = os.path.join(args.work, "metrics.jsonl")
    for path in (metrics, metrics + ".0", metrics + ".1"):
        if os.path.exists(path):
            os.remove(path)
    job = subprocess.Popen(
        MPIRUN + ["-np", "2", args.program, "--data", args.data,
                  "--comm-timeout", str(args.timeout), "--metrics", metrics,
                  "--metrics-all-ranks", "--log-every", "1000000"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and job.poll() is None:
            try:
                if len(open(metrics + ".1").read().splitlines()) >= 3:
                    break
            except OSError:
                pass
            time.sleep(0.01)
        pid = rank_pid(args.program, 1)
        if job.poll() is not None or pid is None:
            print("the job ended (or rank 1 vanished) before it could be "
                  "stopped: give it more data")
            return 1
        os.kill(pid, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            output, _ = job.communicate(timeout=args.timeout + 60)
        except subprocess.TimeoutExpired:
            print(f"the job still hangs {args.timeout + 60} s after rank 1 "
                  "stopped")
            return 1
        took = time.monotonic() - stopped
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
        pid = rank_pid(args.program, 1)
        if pid:
            os.kill(pid, signal.SIGKILL)
            forget_openmp_registration(pid)
    sys.stderr.write(output)
    print(f"ended {took:.1f} s after the stop (timeout {args.timeout} s)",
          file=sys.stderr)
    if job.returncode == 0:
        print("the job exited 0 although rank 1 was stopped")
        return 1
    for line in output.splitlines():
        if "does not respond" in line:
            print(line[line.index("error:"):])
    print("stopped-peer: ok")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["kill-during-save", "stopped-peer"])
    parser.add_argument("program")
    parser.add_argument("data")
    parser.add_argument("work")
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--timeout", type=int, default=10)
    args = parser.parse_args()
    args.program = os.path.abspath(args.program)
    os.makedirs(args.work, exist_ok=True)
    if args.mode == "kill-during-save":
        return kill_during_save(args)
    return stopped_peer(args)


if __name__ == "__main__":
    sys.exit(main())
