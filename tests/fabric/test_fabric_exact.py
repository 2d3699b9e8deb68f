#!/usr/bin/python3
"""Fabric behaviour held to exact or statistically bounded references,
each small enough to run in well under a second: DCQCN's alpha after it
has decayed, a simple switch port whose buffer is exactly one frame,
RED's marking probability between kmin and kmax, equal-cost paths for
the queue pairs of one pair of hosts, and the moment a static PFC XOFF
threshold is reached.

Wire arithmetic: a RoCEv2/IPv4 WRITE frame is 14 + 20 + 8 + 12 (BTH) +
16 (RETH, first packet only) + payload + 4 (ICRC) bytes, and costs 24
more on the wire (preamble and delimiter 8, FCS 4, gap 12), serialized
at the link rate and rounded up to the picosecond."""
import collections
import glob
import math
import os
import subprocess
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import summary, table  # noqa: E402
from testlib import RDMASIM, main, pcap_records, seconds  # noqa: E402

PS, US = 10**12, 10**6
HDR = 14 + 20 + 8 + 12 + 4
FIRST_4K, MIDDLE_4K = HDR + 16 + 4096, HDR + 4096  # 4170 and 4154


def ser(frame_bytes, rate):
    return -(-(frame_bytes + 24) * 8 * PS // rate)


def sim(tmp, text, *args, name="out"):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name)
    p = subprocess.run([RDMASIM, "sim", path, "--out", out, "--quiet", *args],
                       capture_output=True, text=True, timeout=seconds(30))
    if p.returncode != 0:
        raise AssertionError(f"rdmasim sim: exit {p.returncode}\n{p.stderr}")
    return out


class DcqcnAlpha(unittest.TestCase):
    """Alpha starts at 1, and the first CNP leaves it there whatever g is:
    (1 - g) x 1 + g = 1. So g shows only once alpha has decayed. With
    g = 1/4, alpha_timer 10 us and one CNP per queue pair per 1 ms, alpha
    decays by 3/4 every 10 us until it is below the floor (1e-6) where the
    alpha timer stops; the next CNP makes it (1 - g) alpha + g = 0.25
    plus less than 1e-6: rates.csv (1 us samples, six decimals) shows the
    jump within one sample, before the alpha timer runs again.
    The first CNP, with alpha 1, cuts each sender's rate from the line
    rate to exactly RC (1 - alpha/2) = 50 Gb/s and sets the target to the
    old rate, 100 Gb/s: the next sample shows both (the rate timer's first
    increase comes 55 us later)."""

    def test_alpha_rises_by_g_on_a_cnp_after_decay(self):
        g = 0.25
        with tempfile.TemporaryDirectory() as tmp:
            out = sim(tmp, """
seed: 1
payload: none
stop: 3ms
nic:
  dcqcn: {g: 1/4, cnp_interval: 1ms, alpha_timer: 10us}
topology:
  switch_defaults:
    shared_buffer: 4MiB
    pfc: {priorities: [3]}
    ecn: {kmin: 1, kmax: 2, pmax: 1}
  generate: {kind: star, hosts: 3, link: {rate: 100Gbps, delay: 1us}}
monitor: {sample: 1us}
workload:
  messages:
    - {src: h0, dst: h2, size: 64MiB}
    - {src: h1, dst: h2, size: 64MiB}
""")
            rows = table(out, "rates.csv")
        for src in ("h0", "h1"):
            mine = [r for r in rows if r["src"] == src]
            i = next(i for i, r in enumerate(mine) if float(r["rate_bps"]) < 100e9)
            self.assertEqual(float(mine[i - 1]["rate_bps"]), 100e9)
            self.assertEqual((float(mine[i]["rate_bps"]), float(mine[i]["target_bps"])), (50e9, 100e9),
                             f"{src}: the first CNP (alpha 1) must halve the rate")
        prev, jumps = {}, []
        for r in rows:
            a = float(r["alpha"])
            if r["src"] in prev and a > prev[r["src"]]:
                jumps.append((r["src"], prev[r["src"]], a))
            prev[r["src"]] = a
        # a CNP each 1 ms from about 1 ms on, per sender, in 3 ms: two each
        self.assertEqual(sorted(s for s, _, _ in jumps), ["h0", "h0", "h1", "h1"], jumps)
        for src, before, after in jumps:
            self.assertLessEqual(before, 1e-6, "alpha had not decayed to its floor")
            self.assertAlmostEqual(after, (1 - g) * before + g, delta=1e-6,
                                   msg=f"{src}: a CNP took alpha from {before} to {after}, not by g = {g}")


class OneFrameBuffer(unittest.TestCase):
    """A switch without a shared buffer gives each port `buffer` bytes of
    queue; a frame that fits is kept (tail drop only past the buffer).
    Two senders each send one 4 KiB WRITE (one 4170-byte frame) at once
    to one receiver: one frame goes straight out, the other waits in a
    queue of exactly one frame. A buffer of 4170 bytes keeps it; 4169
    drops it once (it is sent again after the timeout and then fits)."""

    def run_buffer(self, tmp, buffer):
        return sim(tmp, f"""
payload: none
nic: {{timeout: 20us}}
topology:
  switches: [{{name: s, buffer: {buffer}}}]
  hosts: [a, b, c]
  links: [{{a: a, b: s}}, {{a: b, b: s}}, {{a: s, b: c}}]
workload:
  messages:
    - {{src: a, dst: c, op: write, size: 4096}}
    - {{src: b, dst: c, op: write, size: 4096}}
""", name=f"b{buffer}")

    def test_a_frame_that_fits_exactly_is_kept(self):
        with tempfile.TemporaryDirectory() as tmp:
            exact = self.run_buffer(tmp, FIRST_4K)
            short = self.run_buffer(tmp, FIRST_4K - 1)
            ports = {p["port"]: p for p in table(exact, "ports.csv")}
            rows = table(exact, "messages.csv")
            short_ports = {p["port"]: p for p in table(short, "ports.csv")}
        to_c = ports["s-2"]
        self.assertEqual(int(to_c["tail_drops"]), 0, "a frame exactly the size of the buffer was dropped")
        self.assertEqual(int(to_c["max_queue_bytes"]), FIRST_4K)
        self.assertEqual([r["status"] for r in rows], ["ok", "ok"])
        self.assertEqual(sum(int(r["retransmissions"]) for r in rows), 0)
        self.assertEqual(int(short_ports["s-2"]["tail_drops"]), 1)
        self.assertEqual(int(short_ports["s-2"]["max_queue_bytes"]), 0)


class RedBetweenThresholds(unittest.TestCase):
    """RED marks a frame finding q queued bytes with probability
    p(q) = pmax (q - kmin) / (kmax - kmin) between kmin and kmax. Two
    senders each send 128 packets at line rate into one 100 Gb/s port,
    without DCQCN: the frames arrive in pairs, one goes out for every two
    that come, so the frames of the i-th pair find about (i - 1) L and i L
    bytes queued (L = 4154, to within one frame either way, by how ties
    fall; the queue peaks near 128 L, above kmax). The marks counted
    must be the sum of p over those queue depths, within four standard
    deviations of the binomial sampling plus the one-frame uncertainty."""

    KMIN, KMAX, PMAX = 100000, 500000, 0.8

    def p(self, q):
        if q <= self.KMIN:
            return 0.0
        if q >= self.KMAX:
            return 1.0
        return self.PMAX * (q - self.KMIN) / (self.KMAX - self.KMIN)

    def expected(self, shift):
        qs = [max(0, i - 1 + shift) * MIDDLE_4K for i in range(128)] + \
             [max(0, i + shift) * MIDDLE_4K for i in range(128)]
        return sum(map(self.p, qs)), math.sqrt(sum(self.p(q) * (1 - self.p(q)) for q in qs))

    def test_marking_probability_follows_the_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = sim(tmp, f"""
seed: 3
payload: none
nic: {{dcqcn: {{enable: false}}}}
topology:
  switch_defaults:
    buffer: 4MiB
    ecn: {{kmin: {self.KMIN}, kmax: {self.KMAX}, pmax: {self.PMAX}}}
  generate: {{kind: star, hosts: 3, link: {{rate: 100Gbps, delay: 1us}}}}
workload:
  messages:
    - {{src: h0, dst: h2, size: 512KiB}}
    - {{src: h1, dst: h2, size: 512KiB}}
""")
            s = summary(out)
        marked = s["fabric"]["ecn_marked"]
        lo, sd = self.expected(0)
        hi, _ = self.expected(1)
        self.assertGreater(lo, 80)  # most frames lie between the thresholds
        self.assertGreaterEqual(marked, lo - 4 * sd, f"{marked} marks, RED line predicts {lo:.1f} to {hi:.1f}")
        self.assertLessEqual(marked, hi + 4 * sd, f"{marked} marks, RED line predicts {lo:.1f} to {hi:.1f}")


class EcmpOneHostPair(unittest.TestCase):
    """Sixteen queue pairs between the same two hosts, one on each leaf of
    a leaf-spine with four spines: the source port, a hash of the queue
    pair, is the only entropy, so the queue pairs must spread over the
    spines (all in one would happen with probability 4 x 4^-16 for a
    hash that uses it), each queue pair on one spine only."""

    def test_queue_pairs_of_one_host_pair_take_different_spines(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = sim(tmp, """
seed: 1
payload: none
topology:
  generate: {kind: leaf-spine, leaves: 2, spines: 4, hosts_per_leaf: 1}
trace: [spine0, spine1, spine2, spine3]
snaplen: 64
workload:
  messages:
""" + "".join(f"    - {{src: h0, dst: h1, qp: {q}, size: 8KiB}}\n" for q in range(1, 17)))
            where = collections.defaultdict(set)
            for spine in range(4):
                for path in glob.glob(os.path.join(out, "pcap", f"spine{spine}-*.pcap")):
                    for _, f in pcap_records(path):
                        if len(f) > 50 and f[12:14] == b"\x08\x00" and f[23] == 17 \
                                and f[26:30] == bytes([10, 0, 0, 1]):
                            where[f[47:50]].add(spine)  # BTH destination QP
        self.assertEqual(len(where), 16)
        self.assertTrue(all(len(v) == 1 for v in where.values()), where)
        spines = collections.Counter(next(iter(v)) for v in where.values())
        self.assertGreaterEqual(len(spines), 3, f"16 queue pairs of one host pair used spines {dict(spines)}")


class StaticXoff(unittest.TestCase):
    """One sender at 100 Gb/s through a switch to a 25 Gb/s receiver,
    PFC with a static XOFF threshold X for the ingress group's shared
    use. The frames (a 4170-byte first, then 4154) leave the sender back
    to back and reach the switch (cut-through, 300 ns, the defaults) once
    their first 72 wire bytes are in, 1 us and 300 ns later; the egress,
    slower than the ingress, takes one (and frees its
    buffer) when it is idle, every 4 x 100 Gb/s frame times, offset by the
    first frame's extra 16 bytes, so no arrival ties with a departure.
    The group's use after each arrival follows; XOFF must leave the switch
    with the first frame that brings it to X or above, not a frame later
    (the port towards the sender is idle then: its first ACK comes much
    later)."""

    def xoff_time(self, x):
        lens = [FIRST_4K] + [MIDDLE_4K] * 400
        header = -(-72 * 8 * PS // (100 * 10**9))
        arrive, t = [], 0
        for n in lens:
            arrive.append(t + header + US + 300_000)
            t += ser(n, 100 * 10**9)
        take = [arrive[0]]
        for j in range(1, len(lens)):
            take.append(take[-1] + ser(lens[j - 1], 25 * 10**9))
        for n in range(len(lens)):
            used = sum(lens[:n + 1]) - sum(lens[j] for j in range(n + 1) if take[j] <= arrive[n])
            if used >= x:
                return arrive[n], used
        raise AssertionError("X is never reached")

    def test_xoff_goes_with_the_frame_that_reaches_the_threshold(self):
        # X crossed (100000) and X met exactly by the frame that crosses it
        _, exact = self.xoff_time(100000)
        with tempfile.TemporaryDirectory() as tmp:
            for x in (100000, exact):
                out = sim(tmp, f"""
seed: 1
payload: none
nic: {{dcqcn: {{enable: false}}}}
topology:
  switches: [{{name: s, shared_buffer: 2MiB, pfc: {{priorities: [3], xoff: {x}}}}}]
  hosts: [a, b]
  links: [{{a: a, b: s, rate: 100Gbps, delay: 1us}}, {{a: s, b: b, rate: 25Gbps, delay: 1us}}]
workload:
  messages:
    - {{src: a, dst: b, op: write, size: 1MiB}}
""", name=f"x{x}")
                first = next(r for r in table(out, "pfc.csv") if r["event"] == "pause")
                want, _ = self.xoff_time(x)
                self.assertEqual(first["port"], "s-0")
                self.assertEqual(int(first["time_ps"]), want,
                                 f"XOFF at threshold {x}: {int(first['time_ps']) - want} ps late")


if __name__ == "__main__":
    main(default_limit=30)
