#!/usr/bin/env python3
"""Runs a command and writes its peak resident memory (KiB) to PREFIX.<rank>.

Usage: peak_rss.py PREFIX COMMAND [ARG...]  (the rank is OpenMPI's
OMPI_COMM_WORLD_RANK, 0 outside mpirun). Exits with the command's status.
"""
import os
import resource
import subprocess
import sys


def main():
    prefix, command = sys.argv[1], sys.argv[2:]
    status = subprocess.run(command).returncode
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
    with open(f"{prefix}.{rank}", "w") as f:
        f.write(str(peak))
    sys.exit(status)


if __name__ == "__main__":
    main()
