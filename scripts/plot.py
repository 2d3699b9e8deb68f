#!/usr/bin/python3
"""Plot a run of `rdmasim sim --out DIR` as PNG files in DIR (or --to), all
on the run's time axis (0 to its end in summary.json):

  qlen.png      bytes queued at the busiest switch ports, each named by
                the port and the port at the other end of its link (qlen.csv)
  rates.png     each data-sending queue pair's DCQCN rate, and its
                throughput averaged over a hundredth of the run (rates.csv);
                queue pairs that only acknowledge are left out
  pauses.png    when each port was pausing its peer, per priority (pfc.csv):
                from an XOFF until the XON, or until the last XOFF's pause
                time ran out
  slowdown.png  completion time over the ideal by message size: p50, p95
                and p99 of groups of about equal counts (messages.csv)

A panel without data says so. `rdmasim report DIR` draws the same as one
HTML page.

usage: plot.py DIR [--to OUTDIR] [--ports N] [--flows N]
"""
import argparse
import collections
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

US = 1e6  # picoseconds per microsecond


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def colour(i):
    """Ten distinct colours, then hues a golden angle apart."""
    if i < 10:
        return plt.get_cmap("tab10")(i)
    return matplotlib.colors.hsv_to_rgb(((i * 0.381966) % 1, 0.7, 0.8))


def nice(x):
    """1, 2 or 5 times a power of ten, at least x."""
    p = 10 ** math.floor(math.log10(x))
    return next(m * p for m in (1, 2, 5, 10) if m * p >= x)


def save(fig, out, legend_ax=None):
    """Lay the figure out (with a legend on legend_ax) and write it as a PNG
    under a temporary name, renamed to out once complete."""
    if legend_ax is not None and legend_ax.get_legend_handles_labels()[0]:
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


def no_data(ax, why):
    ax.text(0.5, 0.5, "no data: " + why, transform=ax.transAxes, ha="center", va="center",
            color="grey", fontsize="large")


def time_axis(ax, end):
    ax.set_xlim(0, end / US)
    ax.set_xlabel("time (us)")


def plot_qlen(data, peers, end, out, nports):
    series = collections.defaultdict(lambda: [(0.0, 0.0)])
    peak = collections.Counter()
    for r in data:
        series[r["port"]].append((int(r["time_ps"]) / US, int(r["total_bytes"]) / 1e3))
        peak[r["port"]] = max(peak[r["port"]], int(r["total_bytes"]))
    fig, ax = plt.subplots(figsize=(10, 5))
    busiest = [p for p, v in peak.most_common(nports) if v]
    for i, port in enumerate(busiest):
        pts = series[port] + [(end / US, series[port][-1][1])]
        ax.step([t for t, _ in pts], [v for _, v in pts], where="post", color=colour(i),
                label=f"{port} → {peers.get(port, '?')}")
    if not busiest:
        no_data(ax, "no switch queue held anything (or monitor.sample is off)")
    time_axis(ax, end)
    ax.set_ylabel("queue (KB)")
    ax.set_title("Bytes queued at the busiest switch ports (port → the other end of its link)")
    save(fig, out, ax)


def data_directions(messages):
    """(src, dst) of every flow that carries message data: a READ's data
    goes from its destination back to its source."""
    return {(m["dst"], m["src"]) if m["op"] == "read" else (m["src"], m["dst"]) for m in messages}


def plot_rates(data, directions, end, out, nflows):
    flows = collections.defaultdict(list)
    volume = collections.Counter()
    for r in data:
        if (r["src"], r["dst"]) not in directions:
            continue  # acknowledgements only
        key = f"{r['src']} → {r['dst']} qpn {r['qpn']}"
        flows[key].append((int(r["time_ps"]), float(r["rate_bps"]) / 1e9, float(r["throughput_bps"])))
        volume[key] += float(r["throughput_bps"])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    interval = nice(max(end, 1) / 100)
    times = sorted({int(r["time_ps"]) for r in data})
    sample = min((b - a for a, b in zip(times, times[1:])), default=times[0] if times else 1)
    for i, (key, _) in enumerate(volume.most_common(nflows)):
        pts = flows[key]
        top.step([t / US for t, _, _ in pts], [r for _, r, _ in pts], where="post", color=colour(i),
                 label=key)
        # each sample's bytes (its throughput over one sample period),
        # summed into intervals
        bins = collections.Counter()
        for t, _, thr in pts:
            bins[(t - 1) // interval] += thr * sample / 8e12
        n = max(bins) + 1
        xs = [k * interval / US for k in range(n + 1)]
        ys = [bins[k] * 8 / interval * 1e3 for k in range(n)]  # bytes per interval of ps -> Gb/s
        bottom.step(xs, ys + ys[-1:], where="post", color=colour(i))
    if not volume:
        for ax in (top, bottom):
            no_data(ax, "no queue pair sent data (or monitor.sample is off)")
    time_axis(bottom, end)
    top.set_ylabel("DCQCN rate (Gb/s)")
    top.set_title("Per data-sending queue pair: rate limit, and throughput averaged over "
                  f"{interval / US:g} us")
    bottom.set_ylabel("throughput (Gb/s)")
    save(fig, out, top)


def pause_intervals(data):
    """(port, peer, priority) -> [(start, end)] in us, from the sender's rows."""
    open_at, until, out = {}, {}, collections.defaultdict(list)
    for r in data:
        key = (r["port"], r["peer"], int(r["priority"]))
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


def plot_pauses(data, end, out):
    spans = pause_intervals(data)
    keys = sorted(spans)
    fig, ax = plt.subplots(figsize=(10, max(2.5, 0.3 * len(keys) + 1)))
    for i, key in enumerate(keys):
        ax.broken_barh([(a, b - a) for a, b in spans[key]], (i - 0.4, 0.8), color=colour(3))
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels([f"{p} → {q} prio {c}" for p, q, c in keys], fontsize="small")
    if not keys:
        no_data(ax, "no port paused its peer")
    time_axis(ax, end)
    ax.set_title("PFC: when each port paused its peer")
    save(fig, out)


def slowdown_groups(messages, most=20):
    """[(largest size, [p50, p95, p99])] over groups of completed messages
    of about equal counts, one size never split; one group per size when
    there are few sizes."""
    done = sorted((int(m["bytes"]), float(m["slowdown"])) for m in messages
                  if m["status"] == "ok" and m["slowdown"])
    sizes = len({s for s, _ in done})
    per = math.ceil(len(done) / max(1, min(most, sizes)))
    groups, cur = [], []
    for i, (size, slow) in enumerate(done):
        cur.append(slow)
        if i + 1 == len(done) or (done[i + 1][0] != size and (sizes <= most or len(cur) >= per)):
            cur.sort()
            groups.append((size, [cur[min(len(cur) - 1, math.ceil(len(cur) * q / 100) - 1)]
                                  for q in (50, 95, 99)]))
            cur = []
    return groups


def size_name(n):
    for unit, m in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 1024)):
        if n >= m:
            return f"{n / m:g} {unit}"
    return f"{n} B"


def plot_slowdown(messages, out):
    groups = slowdown_groups(messages)
    fig, ax = plt.subplots(figsize=(10, 5))
    for k, name in enumerate(("p50", "p95", "p99")):
        ax.plot(range(len(groups)), [g[1][k] for g in groups], marker="o", color=colour(k), label=name)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([size_name(s) for s, _ in groups], fontsize="small", rotation=30)
    if not groups:
        no_data(ax, "no message completed with an ideal time")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("message size (largest in the group)")
    ax.set_ylabel("slowdown (completion time / ideal)")
    ax.set_title("Message completion time: slowdown by size")
    save(fig, out, ax)


def main():
    ap = argparse.ArgumentParser(description="Plot queues, per-QP rates, PFC pauses and slowdown of a run.")
    ap.add_argument("dir", help="the --out directory of rdmasim sim")
    ap.add_argument("--to", help="where to write the PNG files (default: DIR)")
    ap.add_argument("--ports", type=int, default=6, help="busiest ports to show (default 6)")
    ap.add_argument("--flows", type=int, default=16, help="largest flows to show (default 16)")
    args = ap.parse_args()
    to = args.to or args.dir
    os.makedirs(to, exist_ok=True)
    try:
        with open(os.path.join(args.dir, "summary.json")) as f:
            end = json.load(f)["totals"]["end_time_ps"] or 1
        messages = rows(os.path.join(args.dir, "messages.csv"))
        peers = {p["port"]: p["peer"] for p in rows(os.path.join(args.dir, "ports.csv"))}
        qlen = rows(os.path.join(args.dir, "qlen.csv"))
        rates = rows(os.path.join(args.dir, "rates.csv"))
        pfc = rows(os.path.join(args.dir, "pfc.csv"))
    except (OSError, ValueError, KeyError) as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    plot_qlen(qlen, peers, end, os.path.join(to, "qlen.png"), args.ports)
    plot_rates(rates, data_directions(messages), end, os.path.join(to, "rates.png"), args.flows)
    plot_pauses(pfc, end, os.path.join(to, "pauses.png"))
    plot_slowdown(messages, os.path.join(to, "slowdown.png"))
    for name in ("qlen.png", "rates.png", "pauses.png", "slowdown.png"):
        print(os.path.join(to, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
