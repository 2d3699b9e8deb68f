#!/usr/bin/python3
"""Print the PCIe latency breakdown of a run's messages as Markdown tables:
of your own run (DIR, the --out directory of `rdmasim sim` with PCIe
modelled), or of examples/pcie-host-pair.yaml and
examples/pcie-gpudirect.yaml, run here, as README.md shows them.

    scripts/pcie_table.py DIR
    scripts/pcie_table.py [--rdmasim src/rdmasim]

For DIR: one row per source, destination, operation and size, with how
many messages there were, and the median of each column (ns).

Host pairs: latency of a 64-byte WRITE and a 4 KiB READ alone, the rate
of 2000 WRITEs of 256 bytes posted at once, and the goodput of 16 MiB WRITE
and READ. GPU pairs: when 4 KiB and 16 MiB written from GPU to GPU are in
the destination GPU (delivery_ps), and the 4 KiB message's breakdown."""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = ["copy", "doorbell", "wqe_fetch", "payload_read", "wire", "dma_write", "ack",
          "completion"]


def messages(out):
    with open(os.path.join(out, "messages.csv")) as f:
        return list(csv.DictReader(f))


def run(rdmasim, example, out):
    cfg = os.path.join(TOP, "examples", example)
    p = subprocess.run([rdmasim, "sim", cfg, "--out", out, "--quiet"], capture_output=True,
                       text=True)
    if p.returncode:
        sys.exit(f"{cfg}: {p.stderr.strip()}")
    return messages(out)


def median(values):
    values = sorted(values)
    return values[(len(values) - 1) // 2]


def breakdown(rows):
    """Messages grouped by ends, operation and size; the medians of their
    completion, delivery and each step, in nanoseconds."""
    columns = ["fct", "delivery"] + PHASES
    print("| src | dst | op | bytes | messages | " + " | ".join(c + " (ns)" for c in columns) + " |")
    print("|---|---|---|---|---|" + "---|" * len(columns))
    groups = {}
    for r in rows:
        if r["status"] == "ok":
            groups.setdefault((r["src"], r["dst"], r["op"], int(r["bytes"])), []).append(r)
    for (src, dst, op, size), mine in sorted(groups.items()):
        cells = " | ".join(f"{median(int(r[c + '_ps']) for r in mine) / 1e3:.0f}" for c in columns)
        print(f"| {src} | {dst} | {op} | {size} | {len(mine)} | {cells} |")


def us(ps):
    return f"{ps / 1e6:.2f}"


def gbps(size, ps):
    return f"{size * 8 / ps * 1e3:.1f}"


def host_pairs(rows):
    print("| NIC slot | 64 B WRITE latency (µs) | 4 KiB READ latency (µs) | 256 B WRITEs "
          "(M/s) | 16 MiB WRITE (Gb/s) | 16 MiB READ (Gb/s) |")
    print("|---|---|---|---|---|---|")
    for pair in dict.fromkeys(r["src"][:-2] for r in rows):
        mine = [r for r in rows if r["src"] == pair + "-a"]
        small = [r for r in mine if r["bytes"] == "256"]
        first = min(int(r["start_ps"]) for r in small)
        last = max(int(r["end_ps"]) for r in small)
        big = {r["op"]: r for r in mine if r["bytes"] == str(16 << 20)}
        one = {(r["op"], r["bytes"]): r for r in mine}
        gen, width = pair[1], pair[2:]
        print(f"| Gen{gen} {width} | {us(int(one['write', '64']['fct_ps']))} "
              f"| {us(int(one['read', '4096']['fct_ps']))} "
              f"| {len(small) / (last - first) * 1e6:.1f} "
              f"| {gbps(16 << 20, int(big['write']['fct_ps']))} "
              f"| {gbps(16 << 20, int(big['read']['fct_ps']))} |")


def gpu_pairs(rows):
    print("| GPU to GPU | 4 KiB in GPU after (µs) | 16 MiB goodput into GPU (Gb/s) | "
          + " | ".join(p + " (ns)" for p in PHASES) + " |")
    print("|---|---|---|" + "---|" * len(PHASES))
    for pair in dict.fromkeys(r["src"][:-2] for r in rows):
        mine = {int(r["bytes"]): r for r in rows if r["src"] == pair + "-a"}
        small, big = mine[4096], mine[16 << 20]
        lat = int(small["delivery_ps"])
        took = int(big["delivery_ps"])
        parts = " | ".join(f"{int(small[p + '_ps']) / 1e3:.0f}" for p in PHASES)
        print(f"| {pair} | {us(lat)} | {gbps(16 << 20, took)} | {parts} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", help="a run's --out directory (default: run the examples)")
    ap.add_argument("--rdmasim", default=os.environ.get("RDMASIM", os.path.join(TOP, "src", "rdmasim")))
    args = ap.parse_args()
    if args.dir:
        try:
            rows = messages(args.dir)
        except OSError as e:
            sys.exit(f"pcie_table.py: {e}")
        if rows and "delivery_ps" not in rows[0]:
            sys.exit(f"pcie_table.py: {args.dir}: the run did not model PCIe (no breakdown in messages.csv)")
        breakdown(rows)
        return
    with tempfile.TemporaryDirectory() as tmp:
        host_pairs(run(args.rdmasim, "pcie-host-pair.yaml", os.path.join(tmp, "h")))
        print()
        gpu_pairs(run(args.rdmasim, "pcie-gpudirect.yaml", os.path.join(tmp, "g")))


if __name__ == "__main__":
    main()
