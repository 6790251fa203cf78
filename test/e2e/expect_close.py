#!/usr/bin/env python3
"""Compares the value a driver printed with printMemrefF32 (stdin) with
the `// EXPECTED-LOSS:` of DRIVER.mlir: |got - want| <= rtol * |want|.

Usage: ... | expect_close.py DRIVER.mlir [--rtol 1e-4]
"""

import argparse
import re
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("driver")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    want = float(re.search(r"EXPECTED-LOSS: (\S+)", open(args.driver).read()).group(1))
    values = re.findall(r"^\[\s*([-+0-9.eE]+|nan|inf|-inf)\s*\]$", sys.stdin.read(), re.M)
    if not values:
        sys.exit("expect_close.py: the program printed no value")
    got = float(values[-1])
    ok = abs(got - want) <= args.rtol * abs(want)
    print(f"loss {got:.6g}, PyTorch {want:.6g}: {'ok' if ok else 'MISMATCH'} (rtol {args.rtol:g})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
