#!/usr/bin/python3
"""What a frame in flight costs, on the fat-tree workload of docs/
performance.md (bench/fattree_shift.py): k=8, 10 MiB per flow, payload:
none, once with dmodk (one flow per link, almost nothing queues) and once
with ecmp (hash collisions queue thousands of frames).

usage: frame_memory.py RDMASIM [RUNS]
Runs each RUNS times (default 2) with --wall-time, keeps the run of least
CPU time (user + system, whole process), and prints CPU, peak RSS, the
frames in flight at most and the frame pool's size from summary.json's
"memory", beside htsim's figures on the same workload (../shared/peers/
ns3-fattree/README.md). The memory a frame in flight costs in all (its
frame, its event, its place in a queue) is the RSS the queueing run adds
over the collision-free one, per frame it adds in flight."""
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fattree_shift import config  # noqa: E402

MIB = 1 << 20
# htsim_roce on the same workload (peers README): CPU s, RSS MiB
HTSIM = {"dmodk": (1.50, 12, "adaptive"), "ecmp": (2.70, 49, "per-flow hash")}


def run(rdmasim, routing, runs):
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        path, out = os.path.join(tmp, "shift.yaml"), os.path.join(tmp, "out")
        with open(path, "w") as f:
            f.write(config(8, "10MiB", routing))
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([rdmasim, "sim", path, "--quiet", "--wall-time", "--out", out], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            with open(os.path.join(out, "summary.json")) as f:
                mem = json.load(f)["memory"]
            if best is None or cpu < best[0]:
                best = (cpu, mem)
    return best


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    runs = int(argv[2]) if len(argv) == 3 else 2
    res = {r: run(argv[1], r, runs) for r in ("dmodk", "ecmp")}
    print("k=8 fat-tree, 10 MiB per flow, payload: none (least CPU of %d runs)" % runs)
    print("%-6s %8s %9s %14s %11s   %s" % ("route", "CPU s", "RSS MiB", "frames (peak)", "pool MiB",
                                           "htsim CPU s, RSS MiB"))
    for r, (cpu, mem) in res.items():
        h = HTSIM[r]
        print("%-6s %8.2f %9.1f %14d %11.1f   %.2f, %d (%s)" % (
            r, cpu, mem["peak_rss_bytes"] / MIB, mem["frames_in_flight_peak"],
            mem["frame_pool_bytes"] / MIB, h[0], h[1], h[2]))
    d_rss = res["ecmp"][1]["peak_rss_bytes"] - res["dmodk"][1]["peak_rss_bytes"]
    d_frames = res["ecmp"][1]["frames_in_flight_peak"] - res["dmodk"][1]["frames_in_flight_peak"]
    if d_frames > 0:
        print("memory per frame in flight, in all: %d bytes (%d bytes more RSS for %d frames more)"
              % (d_rss // d_frames, d_rss, d_frames))


if __name__ == "__main__":
    main(sys.argv)
