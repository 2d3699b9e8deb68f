#!/usr/bin/python3
"""How the simulator scales with the fabric: set-up time, events per CPU
second and peak memory on k-ary fat-trees running the shift permutation of
docs/performance.md (bench/fattree_shift.py, routing: dmodk, payload: none).

usage: scaling.py RDMASIM SIZE K... [--plot FILE.png]   (make bench-scale; SIZE: 1MiB)
The sizes take turns, in rounds: each round runs every k, a small one
again and again until the round has given it 0.7 s of CPU (a k=8
run takes a twentieth of a second), so that every k meets the machine's
other work alike and a ratio between two k is taken over the same
moments; at least three rounds, and more while a k has had less than two
seconds of CPU in all (at most twenty). The run's CPU is what the process
measured around its event loop (summary.json's run_cpu_s, with
--wall-time); set-up is the rest of the process's CPU (user + system):
building the network, reading the file, writing the outputs. Events per
second divide a round's events by its run CPU: the best round's, and all
rounds' together (the mean). Prints a Markdown table; with --plot FILE.png
also draws events per second and peak memory against the hosts (Debian's
python3-matplotlib)."""
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fattree_shift import config  # noqa: E402

MIN_ROUNDS, MAX_ROUNDS, MIN_CPU, ROUND_CPU = 3, 20, 2.0, 0.7


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


def plot(path, size, rows):
    """Events per CPU second (best round, all rounds) and peak RSS by hosts,
    both axes logarithmic in hosts; written under a temporary name, then
    renamed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hosts = [r["hosts"] for r in rows]
    fig, (ev, mem) = plt.subplots(1, 2, figsize=(10, 4))
    ev.plot(hosts, [r["best"] for r in rows], "o-", label="best round")
    ev.plot(hosts, [r["mean"] for r in rows], "s--", label="all rounds")
    ev.set_ylabel("M events per CPU second")
    ev.set_ylim(bottom=0)
    ev.legend(fontsize="small")
    mem.plot(hosts, [r["rss"] for r in rows], "o-")
    mem.set_yscale("log")
    mem.set_ylabel("peak RSS, MiB")
    for ax in (ev, mem):
        ax.set_xscale("log")
        ax.set_xticks(hosts, ["{:,}".format(h) for h in hosts], rotation=30, fontsize="small")
        ax.minorticks_off()
        ax.set_xlabel("hosts (k-ary fat-tree, k = %s)" % ", ".join(str(r["k"]) for r in rows))
        ax.grid(True, alpha=0.3)
    fig.suptitle("shift permutation, %s a flow, dmodk, payload: none" % size)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)


def main(argv):
    plot_to = None
    if "--plot" in argv:
        i = argv.index("--plot")
        if i + 1 >= len(argv):
            sys.exit("--plot needs a file name")
        plot_to = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 4:
        sys.exit(__doc__.split("\n\n")[1])
    rdmasim, size, ks = argv[1], argv[2], [int(a) for a in argv[3:]]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for k in ks:
            paths[k] = os.path.join(tmp, "shift%d.yaml" % k)
            with open(paths[k], "w") as f:
                f.write(config(k, size))
        # by k: per round, (run CPU, process CPU, events, peak RSS) summed over its runs
        rounds = {k: [] for k in ks}
        while len(rounds[ks[0]]) < MIN_ROUNDS or (
                len(rounds[ks[0]]) < MAX_ROUNDS and min(sum(r[0] for r in rounds[k]) for k in ks) < MIN_CPU):
            for k in ks:
                cpu = process = events = peak = runs = 0
                while cpu < ROUND_CPU:
                    r = run(rdmasim, paths[k], os.path.join(tmp, "out"))
                    cpu, process, events, peak = cpu + r[0], process + r[1], events + r[2], max(peak, r[3])
                    runs += 1
                rounds[k].append((cpu, process, events, peak, runs))
    print("| k | hosts | set-up CPU s | run CPU s (best round, a run) | rounds | runs | events | M events/s (best round) | (all rounds) | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    table = []
    for k in ks:
        best = max(rounds[k], key=lambda r: r[2] / r[0])
        cpu, process, events, runs = (sum(r[i] for r in rounds[k]) for i in (0, 1, 2, 4))
        row = {"k": k, "hosts": k * k * k // 4, "best": best[2] / best[0] / 1e6, "mean": events / cpu / 1e6,
               "rss": max(r[3] for r in rounds[k])}
        table.append(row)
        print("| %d | %d | %.2f | %.3f | %d | %d | %d | %.2f | %.2f | %.0f |"
              % (k, row["hosts"], (process - cpu) / runs, best[0] / best[4], len(rounds[k]), runs,
                 best[2] // best[4], row["best"], row["mean"], row["rss"]),
              flush=True)
    if plot_to:
        plot(plot_to, size, table)


if __name__ == "__main__":
    main(sys.argv)
