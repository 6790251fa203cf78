#!/usr/bin/env python3
"""Trains onto a full file system (a small tmpfs) and checks what is left.

Usage: check_full_disk.py PROGRAM DATA WORK

Mounts a 256 KiB tmpfs at WORK/disk (root only; unmounted on every exit
path), saves a first checkpoint there, fills the rest of the disk, then
runs again: the save and --metrics must fail with a clear message and a
non-zero exit, the first checkpoint must still be complete, and no
staging directory may be left holding the space. Prints the programs'
messages for FileCheck.
"""
import json
import os
import subprocess
import sys


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    return result.returncode, result.stdout


def main():
    program, data, work = sys.argv[1:4]
    disk = os.path.join(work, "disk")
    os.makedirs(disk, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", disk],
                   check=True)
    try:
        checkpoint = os.path.join(disk, "ckpt")
        status, output = run([program, "--data", data, "--steps", "2",
                              "--save", checkpoint])
        if status:
            print(f"the first save failed: {output}")
            return 1
        fill = os.open(os.path.join(disk, "fill"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fill, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fill)
        status, output = run([program, "--data", data, "--steps", "4",
                              "--restore", checkpoint, "--save", checkpoint])
        print(f"save exit {status}: {output.strip()}")
        status, output = run([program, "--data", data, "--steps", "2",
                              "--metrics", os.path.join(disk, "m.jsonl")])
        print(f"metrics exit {status}: {output.strip().splitlines()[-1]}")
        step = json.load(open(os.path.join(checkpoint, "checkpoint.json")))["step"]
        print(f"checkpoint step {step}")
        print("beside it:", sorted(n for n in os.listdir(disk)
                                   if n not in ("ckpt", "ckpt.lock", "fill",
                                                "m.jsonl")))
    finally:
        subprocess.run(["umount", disk], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
