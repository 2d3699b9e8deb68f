#!/usr/bin/python3
"""Run one workload with PCIe modelled and with `pcie.model=false`, and
print the events per second of each (best of --runs runs) and their ratio.

    tests/pcie/bench_pcie.py --rdmasim src/rdmasim --config tests/pcie/bench.yaml"""
import argparse
import re
import subprocess
import sys

LINE = re.compile(r"simulated\s+[\d.]+ us, (\d+) events in ([\d.]+) s wall")


def best(rdmasim, config, runs, *args):
    events, wall = 0, None
    for _ in range(runs):
        p = subprocess.run([rdmasim, "sim", config, *args], capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"{config}: {p.stderr.strip()}")
        m = LINE.search(p.stdout)
        n, w = int(m.group(1)), float(m.group(2))
        if wall is None or w < wall:
            events, wall = n, w
    return events, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rdmasim", default="src/rdmasim")
    ap.add_argument("--config", default="tests/pcie/bench.yaml")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rates = {}
    for name, extra in (("pcie off", ["--set", "pcie.model=false"]), ("pcie on", [])):
        events, wall = best(args.rdmasim, args.config, args.runs, *extra)
        rates[name] = events / wall
        print(f"{name:9} {events:9d} events in {wall:.3f} s: {rates[name] / 1e6:.2f} M events/s")
    print(f"pcie on / off: {rates['pcie on'] / rates['pcie off']:.2f} of the event rate")


if __name__ == "__main__":
    main()
