#!/usr/bin/python3
"""nic.transport: tcp held to the arithmetic of its host costs
(nic.host_cost, docs/config.md "Plain TCP and host costs"):

* a 64 B write on an idle link takes, beyond the same write with every
  cost zero, exactly the send() system call, the copy of 64 bytes and the
  kernel's processing of two segments (the data at the receiver, the ACK
  at the sender);
* a 64 MiB write is held to the receiving core, which spends the
  kernel's segment work and the application's copy on every segment
  (853 ns + 8960 x 8 / 84 Gb/s: 42 Gb/s, Cai et al.'s one-core figure the
  defaults come from): it ends within tens of microseconds (handshake, slow
  start, the last ACK) after that core's total;
* summary.json's host_cpu counts a send() and a recv() and two copies per
  message, and prices them and the segments the kernels took as the
  defaults say; the RDMA transports count a post and a poll per write;
* the bytes arrive intact (payload: data), writes and sends alike."""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from testlib import RDMASIM, main, seconds  # noqa: E402

PS = 10**12
# the defaults of nic.host_cost (sim/config/load_tcp.c, docs/config.md)
SYSCALL, COPY_RATE, SEGMENT, POST, POLL = 500_000, 84_000_000_000, 853_000, 100_000, 50_000

PAIR = """seed: 3
payload: data
nic: {tcp: {delayed_ack: 1ns}}
topology:
  hosts: [h0, h1]
  links: [{a: h0, b: h1, rate: 100Gbps, delay: 1us}]
workload:
  messages:
    - {src: h0, dst: h1, op: write, size: 64, repeat: 5, interval: 20us}
    - {src: h0, dst: h1, op: send, size: 100000, start: 200us}
"""

LONG = """seed: 1
payload: none
nic: {tcp: {delayed_ack: 20us}}
topology:
  hosts: [h0, h1]
  links: [{a: h0, b: h1, rate: 100Gbps, delay: 1us}]
workload:
  messages:
    - {src: h0, dst: h1, op: write, size: 64MiB}
"""


def copy_ps(n, rate=COPY_RATE):
    return (n * 8 * PS + rate - 1) // rate


class Costs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rdmasim-tcp-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_sim(self, text, *sets):
        cfg = os.path.join(self.tmp, "c.yaml")
        with open(cfg, "w") as f:
            f.write(text)
        out = os.path.join(self.tmp, f"out{len(os.listdir(self.tmp))}")
        args = [RDMASIM, "sim", cfg, "--out", out, "--quiet"]
        for s in sets:
            args += ["--set", s]
        p = subprocess.run(args, capture_output=True, text=True, timeout=seconds(30))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(out, "messages.csv")) as f:
            rows = list(csv.DictReader(f))
        return summary, rows

    def test_small_write_pays_syscall_copy_and_two_segments(self):
        _, costly = self.run_sim(PAIR, "nic.transport=tcp")
        _, free = self.run_sim(PAIR, "nic.transport=tcp", "nic.host_cost.syscall=0ns",
                               "nic.host_cost.segment=0ns", "nic.host_cost.copy_rate=1Tbps")
        extra = SYSCALL + copy_ps(64) + 2 * SEGMENT - copy_ps(64, 10**12)
        # the first write also waits for the handshake; the others are alone
        for a, b in zip(costly[1:5], free[1:5]):
            self.assertEqual(a["op"], "write")
            self.assertEqual(int(a["fct_ps"]) - int(b["fct_ps"]), extra)
        for r in costly:
            self.assertEqual((r["status"], r["data"]), ("ok", "ok"))

    def test_long_write_is_held_to_one_receiving_core(self):
        summary, rows = self.run_sim(LONG, "nic.transport=tcp")
        size, mss = 64 << 20, summary["flows"][0]["path_mtu"]
        self.assertEqual(mss, 8960)
        full, last = divmod(size, mss)
        core = full * (SEGMENT + copy_ps(mss)) + (SEGMENT + copy_ps(last) if last else 0)
        fct = int(rows[0]["fct_ps"])
        # the last segment's copy is not waited for (its ACK goes first);
        # before the first: the handshake and slow start
        self.assertGreaterEqual(fct, core - copy_ps(last or mss))
        self.assertLess(fct - core, 40 * 10**6, (fct, core))
        goodput = size * 8 * PS / fct / 1e9
        one_core = mss * 8 * PS / (SEGMENT + copy_ps(mss)) / 1e9
        self.assertAlmostEqual(one_core, 42.0, places=1)
        self.assertLess(goodput, one_core)
        self.assertGreater(goodput, 0.99 * one_core)
        self.assertEqual(summary["totals"]["retransmitted"], 0)

    def test_host_cpu_counts_and_prices(self):
        summary, rows = self.run_sim(PAIR, "nic.transport=tcp")
        cpu = summary["host_cpu"]
        sizes = [int(r["bytes"]) for r in rows]
        self.assertEqual(cpu["bytes"], sum(sizes))
        self.assertEqual(cpu["syscalls"], 2 * len(rows))
        self.assertEqual(cpu["copied_bytes"], 2 * sum(sizes))
        segs = sum(side["tcp"]["segments_in"] for fl in summary["flows"] for side in fl["sides"])
        self.assertEqual(cpu["segments"], segs)
        self.assertEqual((cpu["posts"], cpu["polls"]), (0, 0))
        self.assertEqual(cpu["cpu_ps"], 2 * len(rows) * SYSCALL + 2 * sum(copy_ps(n) for n in sizes)
                         + segs * SEGMENT)
        for transport in ("roce", "iwarp"):
            summary, rows = self.run_sim(PAIR, f"nic.transport={transport}")
            cpu = summary["host_cpu"]
            # the send consumes a receive: a post and a poll at the responder too
            n = len(rows) + sum(r["op"] == "send" for r in rows)
            self.assertEqual((cpu["posts"], cpu["polls"], cpu["syscalls"], cpu["copied_bytes"]),
                             (n, n, 0, 0), transport)
            self.assertEqual(cpu["cpu_ps"], n * (POST + POLL), transport)
            self.assertTrue(math.isclose(cpu["cpu_ps"] / cpu["bytes"], n * (POST + POLL) / sum(
                int(r["bytes"]) for r in rows)))


if __name__ == "__main__":
    main()
