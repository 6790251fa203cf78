"""Checks a training program's --profile report.

usage: check_profile.py REPORT WORKERS STEPS [FAMILY ...]

The report has STEPS measured steps (the warm-up left out when the run
had more than one) and one entry per worker; the peaks are positive; every
family's time, calls, FLOPs and bytes are not negative, its share is its
time over the step, and the families' times together fit in the step (the
sites never overlap), as their roofline times add up to the step's; each
FAMILY has been timed. Prints the run's shape
and, per FAMILY, its calls, FLOPs and bytes per step (static counts, so a
test can pin them), or what is wrong, and exits non-zero on a problem.
"""

import json
import sys


def main():
    path, workers, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    wanted = sys.argv[4:]
    report = json.load(open(path))
    problems = []
    if report.get("parallax_profile") != 1:
        problems.append("not a profile report")
    if report["steps"] != steps:
        problems.append(f"{report['steps']} measured steps, expected {steps}")
    if len(report["per_worker"]) != workers or report["workers"] != workers:
        problems.append(f"{len(report['per_worker'])} workers, expected {workers}")
    peaks = report["peaks"]
    if min(peaks["gflops"], peaks["gbytes_per_second"],
           peaks["cache_gbytes_per_second"], peaks["cache_bytes"]) <= 0:
        problems.append(f"peaks not positive: {report['peaks']}")
    step = report["step_seconds"]
    total = roofline = 0
    families = {f["family"]: f for f in report["families"]}
    for name, f in families.items():
        for key in ("seconds", "calls", "flops", "bytes"):
            if f[key] < 0:
                problems.append(f"{name}: negative {key}")
        if abs(f["share"] - f["seconds"] / step) > 1e-4:
            problems.append(f"{name}: share {f['share']} is not its time over the step")
        total += f["seconds"]
        roofline += f.get("roofline_seconds", 0)
        if f.get("roofline_seconds", 0) > 0 and f["bound"] not in ("compute", "memory"):
            problems.append(f"{name}: bound '{f['bound']}'")
    if abs(roofline - report["roofline_seconds"]) > 1e-9 + 1e-6 * roofline:
        problems.append(f"the families' roofline {roofline} s != the step's "
                        f"{report['roofline_seconds']} s")
    if total > step * (1 + 1e-6):
        problems.append(f"the families' {total} s exceed the step's {step} s")
    outside = report["outside_sites"]["seconds"]
    if abs(total + outside - step) > 1e-6 * max(step, 1):
        problems.append(f"families {total} s + outside {outside} s != step {step} s")
    for worker in report["per_worker"]:
        if worker["step_seconds"] <= 0:
            problems.append(f"worker {worker['rank']}: step time {worker['step_seconds']}")
    print(f"steps {report['steps']}, workers {report['workers']}, "
          f"warm-up left out: {str(report['warmup_left_out']).lower()}")
    for name in wanted:
        f = families.get(name)
        if not f or f["calls"] <= 0:
            problems.append(f"no time for family '{name}'")
            continue
        print(f"{name}: calls {f['calls']:g}, flops {f['flops']:.0f}, bytes {f['bytes']:.0f}")
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
