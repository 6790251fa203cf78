#!/usr/bin/env python3
"""Compares two .npy files of float32/float64 values elementwise (load()
also reads integers and booleans; save() writes float32):
|got - want| <= rtol * |want| + atol. Standard library only.

Usage: npy_close.py GOT.npy WANT.npy [--rtol 1e-4] [--atol 1e-6]
"""

import argparse
import ast
import struct
import sys


def load(path):
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"npy_close.py: {path} is not a .npy file")
    major = data[6]
    size = 2 if major == 1 else 4
    length = int.from_bytes(data[8:8 + size], "little")
    header = ast.literal_eval(data[8 + size:8 + size + length].decode())
    body = data[8 + size + length:]
    code = {"<f4": "f", "<f8": "d", "<i8": "q", "<i4": "i", "|b1": "?",
            "|u1": "B", "|i1": "b"}[header["descr"]]
    count = 1
    for dim in header["shape"]:
        count *= dim
    return header["shape"], struct.unpack(f"<{count}{code}", body[:count * struct.calcsize(code)])


def save(path, shape, values):
    """Writes float32 `values` (flat, row-major) as a .npy of `shape`."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join(f"{d}, " for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                     header.encode() + struct.pack(f"<{len(values)}f", *values))


def parameter_mismatches(got_dir, want_paths, close):
    """What differs between each .npy of `want_paths` and the file of the
    same name in `got_dir`, by `close(got, want)` on the flat values."""
    failures = []
    for path in want_paths:
        got_shape, got = load(got_dir / path.name)
        want_shape, want = load(path)
        if tuple(got_shape) != tuple(want_shape):
            failures.append(f"{path.stem}: shape {got_shape} != {want_shape}")
        elif not close(got, want):
            worst = max(abs(g - w) for g, w in zip(got, want))
            failures.append(f"{path.stem}: differs by up to {worst:.3g}")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("got")
    parser.add_argument("want")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-6)
    args = parser.parse_args()
    got_shape, got = load(args.got)
    want_shape, want = load(args.want)
    if tuple(got_shape) != tuple(want_shape):
        sys.exit(f"shape {tuple(got_shape)} != expected {tuple(want_shape)}")
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want))
           if not abs(g - w) <= args.rtol * abs(w) + args.atol]
    for i, g, w in bad[:5]:
        print(f"element {i}: {g!r} != {w!r}")
    print(f"{len(got) - len(bad)} of {len(got)} elements within rtol {args.rtol:g}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
