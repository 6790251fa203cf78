#!/usr/bin/env python3
"""Failures and checkpoints of a 4-worker training job (wide_deep, Adagrad,
hybrid: its tables on parameter servers with their optimizer state).

  check_resilience.py kill WORKDIR
      kills one rank mid-run: the job must exit non-zero within 30 s and
      name the lost rank.
  check_resilience.py checkpoint WORKDIR
      saves a checkpoint at step 600 of a 4-worker run, resumes it on 4
      and on 2 workers to step 800, and compares the final parameters with
      an uninterrupted run: equal on 4 workers, within 1e-5 relative on 2
      (another summation order).

parallax-compile and mpirun on PATH, PARALLAX_SRC naming the source tree.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from check_training import mpirun  # noqa: E402


def build(work, workers, batch):
    src = pathlib.Path(os.environ["PARALLAX_SRC"])
    program = work / f"wide_deep.{workers}"
    subprocess.run(["parallax-compile", str(src / "examples/models/wide_deep.onnx"),
                    "--batch-size", str(batch), "--workers", str(workers),
                    "--optimizer", "adagrad", "--lr", "0.01",
                    "-o", str(program)], check=True)
    return program


def long_data(work):
    """The example's 32 examples repeated: enough for thousands of steps."""
    src = pathlib.Path(os.environ["PARALLAX_SRC"])
    data = work / "data"
    data.mkdir(parents=True, exist_ok=True)
    for path in (src / "examples/models/data/wide_deep/train").glob("*.npy"):
        array = np.load(path)
        np.save(data / path.name, np.concatenate([array] * 4000))
    return data


def parent_of(pid):
    try:
        # The fields after the command name, which may hold spaces.
        return int(pathlib.Path(f"/proc/{pid}/stat").read_text()
                   .rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def rank_pids(program, job):
    """{rank: pid} of the running ranks of `program` that the launcher `job`
    started (never a rank of another job of the same program)."""
    pids = {}
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if pathlib.Path(os.readlink(proc / "exe")) != program.resolve():
                continue
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        ancestor = int(proc.name)
        while ancestor not in (None, 0, 1, job.pid):
            ancestor = parent_of(ancestor)
        if ancestor != job.pid:
            continue
        for entry in environ:
            if entry.startswith(b"OMPI_COMM_WORLD_RANK="):
                pids[int(entry.split(b"=")[1])] = int(proc.name)
    return pids


def wait_for(condition, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.01)
    sys.exit(f"timed out waiting for {what}")


def metrics_lines(path):
    return len(path.read_text().splitlines()) if path.exists() else 0


def kill(work):
    program = build(work, 4, 1)
    data = long_data(work)
    metrics = work / "metrics.jsonl"
    # A previous run's metrics would make the kill land at start-up: the
    # lines counted below must be this run's.
    for stale in work.glob("metrics.jsonl*"):
        stale.unlink()
    job = subprocess.Popen(mpirun(4) + [str(program), "--data", str(data),
                                     "--metrics", str(metrics)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # A bound on waiting for an event, not a speed requirement: generous,
    # so that a loaded machine never fails the test here.
    wait_for(lambda: job.poll() is not None or
             (metrics_lines(metrics) >= 20 and 2 in rank_pids(program, job)),
             600, "20 steps")
    if job.poll() is not None:
        print(job.communicate()[0])
        sys.exit(f"the job ended (status {job.returncode}) before rank 2 "
                 "could be killed")
    victim = 2
    os.kill(rank_pids(program, job)[victim], signal.SIGKILL)
    killed = time.time()
    try:
        output, _ = job.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        job.kill()
        sys.exit("the job still runs 30 s after rank 2 was killed")
    seconds = time.time() - killed
    named = f"rank {victim}" in output
    print(f"killed rank {victim} after {metrics_lines(metrics)} steps: exit status "
          f"{'non-zero' if job.returncode else 'zero'}, "
          f"{'within' if seconds < 30 else 'after'} 30 s, "
          f"lost rank {'named' if named else 'not named'}")
    if not (job.returncode and named):
        print(output)
    return 0 if job.returncode and named else 1


def train(command):
    """Runs a training job; on failure shows its output and fails the test."""
    job = subprocess.run(command, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if job.returncode:
        print(job.stdout)
        sys.exit(f"exit status {job.returncode}: {' '.join(command)}")


def parameters(directory):
    manifest = json.loads((directory / "checkpoint.json").read_text())
    return manifest["step"], {v["name"]: np.load(directory / v["file"])
                              for v in manifest["variables"]}


def checkpoint(work):
    four, two = build(work, 4, 1), build(work, 2, 2)
    data = long_data(work)
    saved = work / "saved"
    # The checkpoint to resume from is always the one of step 600, so the
    # resumed runs compute the same thing every time (a kill point that
    # depended on timing made the 2-worker difference vary from run to
    # run). Killing jobs is the kill test's business, and killing saves
    # training-interruptions.test's.
    train(mpirun(4) + [str(four), "--data", str(data), "--steps", "600",
                       "--save", str(saved), "--save-every", "300"])
    step, _ = parameters(saved)
    end = step + 200
    print(f"checkpoint of step {step}; resuming to step {end}")

    def run(launch, program, out, restore=None):
        command = mpirun(launch) + [str(program), "--data", str(data),
                            "--steps", str(end), "--save", str(out)]
        if restore:
            command += ["--restore", str(restore)]
        train(command)
        return parameters(out)[1]

    full = run(4, four, work / "full")
    failures = 0
    for launch, program in ((4, four), (2, two)):
        resumed = run(launch, program, work / f"resumed{launch}", saved)
        worst = max(float(np.max(np.abs(resumed[n] - full[n]) /
                                 (np.abs(full[n]) + 1e-6))) for n in full)
        ok = worst == 0.0 if launch == 4 else worst <= 1e-5
        failures += not ok
        print(f"resumed on {launch} workers: {len(full)} variables, largest "
              f"relative difference {'0' if worst == 0 else f'{worst:.1e}'}: "
              f"{'ok' if ok else 'MISMATCH'}")
    return failures


def main():
    mode, work = sys.argv[1], pathlib.Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    return {"kill": kill, "checkpoint": checkpoint}[mode](work)


if __name__ == "__main__":
    sys.exit(main())
