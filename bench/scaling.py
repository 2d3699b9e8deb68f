#!/usr/bin/python3
"""How the simulator scales with the fabric: set-up time, events per CPU
second and peak memory on k-ary fat-trees running the shift permutation of
docs/performance.md (bench/fattree_shift.py, routing: dmodk, payload: none).

usage: scaling.py RDMASIM SIZE K...      (make bench-scale; SIZE: 1MiB)
Each k runs at least three times, and again while its runs took less than
two seconds of CPU between them (at most twenty: a k=8 run takes a tenth
of a second, which the machine's other work swings). The run's CPU is
what the process measured around its event loop (summary.json's
run_cpu_s, with --wall-time); set-up is the rest of the process's CPU
(user + system): building the network, reading the file, writing the
outputs. Events per second divide the events by the least run CPU, and
again by the mean: the least of twenty short runs catches the machine at
its fastest moment, which one long run averages away, so the two k are
best compared by their means. Prints a Markdown table."""
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fattree_shift import config  # noqa: E402

MIN_RUNS, MAX_RUNS, MIN_CPU = 3, 20, 2.0


def run(rdmasim, path, out):
    """One run: (run CPU, process CPU, events, peak RSS in MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # each run is a child of its own, so that ru_maxrss is its peak alone
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
             "r = resource.getrusage(resource.RUSAGE_CHILDREN); print(r.ru_maxrss)")
    peak = subprocess.run([sys.executable, "-c", probe, rdmasim, "sim", path, "--out", out, "--quiet",
                           "--wall-time"], check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return s["run_cpu_s"], process, s["totals"]["events"], int(peak) / 1024


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__.split("\n\n")[1])
    rdmasim, size = argv[1], argv[2]
    print("| k | hosts | set-up CPU s | run CPU s (least) | runs | events | M events/s (least CPU) | (mean CPU) | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in (int(a) for a in argv[3:]):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "shift.yaml")
            with open(path, "w") as f:
                f.write(config(k, size))
            runs = []
            while len(runs) < MIN_RUNS or (sum(r[0] for r in runs) < MIN_CPU and len(runs) < MAX_RUNS):
                runs.append(run(rdmasim, path, os.path.join(tmp, "out")))
        cpu, process, events, _ = min(runs)
        mean = sum(r[0] for r in runs) / len(runs)
        peak = max(r[3] for r in runs)
        print("| %d | %d | %.2f | %.3f | %d | %d | %.2f | %.2f | %.0f |"
              % (k, k * k * k // 4, process - cpu, cpu, len(runs), events, events / cpu / 1e6,
                 events / mean / 1e6, peak), flush=True)


if __name__ == "__main__":
    main(sys.argv)
