#!/usr/bin/python3
"""Collectives (`kind: all-reduce`, `reduce-scatter`, `all-gather` in
workload.generate) run end to end by `rdmasim sim`, against references
computed here:

  * data: with payload: data every step's destination must hold the sums
    (or the forwarded chunk) NCCL's ring would put there; a wrong add, a
    step forwarded from the wrong slice or posted before its data arrived
    shows as a corrupted message;
  * large sizes: a ring moves 2(n-1)/n of the buffer over every rank's
    link (n-1)/n for reduce-scatter and all-gather), so its bus bandwidth
    (nccl-tests, doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n) is bounded
    by the goodput of the slowest link in the ring, RoCEv2 headers
    counted, and should come within 10% of it;
  * small sizes: latency-bound, as the alpha-beta model says: each of the
    ring's steps costs alpha (two propagation delays, the switch's
    forwarding latency and the 72-byte header it waits for before cutting
    through) plus beta x its wire bytes, one frame here."""
import csv
import os
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, table, write_config  # noqa: E402
from testlib import main  # noqa: E402

PS = 10**12
# bytes a RoCEv2 packet adds on an Ethernet wire: preamble, FCS and
# inter-frame gap 24, Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4; a
# WRITE's first packet adds its RETH (16), a WRITE with immediate's last
# its ImmDt (4)
PER_PACKET = 24 + 14 + 20 + 8 + 12 + 4
RETH, IMMDT = 16, 4
MTU = 4096
SWITCH_LATENCY = 300_000  # ps, docs/config.md default
HEADER_WAIT = 72          # bytes a cut-through switch waits for


def wire(size):
    packets = max(1, -(-size // MTU))
    return size + packets * PER_PACKET + RETH + IMMDT


def star(rates, delay="1us"):
    """Hosts on one switch, lossless (PFC) as RoCE fabrics for GPUs run."""
    hosts = [f"h{i}" for i in range(len(rates))]
    links = "\n".join(f"    - {{a: h{i}, b: s0, rate: {r}}}" for i, r in enumerate(rates))
    return (f"seed: 3\nnic: {{mtu: {MTU}}}\ntopology:\n"
            f"  link_defaults: {{delay: {delay}}}\n"
            "  switch_defaults: {shared_buffer: 4MiB, pfc: {priorities: [3]}}\n"
            f"  switches: [s0]\n  hosts: [{', '.join(hosts)}]\n  links:\n{links}\n")


def collectives(out):
    with open(os.path.join(out, "collectives.csv")) as f:
        return list(csv.DictReader(f))


class Collectives(unittest.TestCase):
    def run_config(self, text):
        tmp = tempfile.mkdtemp(prefix="coll-")
        out = os.path.join(tmp, "out")
        run_sim(write_config(tmp, text), out)
        return out

    def test_data_of_every_step(self):
        """Five ranks (chunks of unequal length), slices smaller than a
        chunk, two sizes chained, and all three collectives: every step
        holds what it should."""
        out = self.run_config(star(["100Gbps"] * 5) + """payload: data
workload:
  generate:
    - {kind: all-reduce, sizes: [4004, 300KiB], slice: 64KiB}
    - {kind: reduce-scatter, size: 100KiB, slice: 8KiB, qp: 2}
    - {kind: all-gather, hosts: [h4, h2, h0, h3], size: 100KiB, qp: 3, start: 1ms}
""")
        msgs = table(out, "messages.csv")
        self.assertTrue(msgs)
        self.assertEqual({m["data"] for m in msgs}, {"ok"})
        rows = collectives(out)
        self.assertEqual([r["kind"] for r in rows],
                         ["all-reduce", "all-reduce", "reduce-scatter", "all-gather"])
        # steps x ranks x slices: 2(n-1) x 5 x ceil(61440 / 65536) ...
        self.assertEqual([int(r["messages"]) for r in rows], [8 * 5, 8 * 5 * 1, 4 * 5 * 3, 3 * 4])
        for r in rows:
            self.assertEqual((r["status"], r["data"]), ("ok", "ok"))
        # the second all-reduce starts where the first ended at its ranks
        self.assertGreaterEqual(int(rows[1]["start_ps"]), int(rows[0]["start_ps"]))
        with open(os.path.join(out, "collectives.txt")) as f:
            lines = [ln.split() for ln in f if not ln.startswith("#")]
        self.assertEqual([ln[0] for ln in lines], [r["kind"] for r in rows])
        self.assertEqual({ln[-1] for ln in lines}, {"0"})  # #wrong

    def ring_bound(self, rates_gbps, size, kind="all-reduce"):
        """busbw of one collective against the goodput of the ring's
        slowest link, in GB/s."""
        n = len(rates_gbps)
        out = self.run_config(star([f"{r}Gbps" for r in rates_gbps]) +
                              f"workload:\n  generate: {{kind: {kind}, size: {size}}}\n")
        row = collectives(out)[0]
        msgs = [m for m in table(out, "messages.csv") if m["src"] == "h0"]
        payload = sum(int(m["bytes"]) for m in msgs)
        on_wire = sum(wire(int(m["bytes"])) for m in msgs)
        bound = min(rates_gbps) * 1e9 / 8 * payload / on_wire / 1e9
        factor = 2 * (n - 1) / n if kind == "all-reduce" else (n - 1) / n
        self.assertAlmostEqual(float(row["busbw_GBps"]),
                               float(row["algbw_GBps"]) * factor, places=4)
        return float(row["busbw_GBps"]), bound

    def test_bus_bandwidth_at_the_link_bound(self):
        busbw, bound = self.ring_bound([100] * 4, 64 * 2**20)
        self.assertLessEqual(busbw, bound * 1.0001)
        self.assertGreaterEqual(busbw, 0.9 * bound, f"busbw {busbw:.3f} GB/s, bound {bound:.3f}")

    def test_slowest_link_sets_the_bound(self):
        """h2's link at 50 Gb/s: the ring h1 -> h2 -> h3 crosses it both
        ways, and the whole ring runs at its pace."""
        busbw, bound = self.ring_bound([100, 100, 50, 100], 64 * 2**20)
        self.assertAlmostEqual(bound, 50e9 / 8 * MTU / (MTU + PER_PACKET) / 1e9, delta=0.01)
        self.assertLessEqual(busbw, bound * 1.0001)
        self.assertGreaterEqual(busbw, 0.9 * bound)

    def test_all_gather_bound(self):
        busbw, bound = self.ring_bound([100] * 4, 64 * 2**20, "all-gather")
        self.assertLessEqual(busbw, bound * 1.0001)
        self.assertGreaterEqual(busbw, 0.9 * bound)

    def test_broadcast_and_alltoall(self):
        """Broadcast down a chain from the first host listed (bus bandwidth
        = algorithm bandwidth) and alltoall (each rank's link carries
        (n-1)/n of its buffer), data checked, both within 10% of the
        link's goodput."""
        out = self.run_config(star(["100Gbps"] * 4) + """payload: data
workload:
  generate:
    - {kind: broadcast, hosts: [h2, h0, h3, h1], size: 16MiB}
    - {kind: alltoall, size: 16MiB, qp: 2, start: 5ms}
""")
        self.assertEqual({m["data"] for m in table(out, "messages.csv")}, {"ok"})
        bound = 100e9 / 8 * MTU / (MTU + PER_PACKET) / 1e9
        for row in collectives(out):
            with self.subTest(kind=row["kind"]):
                self.assertEqual(row["data"], "ok")
                busbw = float(row["busbw_GBps"])
                factor = 1 if row["kind"] == "broadcast" else 3 / 4
                self.assertAlmostEqual(busbw, float(row["algbw_GBps"]) * factor, places=4)
                self.assertLessEqual(busbw, bound)
                self.assertGreaterEqual(busbw, 0.9 * bound)
        # the chain starts at h2: it sends, h1 at the end only receives
        senders = {m["src"] for m in table(out, "messages.csv") if m["qp"] == "1"}
        self.assertEqual(senders, {"h2", "h0", "h3"})

    def test_over_infiniband(self):
        """The same steps over native InfiniBand: the transport changes
        below the queue pairs, the data and the ring do not."""
        out = self.run_config("""seed: 1
payload: data
topology:
  fabric: infiniband
  generate: {kind: star, hosts: 4, link: {rate: 4xEDR}}
workload:
  generate: {kind: all-reduce, size: 1MiB, slice: 128KiB}
""")
        row = collectives(out)[0]
        self.assertEqual((row["status"], row["data"]), ("ok", "ok"))
        self.assertLess(float(row["busbw_GBps"]), 100e9 / 8 / 1e9)  # 4xEDR: 100 Gb/s of data

    def test_small_sizes_alpha_beta(self):
        """4 KiB over four ranks: six steps of one 1 KiB frame each,
        t = 2(n-1) x (alpha + beta x wire bytes)."""
        n, rate, delay = 4, 100e9, 1_000_000
        out = self.run_config(star(["100Gbps"] * n) +
                              "workload:\n  generate: {kind: all-reduce, sizes: [4KiB, 16KiB]}\n")
        rows = collectives(out)
        for row, size in zip(rows, (4096, 16384)):
            chunk = size // n
            alpha = 2 * delay + SWITCH_LATENCY + HEADER_WAIT * 8 / rate * PS
            beta = wire(chunk) * 8 / rate * PS
            want = 2 * (n - 1) * (alpha + beta)
            got = int(row["time_ps"])
            self.assertAlmostEqual(got / want, 1, delta=0.02, msg=f"{size} B: {got} ps, model {want:.0f}")
        # latency-bound: four times the data, far less than four times the time
        self.assertLess(int(rows[1]["time_ps"]) / int(rows[0]["time_ps"]), 1.5)


if __name__ == "__main__":
    main()
