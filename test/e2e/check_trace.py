"""Checks a training program's --trace file (Chrome trace JSON).

usage: check_trace.py TRACE WORKERS STEPS [NAME-PREFIX ...]

Every worker is a process named "worker r" with STEPS "step s" events;
every communication event on a worker's main timeline lies inside one of
its steps or after-step scopes (events nest); durations are not negative;
each NAME-PREFIX starts the name of some event of every worker, or, for a
prefix "VERB NAME", is listed in an event "VERB NAME1, NAME2, ..." (one
exchange for several variables). Prints one line per worker, or what is
wrong, and exits non-zero on a problem.
"""

import json
import sys


def names_event(name, prefix):
    """Whether event `name` starts with `prefix` or, as "VERB A, B", lists
    the variable of a prefix "VERB B"."""
    if name.startswith(prefix):
        return True
    verb, _, variable = prefix.partition(" ")
    listed = name[len(verb) + 1:].split(", ") if name.startswith(verb + " ") else []
    return bool(variable) and variable in listed


def main():
    path, workers, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    prefixes = sys.argv[4:]
    events = json.load(open(path))["traceEvents"]
    problems = []
    for rank in range(workers):
        mine = [e for e in events if e["pid"] == rank]
        names = [e["args"]["name"] for e in mine
                 if e["ph"] == "M" and e["name"] == "process_name"]
        if names != [f"worker {rank}"]:
            problems.append(f"worker {rank}: process names {names}")
        spans = [e for e in mine if e["ph"] == "X"]
        if any(e["dur"] < 0 for e in spans):
            problems.append(f"worker {rank}: a negative duration")
        step_events = [e for e in spans if e["cat"] == "compute"]
        if sorted(e["name"] for e in step_events) != sorted(
                f"step {s}" for s in range(steps)):
            problems.append(f"worker {rank}: steps {[e['name'] for e in step_events]}")
        outer = [e for e in spans if e["cat"] in ("compute", "runtime")]
        for e in spans:
            if e["cat"] != "comm" or e["tid"] != 0:
                continue
            if not any(o["ts"] <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"] + 1e-3
                       for o in outer):
                problems.append(f"worker {rank}: '{e['name']}' outside every step")
                break
        for prefix in prefixes:
            if not any(names_event(e["name"], prefix) for e in spans):
                problems.append(f"worker {rank}: no '{prefix}' event")
        comm = sum(e["cat"] == "comm" for e in spans)
        print(f"worker {rank}: {len(step_events)} steps, {comm} communication events")
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
