#!/usr/bin/python3
"""Plot a run of `rdmasim sim --out DIR` as PNG files in DIR (or --to):

  qlen.png    queue depth over time of the busiest switch ports, per class
              (qlen.csv)
  rates.png   each queue pair's DCQCN rate and measured throughput over
              time (rates.csv)
  pauses.png  when each port was pausing its peer, per priority (pfc.csv):
              from an XOFF until the XON, or until the last XOFF's pause
              time ran out

usage: plot.py DIR [--to OUTDIR] [--ports N] [--flows N]
"""
import argparse
import collections
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

US = 1e6  # picoseconds per microsecond


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def save(fig, out, legend_ax=None):
    """Lay the figure out (with a legend on legend_ax) and write it as a PNG
    under a temporary name, renamed to out once complete."""
    if legend_ax is not None:
        legend_ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    tmp = out + ".tmp"
    try:
        fig.savefig(tmp, format="png")
        os.replace(tmp, out)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)


def plot_qlen(data, out, nports):
    classes = [k for k in data[0] if k.startswith("tc")] if data else []
    series = collections.defaultdict(lambda: collections.defaultdict(list))
    peak = collections.Counter()
    for r in data:
        t = int(r["time_ps"]) / US
        for c in classes:
            series[r["port"]][c].append((t, int(r[c]) / 1e3))
        peak[r["port"]] = max(peak[r["port"]], int(r["total_bytes"]))
    fig, ax = plt.subplots(figsize=(10, 5))
    for port, _ in peak.most_common(nports):
        for c in classes:
            pts = series[port][c]
            if any(v for _, v in pts):
                ax.step([t for t, _ in pts], [v for _, v in pts], where="post", label=f"{port} {c}")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("queue (KB)")
    ax.set_title("Queue depth of the busiest ports, per traffic class")
    save(fig, out, ax if peak else None)


def plot_rates(data, out, nflows):
    flows = collections.defaultdict(list)
    volume = collections.Counter()
    for r in data:
        key = f"{r['src']}->{r['dst']} qpn {r['qpn']}"
        flows[key].append((int(r["time_ps"]) / US, float(r["rate_bps"]) / 1e9,
                           float(r["throughput_bps"]) / 1e9))
        volume[key] += float(r["throughput_bps"])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for key, _ in volume.most_common(nflows):
        pts = flows[key]
        line, = top.step([p[0] for p in pts], [p[1] for p in pts], where="post", label=key)
        bottom.plot([p[0] for p in pts], [p[2] for p in pts], color=line.get_color())
    top.set_ylabel("DCQCN rate (Gb/s)")
    top.set_title("Per queue pair: rate limit and measured throughput")
    bottom.set_ylabel("throughput (Gb/s)")
    bottom.set_xlabel("time (us)")
    save(fig, out, top if volume else None)


def pause_intervals(data):
    """(port, priority) -> [(start, end)] in us, from the sender's rows."""
    open_at, until, out = {}, {}, collections.defaultdict(list)
    for r in data:
        key = (r["port"], int(r["priority"]))
        t, event = int(r["time_ps"]), r["event"]
        if event in ("pause", "refresh"):
            if key in open_at and t > until[key]:  # the last pause ran out first
                out[key].append((open_at.pop(key), until[key]))
            open_at.setdefault(key, t)
            until[key] = t + int(r["duration_ps"])
        elif event == "resume" and key in open_at:
            out[key].append((open_at.pop(key), min(t, until[key])))
    for key, start in open_at.items():
        out[key].append((start, until[key]))
    return {k: [(a / US, b / US) for a, b in v] for k, v in out.items()}


def plot_pauses(data, out):
    spans = pause_intervals(data)
    keys = sorted(spans)
    fig, ax = plt.subplots(figsize=(10, max(2.5, 0.3 * len(keys) + 1)))
    for i, key in enumerate(keys):
        ax.broken_barh([(a, b - a) for a, b in spans[key]], (i - 0.4, 0.8))
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels([f"{p} prio {c}" for p, c in keys], fontsize="small")
    ax.set_xlabel("time (us)")
    ax.set_title("PFC: when each port paused its peer")
    save(fig, out)


def main():
    ap = argparse.ArgumentParser(description="Plot queue depth, per-QP rate and PFC pauses of a run.")
    ap.add_argument("dir", help="the --out directory of rdmasim sim")
    ap.add_argument("--to", help="where to write the PNG files (default: DIR)")
    ap.add_argument("--ports", type=int, default=6, help="busiest ports to show (default 6)")
    ap.add_argument("--flows", type=int, default=16, help="largest flows to show (default 16)")
    args = ap.parse_args()
    to = args.to or args.dir
    os.makedirs(to, exist_ok=True)
    try:
        qlen = rows(os.path.join(args.dir, "qlen.csv"))
        rates = rows(os.path.join(args.dir, "rates.csv"))
        pfc = rows(os.path.join(args.dir, "pfc.csv"))
    except OSError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    plot_qlen(qlen, os.path.join(to, "qlen.png"), args.ports)
    plot_rates(rates, os.path.join(to, "rates.png"), args.flows)
    plot_pauses(pfc, os.path.join(to, "pauses.png"))
    for name in ("qlen.png", "rates.png", "pauses.png"):
        print(os.path.join(to, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
