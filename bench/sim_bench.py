#!/usr/bin/python3
"""Simulator speed: run a configuration a few times and report events/s,
frame transmissions/s and peak memory (best run: least CPU time).

usage: sim_bench.py RDMASIM CONFIG [RUNS] [--set KEY=VALUE]...
Events and frames come from the run's summary.json; rates per core divide
by the process's CPU time (it is single-threaded), so other load on the
machine does not count against it; the wall-clock rate is shown too. Peak
memory is the largest resident set of the runs."""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def run_once(rdmasim, config, sets):
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([rdmasim, "sim", config, "--out", out, "--quiet", *sets], check=True)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        peak_kib = after.ru_maxrss
        with open(os.path.join(out, "summary.json")) as f:
            totals = json.load(f)["totals"]
    # ru_maxrss of children is the largest of all children so far; the runs
    # are alike, so that is the peak of any of them.
    return elapsed, cpu, totals["events"], totals["frames"], peak_kib


def main(argv):
    rdmasim, config = argv[1], argv[2]
    rest = argv[3:]
    runs = int(rest.pop(0)) if rest and rest[0].isdigit() else 3
    sets = []
    for item in rest:
        sets += ["--set", item.removeprefix("--set=")] if item != "--set" else []
    results = [run_once(rdmasim, config, sets) for _ in range(runs)]
    # the best run is the one that took the least CPU time, the measure of
    # the rates per core; its wall time is shown alongside
    elapsed, cpu, events, frames, peak = min(results, key=lambda r: r[1])
    print("%s: %d events, %d frame transmissions" % (os.path.basename(config), events, frames))
    print("  best of %d: %.3f s wall, %.3f s CPU (one core)" % (runs, elapsed, cpu))
    print("  %.2f M events/s and %.2f M frames/s per core (CPU time), %.2f M events/s wall"
          % (events / cpu / 1e6, frames / cpu / 1e6, events / elapsed / 1e6))
    print("  peak RSS %.0f MiB" % (peak / 1024))


if __name__ == "__main__":
    main(sys.argv)
