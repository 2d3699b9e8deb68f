#!/usr/bin/python3
"""End-to-end fidelity tests of `rdmasim sim`: the dynamics a researcher
relies on, checked through the run's own outputs (summary.json,
rates.csv, messages.csv).

  - ECN marking point: switch ASICs, and HPCC's ns-3 switch
    (SwitchNode::SwitchNotifyDequeue), mark a frame as it leaves its
    queue, on the bytes still queued behind it; marking on arrival makes
    the mark wait through the queue it reports.
"""
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
EXAMPLES = os.path.join(TOP, "examples")
PS = 10**12
MS = 10**9  # picoseconds


def run_sim(config, out, *args, check=True):
    p = subprocess.run([RDMASIM, "sim", config, "--out", out, "--quiet", *args],
                       capture_output=True, text=True, timeout=900)
    if check and p.returncode != 0:
        raise AssertionError(f"rdmasim sim {config} {args}: {p.returncode}\n{p.stderr}")
    return p


def write_config(tmp, text, name="c.yaml"):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def summary(out):
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def table(out, name):
    with open(os.path.join(out, name)) as f:
        return list(csv.DictReader(f))


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def bottleneck(n, stop="20ms", switch="", nic="", starts=None):
    """n senders write 1 GiB each to one receiver through one 100 Gb/s
    switch port, under DCQCN, with PFC as a backstop."""
    starts = starts or ["0us"] * n
    msgs = "".join(f"    - {{src: h{i}, dst: h{n}, size: 1GiB, start: {starts[i]}}}\n"
                   for i in range(n))
    return f"""
seed: 1
payload: none
stop: {stop}
nic: {{{nic}}}
topology:
  switch_defaults:
    shared_buffer: 4MiB
    pfc: {{priorities: [3]}}
    ecn: {{enable: true{switch}}}
  generate: {{kind: star, hosts: {n + 1}, link: {{rate: 100Gbps, delay: 1us}}}}
workload:
  messages:
{msgs}"""


def windows(rates, width=MS):
    """Aggregate throughput (bits/s) of every `width` window, in order."""
    tput, samples = collections.defaultdict(float), collections.defaultdict(set)
    for r in rates:
        t = int(r["time_ps"])
        w = (t - 1) // width
        tput[w] += float(r["throughput_bps"])
        samples[w].add(t)
    return [tput[w] / len(samples[w]) for w in sorted(tput)]


class EcnMarkingPoint(unittest.TestCase):
    """Two flows start together on a 100 Gb/s bottleneck. Marked at
    dequeue, DCQCN hears of the queue as it is and the link stays busy;
    marked at enqueue, every mark is as old as the queue it crossed, the
    senders keep cutting while the queue drains, and the link idles for
    milliseconds."""

    def run_mark(self, tmp, mark):
        cfg = write_config(tmp, bottleneck(2, stop="10ms"))
        out = os.path.join(tmp, mark)
        args = () if mark == "default" else ("--set", f"topology.switch_defaults.ecn.mark={mark}")
        run_sim(cfg, out, *args)
        return summary(out), windows(table(out, "rates.csv"))

    def test_dequeue_keeps_the_link_busy_and_is_the_default(self):
        with tempfile.TemporaryDirectory() as tmp:
            s_def, w_def = self.run_mark(tmp, "default")
            s_deq, w_deq = self.run_mark(tmp, "dequeue")
            s_enq, w_enq = self.run_mark(tmp, "enqueue")
        self.assertEqual(w_def, w_deq)
        self.assertEqual(s_def["fabric"]["ecn_marked"], s_deq["fabric"]["ecn_marked"])
        rate = 100e9
        # every millisecond after the first
        self.assertGreaterEqual(min(w_deq[1:]), 0.85 * rate, w_deq)
        self.assertLess(min(w_enq[1:]), 0.6 * rate, w_enq)
        for s in (s_deq, s_enq):
            self.assertGreater(s["fabric"]["ecn_marked"], 0)
            self.assertEqual(s["totals"]["tail_drops"], 0)
            # marks are made and counted at the switch's port to the receiver
            port = next(p for p in s["ports"] if p["peer"] == "h2-0")
            self.assertEqual(port["ecn_marked"], s["fabric"]["ecn_marked"])

    def test_unknown_marking_point_is_refused_at_its_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, bottleneck(2, switch=", mark: arrival"))
            p = subprocess.run([RDMASIM, "sim", "--check", cfg], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("c.yaml:10:", p.stderr)
        self.assertIn("ecn mark: 'arrival' is not one of dequeue, enqueue", p.stderr)


if __name__ == "__main__":
    unittest.main()
