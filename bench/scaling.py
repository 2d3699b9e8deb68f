#!/usr/bin/python3
"""How the simulator scales with the fabric: set-up time, events per CPU
second and peak memory on k-ary fat-trees running the shift permutation of
docs/performance.md (bench/fattree_shift.py, routing: dmodk, payload: none).

usage: scaling.py RDMASIM SIZE K...      (make bench-scale; SIZE: 1MiB)
For each k: one run with stop: 1ns (set-up, and the outputs of a run that
did nothing), then the whole run; CPU is user + system of the process,
and events per second divide by the whole run's CPU less the set-up's.
Prints a Markdown table."""
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fattree_shift import config  # noqa: E402


def run(rdmasim, path, out, extra):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # each run is a child of its own, so that ru_maxrss is its peak alone
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
             "r = resource.getrusage(resource.RUSAGE_CHILDREN); print(r.ru_maxrss)")
    peak = subprocess.run([sys.executable, "-c", probe, rdmasim, "sim", path, "--out", out, "--quiet",
                           *extra], check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return cpu, int(peak) / 1024


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__.split("\n\n")[1])
    rdmasim, size = argv[1], argv[2]
    print("| k | hosts | set-up CPU s | run CPU s | events | M events/s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for k in (int(a) for a in argv[3:]):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "shift.yaml")
            with open(path, "w") as f:
                f.write(config(k, size))
            setup, _ = run(rdmasim, path, os.path.join(tmp, "setup"), ["--set", "stop=1ns"])
            cpu, peak = run(rdmasim, path, os.path.join(tmp, "out"), [])
            with open(os.path.join(tmp, "out", "summary.json")) as f:
                events = json.load(f)["totals"]["events"]
        print("| %d | %d | %.2f | %.2f | %d | %.2f | %.0f |"
              % (k, k * k * k // 4, setup, cpu, events, events / (cpu - setup) / 1e6, peak), flush=True)


if __name__ == "__main__":
    main(sys.argv)
