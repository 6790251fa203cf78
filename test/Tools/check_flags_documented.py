"""Every flag of parallax-compile (its --help, MLIR's debugging flags
aside) and of compiled programs (the runtime's argument parsers) appears in
docs/tools.md, as `--flag`; prints the missing ones and a count.

usage: check_flags_documented.py HELP_TEXT SOURCE_DIR DOC
"""
import re
import sys


def main():
    help_text, source_dir, doc = sys.argv[1:]
    documented = open(doc).read()
    flags = set()
    own = False
    for line in open(help_text):
        if line.rstrip().endswith("options:") or line.rstrip().endswith(
                "(--mode train):"):
            own = not line.startswith("General")
            continue
        match = re.match(r"\s+(--?[A-Za-z][\w-]*)", line)
        if own and match:
            flags.add(match.group(1))
    compiler = len(flags)
    for source in ("Training.cpp", "Runtime.cpp"):
        text = open(f"{source_dir}/{source}").read()
        flags.update(f for f in re.findall(r'"(--[a-z][a-z-]*)"', text)
                     if f != "--help")
    missing = sorted(f for f in flags if f"`{f}" not in documented)
    for flag in missing:
        print(f"undocumented: {flag}")
    print(f"{compiler} parallax-compile flags, {len(flags) - compiler} program "
          f"flags, {len(missing)} undocumented")


if __name__ == "__main__":
    main()
