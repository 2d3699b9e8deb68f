#!/usr/bin/python3
"""plot_timeline.py - goodput per flow over time from `rdmasim replay
--timeline CSV`, with CNPs and PFC pauses marked, as a PNG.

    rdmasim replay --timeline t.csv capture.pcap
    scripts/plot_timeline.py t.csv t.png [--top N]

One line per flow (packets addressed to one QP from one sender), the N
flows with the most goodput (default 8); intervals without a row for a flow
had no packets of it and plot as zero. CNPs are drawn as markers on the
flow they were sent to, and each PFC priority's paused time as a shaded
band along the bottom. Needs Debian's python3-matplotlib
(apt-get install python3-matplotlib).
"""
import argparse
import csv
import os
import stat
import sys
from collections import defaultdict

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_timeline.py: matplotlib is missing: apt-get install python3-matplotlib")


def load(path):
    flows = defaultdict(dict)   # id -> {start_ns: row}
    labels = {}
    pfc = defaultdict(dict)     # label -> {start_ns: paused_ns}
    interval = None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            start = int(row["start_ns"])
            interval = int(row["interval_ns"])
            if row["kind"] == "flow":
                flows[row["id"]][start] = row
                labels[row["id"]] = "#%s %s" % (row["conversation"], row["label"])
            elif row["kind"] == "pfc":
                pfc[row["label"]][start] = int(row["paused_ns"])
    return flows, labels, pfc, interval


def main():
    ap = argparse.ArgumentParser(description="Plot an rdmasim replay timeline CSV.")
    ap.add_argument("csv")
    ap.add_argument("png")
    ap.add_argument("--top", type=int, default=8, help="flows to draw, most goodput first (default 8)")
    args = ap.parse_args()
    flows, labels, pfc, interval = load(args.csv)
    if interval is None:
        sys.exit("plot_timeline.py: %s has no rows" % args.csv)
    starts = sorted({s for rows in flows.values() for s in rows} | {s for p in pfc.values() for s in p})
    first, last = starts[0], starts[-1]
    grid = list(range(first, last + interval, interval))
    xs = [t / 1e6 for t in grid]  # ms

    def total(rows):
        return sum(int(r["goodput_bytes"]) for r in rows.values())

    chosen = sorted(flows, key=lambda k: total(flows[k]), reverse=True)[:args.top]
    fig, ax = plt.subplots(figsize=(11, 5.5))
    for fid in chosen:
        rows = flows[fid]
        ys = [int(rows[t]["goodput_bps"]) / 1e9 if t in rows else 0.0 for t in grid]
        line, = ax.plot(xs, ys, drawstyle="steps-post", linewidth=1.2, label=labels[fid])
        cnp = [(t / 1e6, int(rows[t]["goodput_bps"]) / 1e9) for t in grid if t in rows and int(rows[t]["cnp"])]
        if cnp:
            ax.scatter([c[0] for c in cnp], [c[1] for c in cnp], marker="v", s=36, color=line.get_color(),
                       edgecolors="black", linewidths=0.5, zorder=3)
    top = ax.get_ylim()[1] or 1.0
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, paused) in enumerate(sorted(pfc.items())):
        band = (top * 0.02 * i, top * 0.02)
        spans = [(t / 1e6, interval / 1e6) for t, ns in sorted(paused.items()) if ns]
        ax.broken_barh(spans, band, facecolors=colors[(i + 3) % len(colors)], alpha=0.6, label=label + " (paused)")
    ax.set_xlabel("time since the first frame (ms)")
    ax.set_ylabel("goodput (Gb/s)")
    ax.set_title("Goodput per flow, %g us intervals; CNPs marked, PFC pauses shaded" % (interval / 1e3))
    ax.grid(True, alpha=0.3)
    if chosen or pfc:
        ax.legend(fontsize="small", loc="upper right")
    fig.tight_layout()
    save(fig, args.png)


def save(fig, path):
    """Write PATH.tmp and rename it into place, so an interrupted run never
    leaves a truncated PNG; a path that exists and is not a regular file
    (/dev/stdout) is written directly."""
    try:
        direct = not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        direct = False
    if direct:
        fig.savefig(path, dpi=110, format="png")
        return
    tmp = path + ".tmp"
    try:
        fig.savefig(tmp, dpi=110, format="png")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


main()
