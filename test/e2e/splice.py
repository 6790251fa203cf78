#!/usr/bin/env python3
"""Inserts the functions of DRIVER.mlir into the module read from stdin
(before its closing brace, ahead of any dialect resources) and prints it.

Usage: parallax-translate --import-onnx M.onnx ... | splice.py DRIVER.mlir
"""

import sys


def main():
    driver = open(sys.argv[1]).read()
    module = sys.stdin.read()
    resources = module.find("\n{-#")
    body_end = len(module) if resources < 0 else resources
    close = module.rfind("}", 0, body_end)
    if close < 0:
        sys.exit("splice.py: no module on stdin")
    sys.stdout.write(module[:close] + driver + module[close:])


if __name__ == "__main__":
    main()
