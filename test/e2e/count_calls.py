#!/usr/bin/env python3
"""Prints how many times a compiled program's IR calls each named
function: `NAME COUNT` for each, comma-separated, on one line. Standard
library only.

Usage: count_calls.py FILE.mlir NAME...
"""

import re
import sys


def main():
    text = open(sys.argv[1]).read()
    counts = []
    for name in sys.argv[2:]:
        calls = re.findall(r"call @" + re.escape(name) + r"\(", text)
        counts.append(f"{name} {len(calls)}")
    print(", ".join(counts))


if __name__ == "__main__":
    main()
