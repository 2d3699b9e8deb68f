#!/usr/bin/python3
"""Simulator speed: run a configuration a few times and report events/s,
frame transmissions/s and peak memory (best run).

usage: sim_bench.py RDMASIM CONFIG [RUNS] [--set KEY=VALUE]...
Events and frames come from the run's summary.json; time is wall clock of
the whole process; peak memory is the largest resident set of the runs."""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def run_once(rdmasim, config, sets):
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run([rdmasim, "sim", config, "--out", out, "--quiet", *sets], check=True)
        elapsed = time.perf_counter() - start
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        with open(os.path.join(out, "summary.json")) as f:
            totals = json.load(f)["totals"]
    # ru_maxrss of children is the largest of all children so far; the runs
    # are alike, so that is the peak of any of them.
    return elapsed, totals["events"], totals["frames"], peak_kib


def main(argv):
    rdmasim, config = argv[1], argv[2]
    rest = argv[3:]
    runs = int(rest.pop(0)) if rest and rest[0].isdigit() else 3
    sets = []
    for item in rest:
        sets += ["--set", item.removeprefix("--set=")] if item != "--set" else []
    results = [run_once(rdmasim, config, sets) for _ in range(runs)]
    elapsed, events, frames, peak = min(results)
    print("%s: %d events, %d frame transmissions" % (os.path.basename(config), events, frames))
    print("  best of %d: %.3f s  %.2f M events/s  %.2f M frames/s  peak RSS %.0f MiB"
          % (runs, elapsed, events / elapsed / 1e6, frames / elapsed / 1e6, peak / 1024))


if __name__ == "__main__":
    main(sys.argv)
