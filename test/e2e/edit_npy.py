#!/usr/bin/env python3
"""Copies a data directory of .npy files and changes some elements.

Usage: edit_npy.py SRC DST EDIT...

`tokens[5,3]=200` sets one element of DST/tokens.npy; `tokens+=-200` adds
an offset to every element; `tokens*=1000` repeats the examples 1000
times (more data). VALUE may be nan, inf or -inf for float data. DST is
created afresh.
"""
import re
import shutil
import sys

import numpy as np


def main():
    src, dst, edits = sys.argv[1], sys.argv[2], sys.argv[3:]
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    for edit in edits:
        match = re.fullmatch(r"([^\[+*]+)(?:\[([-0-9,]+)\]=|(\+=|\*=))(.+)",
                             edit)
        if not match:
            sys.exit(f"edit_npy.py: cannot parse edit '{edit}'")
        name, index, operator, value = match.groups()
        path = f"{dst}/{name}.npy"
        array = np.load(path)
        number = float(value) if array.dtype.kind == "f" else int(value)
        if operator == "*=":
            array = np.tile(array, (int(value),) + (1,) * (array.ndim - 1))
        elif operator == "+=":
            array += number
        else:
            array[tuple(int(i) for i in index.split(","))] = number
        np.save(path, array)


if __name__ == "__main__":
    main()
