#!/usr/bin/python3
"""End-to-end fidelity tests of `rdmasim sim`: the dynamics a researcher
relies on, checked through the run's own outputs (summary.json,
rates.csv, messages.csv).

  - ECN marking point: switch ASICs, and HPCC's ns-3 switch
    (SwitchNode::SwitchNotifyDequeue), mark a frame as it leaves its
    queue, on the bytes still queued behind it; marking on arrival makes
    the mark wait through the queue it reports.
  - Timers: the default retransmission timeout is the IBA local ACK
    timeout code 14 (4.096 us x 2^14) that rdma-core's rc_pingpong and
    perftest set; it must not fire while nothing is lost, and when a
    shorter one does, summary.json counts it and says so.
  - Routing: on a k-ary fat-tree a shift permutation (host i -> i + n/2)
    under destination-mod-k routing puts one flow on every link, so each
    message completes in its analytic time alone on the network: store
    and forward over h equal-rate hops, sum(frames) + (h - 1) x largest
    frame, plus h propagation delays, then the ACK back (cut-through
    switches: sum(frames) + (h - 1) x header time).
  - Latencies: switches forward after their port-to-port latency, from
    the header (cut-through, the default) or the whole frame; NICs add
    their transmit and receive pipelines; messages.csv's ideal time
    includes them, and so does the analytic time here.
"""
import collections
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
EXAMPLES = os.path.join(TOP, "examples")
sys.path.insert(0, os.path.join(TOP, "tests"))
import sim_checks  # noqa: E402
from sim_checks import summary, table, write_config  # noqa: E402
from testlib import main, seconds  # noqa: E402
sys.path.insert(0, os.path.join(TOP, "scripts"))
import validate  # noqa: E402  (the bottleneck measures make validate reports)
from validate import jain  # noqa: E402


def run_sim(config, out, *args, check=True):
    """As sim_checks.run_sim, with room for the 8-flow and fat-tree runs."""
    return sim_checks.run_sim(config, out, *args, check=check, timeout=900)
PS = 10**12
MS = 10**9  # picoseconds


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


def windows(out, n, width=MS):
    """Throughput (bits/s, wire bytes) out of the bottleneck port (s0-n,
    towards the receiver hn) in every `width` window, in order, measured
    as make validate measures it."""
    return validate.windows(table(out, "rates.csv"), table(out, "qlen.csv"), n, width)


class EcnMarkingPoint(unittest.TestCase):
    """Two flows start together on a 100 Gb/s bottleneck, under DCQCN as
    its paper states it (clamp_target: every CNP sets the target rate to
    the current one). Marked at dequeue, DCQCN hears of the queue as it is
    and the link stays busy; marked at enqueue, every mark is as old as the
    queue it crossed, the senders keep cutting while the queue drains, and
    the link idles for milliseconds."""

    def run_mark(self, tmp, mark):
        cfg = write_config(tmp, bottleneck(2, stop="10ms", nic="dcqcn: {clamp_target: true}"))
        out = os.path.join(tmp, mark)
        args = () if mark == "default" else ("--set", f"topology.switch_defaults.ecn.mark={mark}")
        run_sim(cfg, out, *args)
        return summary(out), windows(out, 2)

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


class CongestionControl(unittest.TestCase):
    """2, 4 and 8 flows start together on a 100 Gb/s bottleneck for 20 ms,
    under DCQCN and under DCTCP (issue 13's criterion): throughput out of
    the bottleneck at least 90% of line rate in every 1 ms window after
    the first, a Jain index of at least 0.95 over the second half, nothing
    retransmitted. DCQCN's paper rule for the target rate (clamp_target:
    true) cuts the target with every CNP of the first congestion episode
    and does not meet it; nor do NVIDIA's ConnectX defaults, whose 8 flows
    do not converge."""

    def run_flows(self, tmp, n, *args):
        cfg = write_config(tmp, bottleneck(n), f"{n}.yaml")
        out = os.path.join(tmp, f"out{n}" + "".join(a.replace("=", "").replace(".", "") for a in args))
        run_sim(cfg, out, *args)
        per = collections.defaultdict(float)
        for r in table(out, "rates.csv"):
            if int(r["time_ps"]) > 10 * MS and r["dst"] == f"h{n}":
                per[r["src"]] += float(r["throughput_bps"])
        return summary(out), windows(out, n), list(per.values())

    def test_two_four_and_eight_flows(self):
        with tempfile.TemporaryDirectory() as tmp:
            for n, cc in ((2, "dcqcn"), (4, "dcqcn"), (8, "dcqcn"), (2, "dctcp"), (4, "dctcp"), (8, "dctcp")):
                with self.subTest(flows=n, cc=cc):
                    s, w, per = self.run_flows(tmp, n, "--set", f"nic.cc={cc}")
                    self.assertEqual(len(w), 20)
                    self.assertGreaterEqual(min(w[1:]), 0.9 * 100e9, w)
                    self.assertEqual(len(per), n)
                    # The criterion at the configured seed and two more:
                    # which of two frames that meet at a switch in the same
                    # picosecond goes first is a draw (engine.c), and the
                    # shares DCQCN's first congestion episode leaves depend
                    # on it (docs/validation.md)
                    idx = [jain(per)] + [jain(self.run_flows(tmp, n, "--set", f"nic.cc={cc}",
                                                             "--seed", str(seed))[2])
                                         for seed in (2, 3)]
                    self.assertGreaterEqual(min(idx), 0.95, idx)
                    self.assertEqual(s["totals"]["retransmitted"], 0)
                    self.assertGreater(s["fabric"]["rate_cuts"], 0)
                    self.assertEqual(s["fabric"]["cnps_sent"], 0 if cc == "dctcp" else s["fabric"]["cnps_sent"])
            s, w, _ = self.run_flows(tmp, 4, "--set", "nic.dcqcn.clamp_target=true")
            self.assertLess(min(w[1:]), 0.5 * 100e9, w)

    def test_increases_are_a_thousandth_and_a_two_hundredth_of_the_line_rate(self):
        """R_AI and R_HAI default to the paper's 40 and 200 Mb/s scaled with
        the link: 100 and 500 Mb/s at 100 Gb/s, 40 and 200 at the paper's
        40 Gb/s. A byte counter of 64 KB and F = 1 bring the hyper stage
        within 3 ms, so both increases show in the rates."""
        def rates(tmp, rate, *args):
            nic = "dcqcn: {byte_counter: 64KB, f: 1}"
            cfg = write_config(tmp, bottleneck(2, stop="3ms", nic=nic).replace(
                "rate: 100Gbps", f"rate: {rate}"), f"{rate}.yaml")
            out = os.path.join(tmp, rate + "".join(args).replace("=", "").replace(".", ""))
            run_sim(cfg, out, *args)
            with open(os.path.join(out, "rates.csv")) as f:
                return f.read()
        with tempfile.TemporaryDirectory() as tmp:
            for rate, rai, rhai in (("100Gbps", "100Mbps", "500Mbps"), ("40Gbps", "40Mbps", "200Mbps")):
                with self.subTest(rate=rate):
                    auto = rates(tmp, rate)
                    self.assertEqual(auto, rates(tmp, rate, "--set", f"nic.dcqcn.rai={rai}",
                                                 "--set", f"nic.dcqcn.rhai={rhai}"))
                    self.assertNotEqual(auto, rates(tmp, rate, "--set", f"nic.dcqcn.rai={rai}",
                                                    "--set", "nic.dcqcn.rhai=1Gbps"))
                    self.assertNotEqual(auto, rates(tmp, rate, "--set", "nic.dcqcn.rai=1Gbps",
                                                    "--set", f"nic.dcqcn.rhai={rhai}"))

    def test_a_cut_after_a_byte_counter_step_sets_the_target(self):
        """NVIDIA documents that a CNP sets the target rate to the current
        rate when the rate was raised since the last cut by the byte
        counter, and with clamp_tgt_rate_after_time_inc (default 1) by the
        timer too. With ConnectX's defaults (32767-byte counter, 300 us
        timer) a flow cut every few tens of microseconds never sees its
        timer expire, only byte counter steps: were those left out, the
        target would stay at line rate while the rate sat far below it
        (it did: 100 Gb/s targets at every sample, two of four flows
        held near 0.4 Gb/s)."""
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, bottleneck(4, stop="5ms", nic=f"dcqcn: {{{validate.CONNECTX}}}"))
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            slow = [r for r in table(out, "rates.csv")
                    if int(r["time_ps"]) > MS and r["dst"] == "h4" and float(r["rate_bps"]) < 0.9 * 100e9]
            self.assertGreater(len(slow), 0)
            for r in slow:
                self.assertLess(float(r["target_bps"]), 0.999 * 100e9, r)

    def test_connectx_defaults_keep_the_link_busy_but_do_not_converge(self):
        """What docs/config.md and docs/validation.md say of NVIDIA's
        ConnectX defaults, and why they are not the defaults: 8 flows keep
        the bottleneck above 90% but keep the shares the first
        milliseconds left (a byte counter step every 32767 bytes makes the
        increase proportional to the rate, as the cuts are)."""
        with tempfile.TemporaryDirectory() as tmp:
            s, w, per = self.run_flows(tmp, 8, *validate.CONNECTX_SET)
            self.assertGreaterEqual(min(w[1:]), 0.9 * 100e9, w)
            self.assertEqual(s["totals"]["retransmitted"], 0)
            self.assertLess(jain(per), 0.8, per)

    def test_a_flow_joining_keeps_the_link_busy(self):
        """Three flows share the bottleneck; a fourth joins at 10 ms."""
        with tempfile.TemporaryDirectory() as tmp:
            for cc in ("dcqcn", "dctcp"):
                with self.subTest(cc=cc):
                    cfg = write_config(tmp, bottleneck(4, stop="30ms", starts=["0us"] * 3 + ["10ms"]),
                                       f"join{cc}.yaml")
                    out = os.path.join(tmp, f"join{cc}")
                    run_sim(cfg, out, "--set", f"nic.cc={cc}")
                    w = windows(out, 4)
                    self.assertEqual(len(w), 30)
                    self.assertGreaterEqual(min(w[1:]), 0.9 * 100e9, w)
                    self.assertEqual(summary(out)["totals"]["retransmitted"], 0)


def rate_series(out, src):
    """(time, rate) of the queue pair src sends requests on, from rates.csv."""
    return [(int(r["time_ps"]), float(r["rate_bps"])) for r in table(out, "rates.csv") if r["src"] == src]


class Timely(unittest.TestCase):
    """TIMELY with its paper's parameters and delta at 0.1% of the line
    rate (100 Mb/s at 100 Gb/s, as HPCC's ns-3 run.py sets it): alone on a
    link its RTT stays under T_low and it keeps line rate; 2, 4 and 8 flows
    sharing a bottleneck cut on delay alone (no CNP), meet issue 13's
    criterion and resend nothing, and so does the paper's delta for 10 Gb/s
    NICs (docs/validation.md)."""

    def run_flows(self, tmp, n, *args, stop="20ms"):
        cfg = write_config(tmp, bottleneck(n, stop=stop, nic="cc: timely"), f"{n}.yaml")
        out = os.path.join(tmp, f"out{n}" + "".join(a.replace("=", "").replace(".", "") for a in args))
        run_sim(cfg, out, *args)
        return out

    def test_alone_keeps_line_rate(self):
        with tempfile.TemporaryDirectory() as tmp:
            one = summary(self.run_flows(tmp, 1, stop="2ms"))
        self.assertEqual(one["fabric"]["rate_cuts"], 0)

    def test_two_four_and_eight_flows(self):
        with tempfile.TemporaryDirectory() as tmp:
            for n, args in [(n, a) for a in ((), validate.TIMELY_10G) for n in (2, 4, 8)]:
                with self.subTest(flows=n, args=args):
                    out = self.run_flows(tmp, n, *args)
                    s, w = summary(out), windows(out, n)
                    per = collections.defaultdict(float)
                    for r in table(out, "rates.csv"):
                        if int(r["time_ps"]) > 10 * MS and r["dst"] == f"h{n}":
                            per[r["src"]] += float(r["throughput_bps"])
                    self.assertEqual(len(w), 20)
                    self.assertGreaterEqual(min(w[1:]), 0.9 * 100e9, w)
                    self.assertGreaterEqual(jain(list(per.values())), 0.95, per)
                    self.assertEqual(s["totals"]["retransmitted"], 0)
                    self.assertEqual(s["fabric"]["cnps_sent"], 0)
                    self.assertGreater(s["fabric"]["rate_cuts"], 0)

    def test_a_cut_takes_at_most_half_the_rate(self):
        """Eight senders at line rate: the queue grows at 7 x 100 Gb/s, so
        between two updates, a round trip apart, the RTT rises by seven
        times that round trip. Once it passes T_low the gradient rule asks
        for 1 - beta x gradient, below zero when the smoothed rise exceeds
        min_rtt / beta = 25 us. The authors' code caps the cut at half the
        rate: the first rate each sender falls to is 50 Gb/s exactly, and
        the next 25 (HPCC's ns-3 drops to min_rate, 100 Mb/s)."""
        with tempfile.TemporaryDirectory() as tmp:
            out = self.run_flows(tmp, 8, stop="300us")
            for i in range(8):
                rates = []
                for _, r in rate_series(out, f"h{i}"):
                    if not rates or r != rates[-1]:
                        rates.append(r)
                self.assertEqual(rates[:3], [100e9, 50e9, 25e9], f"h{i}")

    def test_delta_is_a_thousandth_of_the_line_rate(self):
        """The default delta is 100 Mb/s on 100 Gb/s links and the paper's
        10 Mb/s on 10 Gb/s ones: the runs equal those that set it."""
        with tempfile.TemporaryDirectory() as tmp:
            for rate, rai in (("100Gbps", "100Mbps"), ("10Gbps", "10Mbps")):
                with self.subTest(rate=rate):
                    cfg = write_config(tmp, bottleneck(2, stop="2ms", nic="cc: timely").replace(
                        "rate: 100Gbps", f"rate: {rate}"), f"{rate}.yaml")
                    run_sim(cfg, os.path.join(tmp, "auto" + rate))
                    run_sim(cfg, os.path.join(tmp, "set" + rate), "--set", f"nic.timely.rai={rai}")
                    with open(os.path.join(tmp, "auto" + rate, "rates.csv")) as f:
                        auto = f.read()
                    with open(os.path.join(tmp, "set" + rate, "rates.csv")) as f:
                        self.assertEqual(auto, f.read())
                    self.assertGreater(summary(os.path.join(tmp, "auto" + rate))["fabric"]["rate_cuts"], 0)

    def test_a_flow_leaving(self):
        """Two flows share the bottleneck; one (64 MiB) ends at about
        11.5 ms. Below T_low the other adds delta once per round trip of
        its own packets, at least the four 1 us links: with the paper's
        10 Mb/s it climbs at most 10 Mb/s / 4 us = 2.5 Gb/s per ms and
        leaves the link below 90% for the rest of a 30 ms run; with the
        default 100 Mb/s it refills it within 2 ms."""
        with tempfile.TemporaryDirectory() as tmp:
            text = bottleneck(2, stop="30ms", nic="cc: timely").replace(
                "{src: h1, dst: h2, size: 1GiB", "{src: h1, dst: h2, size: 64MiB")
            cfg = write_config(tmp, text, "leave.yaml")
            for args in ((), validate.TIMELY_10G):
                with self.subTest(args=args):
                    out = os.path.join(tmp, "out" + str(len(args)))
                    run_sim(cfg, out, *args)
                    (end,) = [int(m["fct_ps"]) for m in table(out, "messages.csv") if m["src"] == "h1"]
                    w = windows(out, 2)
                    first = end // MS + 1  # the first whole millisecond with one flow
                    if args:
                        after = w[first:]
                        self.assertLess(max(after), 0.9 * 100e9, after)
                        rises = [b - a for a, b in zip(after, after[1:])]
                        self.assertLessEqual(max(rises), 2.5e9, after)
                        self.assertGreater(after[-1], after[0], after)
                    else:
                        self.assertGreaterEqual(min(w[first + 2:]), 0.98 * 100e9, w)


class Hpcc(unittest.TestCase):
    """HPCC (nic.cc: hpcc, over IPv6: its telemetry rides in a Hop-by-Hop
    header) at its paper's parameters, on the bottleneck of the issue's
    criterion: at least 90% of line rate in every 1 ms window after the
    first (HPCC aims at eta = 95%), a Jain index of at least 0.95 over the
    second half, nothing retransmitted, no CNP (it reads telemetry, not
    marks), and a queue HPCC keeps near zero."""

    def test_two_four_and_eight_flows(self):
        with tempfile.TemporaryDirectory() as tmp:
            for n in (2, 4, 8):
                with self.subTest(flows=n):
                    cfg = write_config(tmp, bottleneck(n, nic="cc: hpcc, ipv6: true"), f"{n}.yaml")
                    out = os.path.join(tmp, f"out{n}")
                    run_sim(cfg, out)
                    s, w = summary(out), windows(out, n)
                    per = collections.defaultdict(float)
                    for r in table(out, "rates.csv"):
                        if int(r["time_ps"]) > 10 * MS and r["dst"] == f"h{n}":
                            per[r["src"]] += float(r["throughput_bps"])
                    q = [int(r["total_bytes"]) for r in table(out, "qlen.csv") if r["port"] == f"s0-{n}"]
                    self.assertEqual(len(w), 20)
                    self.assertGreaterEqual(min(w[1:]), 0.9 * 100e9, w)
                    self.assertLessEqual(max(w[1:]), 100e9, w)
                    self.assertGreaterEqual(jain(list(per.values())), 0.95, per)
                    self.assertEqual(s["totals"]["retransmitted"], 0)
                    self.assertEqual(s["fabric"]["cnps_sent"], 0)
                    self.assertGreater(s["fabric"]["rate_cuts"], 0)
                    # a 1 MB-class queue under DCQCN; tens of KB here
                    self.assertLess(sum(q) / len(q), 50_000, q)

    def test_the_window_holds_the_bytes_in_flight(self):
        # T set to half the path's RTT: W = 100 Gb/s x 2 us = 25,000 bytes,
        # seven 4 KiB packets (a packet goes while fewer than W are in
        # flight), and W never grows past W_init. A window-limited flow
        # moves at most 7 x 4096 bytes per round trip, which takes at
        # least the four 1 us links: 57.3 Gb/s. Paced at W / T alone it
        # would run at line rate.
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, bottleneck(1, stop="2ms", nic="cc: hpcc, ipv6: true, hpcc: {base_rtt: 2us}"))
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            bound = 7 * 4096 * 8 / 4e-6
            rates = [float(r["throughput_bps"]) for r in table(out, "rates.csv")
                     if r["src"] == "h0" and int(r["time_ps"]) > MS // 10]
            self.assertTrue(rates)
            self.assertLessEqual(max(rates), bound, rates)
            self.assertGreater(sum(rates) / len(rates), 0.5 * bound, rates)

    def test_needs_ipv6_and_checks_its_keys(self):
        with tempfile.TemporaryDirectory() as tmp:
            for nic, err in (("cc: hpcc", "host 'h0': nic cc hpcc needs ipv6: true: its telemetry rides "
                                          "in an IPv6 hop-by-hop header"),
                             ("cc: hpcc, ipv6: true, hpcc: {hops: 9}", "hpcc hops"),
                             ("cc: hpcc, ipv6: true, hpcc: {base_rtt: 0us}", "hpcc base_rtt: must be above zero"),
                             ("cc: hpcc, ipv6: true, hpcc: {eta: 1.5}", "hpcc eta"),
                             ("cc: hpc", "nic cc: 'hpc' is not one of dcqcn, dctcp, timely, hpcc, none")):
                with self.subTest(nic=nic):
                    cfg = write_config(tmp, bottleneck(2, nic=nic))
                    p = subprocess.run([RDMASIM, "sim", "--check", cfg], capture_output=True, text=True)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertIn(err, p.stderr)


class DctcpEcho(unittest.TestCase):
    """DCTCP's echo is BECN in the BTH of the responder's ACKs: valid
    frames (the ICRC masks that byte) that `rdmasim decode` shows, and no
    CNP is sent."""

    def test_acks_carry_becn_and_stay_valid(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, bottleneck(2, stop="2ms", nic="cc: dctcp").replace(
                "workload:", "trace: [h2]\nworkload:"))
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            s = summary(out)
            pcap = os.path.join(out, "pcap", "h2-0.pcap")
            p = subprocess.run([RDMASIM, "decode", "--json", "--strict", pcap], capture_output=True, text=True)
            tshark = None
            if shutil.which("tshark"):
                # tshark 4.0 names no field for the BTH's FECN/BECN byte
                # (it shows it as Reserved); it must still read every frame
                tshark = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-e", "frame.number",
                                         "-e", "infiniband.bth.opcode", "-e", "_ws.malformed"],
                                        capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        frames = [json.loads(line) for line in p.stdout.splitlines()]
        acks = [f for f in frames if f.get("bth", {}).get("opcode_name", "").endswith("Acknowledge")]
        echoed = [f for f in acks if f["bth"]["becn"] == 1]
        self.assertGreater(len(echoed), 0)
        self.assertLess(len(echoed), len(acks))
        self.assertTrue(all(f["icrc"]["ok"] for f in acks))
        self.assertEqual(s["fabric"]["cnps_sent"], 0)
        self.assertGreater(s["fabric"]["rate_cuts"], 0)
        if tshark:
            rows = [line.split("\t") for line in tshark.stdout.splitlines()]
            self.assertEqual(len(rows), len(frames))
            self.assertFalse([r for r in rows if len(r) > 2 and r[2]], "malformed frames")
            ack_numbers = {int(r[0]) for r in rows if r[1] == "17"}
            self.assertEqual(ack_numbers, {f["frame"] for f in acks})
        # one ACK per request packet
        requests = [f for f in frames if f.get("bth", {}).get("opcode_name", "").startswith("RDMA WRITE")]
        self.assertGreater(len(acks), 0.95 * len(requests))


class Timers(unittest.TestCase):
    """A queue pair DCQCN holds at a few Gb/s takes longer than 500 us to
    send the 64 packets between two acknowledgement requests: a 500 us
    timer fires with nothing lost. The default timeout does not."""

    def test_default_timeout_fires_only_on_loss_and_a_short_one_is_told(self):
        with tempfile.TemporaryDirectory() as tmp:
            # DCQCN as its paper states it holds eight flows at a few Gb/s
            cfg = write_config(tmp, bottleneck(8, stop="10ms", nic="dcqcn: {clamp_target: true}"))
            run_sim(cfg, os.path.join(tmp, "default"))
            p = run_sim(cfg, os.path.join(tmp, "short"), "--set", "nic.timeout=500us")
            p2 = subprocess.run([RDMASIM, "sim", cfg, "--set", "nic.timeout=500us"],
                                capture_output=True, text=True, timeout=seconds(600))
            d, s = summary(os.path.join(tmp, "default")), summary(os.path.join(tmp, "short"))
        self.assertEqual(p.returncode, 0)
        self.assertEqual(d["config"]["nic"]["timeout"], "67108864ns")
        for key in ("retransmitted", "timeouts", "timeouts_without_loss", "tail_drops"):
            self.assertEqual(d["totals"][key], 0, key)
        self.assertEqual(d["notes"], [])
        t = s["totals"]
        self.assertEqual(t["tail_drops"] + t["link_losses"] + t["bad_frames_dropped"], 0)
        self.assertGreater(t["timeouts"], 0)
        self.assertEqual(t["timeouts_without_loss"], t["timeouts"])
        self.assertGreater(t["retransmitted"], 0)
        # per flow: the requester's side counts its timeouts and how many
        # were without loss
        flows = [side for f in s["flows"] for side in f["sides"]]
        self.assertEqual(sum(f["timeouts"] for f in flows), t["timeouts"])
        self.assertEqual(sum(f["timeouts_without_loss"] for f in flows), t["timeouts"])
        self.assertEqual(len(s["notes"]), 1)
        note = s["notes"][0]
        self.assertTrue(note.startswith(f"{t['timeouts']} of {t['timeouts']} retransmission timeouts "
                                        "fired with nothing lost"), note)
        self.assertIn("no frame was dropped or lost", note)
        # the timeout of the host whose queue pair it was, which may be its own
        self.assertRegex(note, r"The timeout \(500us at h\d+\)")
        self.assertIn("raise nic.timeout or lower nic.ack_request_every", note)
        self.assertIn(f"  note       {note}", p2.stdout)
        self.assertIn(f"{t['timeouts']} retransmission timeouts, {t['timeouts']} of them with nothing lost",
                      p2.stdout)

    def test_no_example_retransmits_without_a_loss(self):
        """Every example, under each congestion control: no timeout fires
        with nothing lost, and packets are resent only after a drop, a
        loss, a bad frame or an RNR NAK."""
        files = sorted(glob.glob(os.path.join(EXAMPLES, "*.yaml"))) + \
            [os.path.join(EXAMPLES, "split", "run.yaml")]
        self.assertGreater(len(files), 10)
        runs = [(f, cc) for cc in ("dcqcn", "dctcp", "timely") for f in files]
        with tempfile.TemporaryDirectory() as tmp, \
                concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            # two at a time: a hundred runs, and the suite's last minutes
            # often leave one of the two cores to this test alone
            outs = [os.path.join(tmp, cc + os.path.basename(path)) for path, cc in runs]
            done = pool.map(lambda r: run_sim(r[0][0], r[1], "--set", f"nic.cc={r[0][1]}", check=False),
                            zip(runs, outs))
            for (path, cc), out, p in zip(runs, outs, done):
                with self.subTest(example=os.path.basename(path), cc=cc):
                    self.assertEqual(p.returncode, 0, p.stderr)
                    s = summary(out)
                    t = s["totals"]
                    self.assertEqual(t["timeouts_without_loss"], 0)
                    rnr = sum(side["rnr_naks"] for f in s["flows"] for side in f["sides"])
                    if t["retransmitted"]:
                        self.assertGreater(t["tail_drops"] + t["link_losses"] + t["bad_frames_dropped"]
                                           + rnr, 0)


ETH, IPV4, UDP, BTH, RETH, AETH, ICRC, WIRE = 14, 20, 8, 12, 16, 4, 4, 24
CUT_THROUGH = 8 + 64  # wire bytes a cut-through switch takes in before it forwards
SWITCH_LATENCY = 300 * 1000  # ps: the default, NVIDIA Spectrum's port-to-port latency


def write_time(size, mtu, hops, rate, delay_ps, latency_ps=0, cut_through=False):
    """Analytic completion time (ps) of one RDMA WRITE of `size` bytes over
    `hops` links of one rate through hops - 1 switches, with its ACK coming
    back. Store and forward: packets pipeline, so the data takes the sum
    of its frames' times plus, at every further hop, the largest one.
    Cut-through: a switch sends a frame on once its first 72 wire bytes
    (preamble and 64 bytes of headers) are in, so every further hop adds
    only those bytes' time."""
    frames = []
    off = 0
    while off < size or not frames:
        n = min(mtu, size - off)
        frames.append(ETH + IPV4 + UDP + BTH + (RETH if off == 0 else 0) + n + (-n % 4) + ICRC + WIRE)
        off += n
    ack = max(ETH + IPV4 + UDP + BTH + AETH + ICRC, 60) + WIRE

    def ser(b):
        return -(-b * 8 * PS // rate)

    def one_way(sizes):
        per_hop = ser(CUT_THROUGH) if cut_through and min(sizes) > CUT_THROUGH else max(ser(b) for b in sizes)
        return sum(ser(b) for b in sizes) + (hops - 1) * (per_hop + latency_ps) + hops * delay_ps
    return one_way(frames) + one_way([ack])


def shift_permutation(k, routing, size="10MiB", nic=""):
    n = k ** 3 // 4
    msgs = "".join(f"    - {{src: h{i}, dst: h{(i + n // 2) % n}, size: {size}}}\n" for i in range(n))
    return f"""
seed: 1
payload: none
nic: {{{nic}}}
topology:
  routing: {routing}
  switch_defaults: {{shared_buffer: 4MiB, pfc: {{priorities: [3]}}}}
  generate: {{kind: fat-tree, k: {k}, host_link: {{rate: 100Gbps, delay: 1us}},
             fabric_link: {{rate: 100Gbps, delay: 1us}}}}
workload:
  messages:
{msgs}"""


class Routing(unittest.TestCase):
    """Shift permutations on k=4 and k=8 fat-trees, 10 MiB per host: every
    flow crosses pods, six hops, through a core switch."""

    RATE, DELAY = 100 * 10**9, 10**6

    def run_shift(self, tmp, k, routing, size="10MiB", nic=""):
        cfg = write_config(tmp, shift_permutation(k, routing, size, nic), f"{k}{routing}{nic[:3]}.yaml")
        out = os.path.join(tmp, f"out{k}{routing}{nic[:3]}")
        run_sim(cfg, out)
        return summary(out), table(out, "messages.csv")

    def test_dmodk_is_collision_free_and_ecmp_is_not(self):
        analytic = write_time(10 * 2**20, 4096, 6, self.RATE, self.DELAY, SWITCH_LATENCY, True)
        with tempfile.TemporaryDirectory() as tmp:
            for k in (4, 8):
                with self.subTest(k=k):
                    s, msgs = self.run_shift(tmp, k, "dmodk")
                    self.assertEqual(s["config"]["routing"], "dmodk")
                    self.assertEqual(len(msgs), k ** 3 // 4)
                    for m in msgs:
                        self.assertEqual(int(m["ideal_ps"]), analytic)
                        self.assertLess(abs(int(m["fct_ps"]) - analytic) / analytic, 0.001, m)
                    self.assertEqual(s["totals"]["retransmitted"], 0)
                    # under ecmp some links carry two flows or more
                    s, msgs = self.run_shift(tmp, k, "ecmp")
                    self.assertGreater(max(int(m["fct_ps"]) for m in msgs), 1.5 * analytic)

    def test_adaptive_with_out_of_order_placement_comes_close(self):
        analytic = write_time(10 * 2**20, 4096, 6, self.RATE, self.DELAY, SWITCH_LATENCY, True)
        with tempfile.TemporaryDirectory() as tmp:
            for k in (4, 8):
                with self.subTest(k=k):
                    s, msgs = self.run_shift(tmp, k, "adaptive", nic="ooo: true")
                    self.assertTrue(s["config"]["nic"]["ooo"])
                    self.assertLess(max(int(m["fct_ps"]) for m in msgs), 1.05 * analytic)
                    self.assertEqual(s["totals"]["retransmitted"], 0)

    def test_spray_needs_out_of_order_placement(self):
        """Per-packet spraying reorders; a go-back-N responder NAKs every
        reordering, the requester resends, and completion times collapse.
        Placing by PSN within the reorder window keeps them near ideal."""
        analytic = write_time(2**20, 4096, 6, self.RATE, self.DELAY, SWITCH_LATENCY, True)
        with tempfile.TemporaryDirectory() as tmp:
            s, msgs = self.run_shift(tmp, 4, "spray", size="1MiB")
            t = s["totals"]
            self.assertEqual(t["tail_drops"] + t["link_losses"], 0)
            self.assertGreater(t["retransmitted"], 1000)
            naks = sum(side["naks_seq"] for f in s["flows"] for side in f["sides"])
            self.assertGreater(naks, 100)
            self.assertGreater(max(int(m["fct_ps"]) for m in msgs), 5 * analytic)
            s, msgs = self.run_shift(tmp, 4, "spray", size="1MiB", nic="ooo: true")
            t = s["totals"]
            self.assertEqual(t["retransmitted"], 0)
            self.assertGreater(sum(side["held_out_of_order"] for f in s["flows"] for side in f["sides"]), 0)
            self.assertLess(max(int(m["fct_ps"]) for m in msgs), 1.2 * analytic)

    def test_routing_names_are_checked(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, shift_permutation(4, "random"))
            p = subprocess.run([RDMASIM, "sim", "--check", cfg], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("c.yaml:6:12: topology routing: 'random' is not one of ecmp, dmodk, spray, adaptive",
                      p.stderr)


class Latencies(unittest.TestCase):
    """64 KiB WRITEs, READs and a 2-byte WRITE through three switches, each
    forwarding mode, with and without NIC pipeline latency: the completion
    time is the analytic one to the picosecond."""

    def test_switch_and_nic_latency_to_the_picosecond(self):
        rate, delay = 100 * 10**9, 10**6
        with tempfile.TemporaryDirectory() as tmp:
            for fw, lat, tx, rx in (("cut-through", 300, 0, 0), ("store-and-forward", 300, 0, 0),
                                    ("cut-through", 300, 200, 150), ("store-and-forward", 0, 0, 0),
                                    ("store-and-forward", 450, 100, 0)):
                with self.subTest(forwarding=fw, latency=lat, tx=tx, rx=rx):
                    cfg = write_config(tmp, f"""
seed: 1
payload: none
nic: {{tx_latency: {tx}ns, rx_latency: {rx}ns}}
topology:
  switch_defaults: {{latency: {lat}ns, forwarding: {fw}}}
  hosts: [h0, h1]
  switches: [s0, s1, s2]
  links:
    - {{a: h0, b: s0}}
    - {{a: s0, b: s1}}
    - {{a: s1, b: s2}}
    - {{a: s2, b: h1}}
workload:
  messages:
    - {{src: h0, dst: h1, op: write, size: 64KiB}}
    - {{src: h0, dst: h1, op: write, size: 2, start: 100us}}
""")
                    out = os.path.join(tmp, f"{fw}{lat}{tx}{rx}")
                    run_sim(cfg, out)
                    msgs = table(out, "messages.csv")
                    nic = 2 * (tx + rx) * 1000  # both ways: data out, ACK back
                    for m, size in zip(msgs, (65536, 2)):
                        want = write_time(size, 4096, 4, rate, delay, lat * 1000, fw == "cut-through") + nic
                        self.assertEqual(int(m["fct_ps"]), want, m)
                        self.assertEqual(int(m["ideal_ps"]), want, m)

    def test_pcie_replaces_the_nic_pipeline(self):
        """With PCIe modelled the NIC's steps are TLPs: tx_latency and
        rx_latency do not apply."""
        with tempfile.TemporaryDirectory() as tmp:
            runs = {}
            for tx in (0, 500):
                out = os.path.join(tmp, f"p{tx}")
                run_sim(os.path.join(EXAMPLES, "pcie-host-pair.yaml"), out,
                        "--set", f"nic.tx_latency={tx}ns", "--set", f"nic.rx_latency={tx}ns")
                runs[tx] = [m["fct_ps"] for m in table(out, "messages.csv")]
        self.assertEqual(runs[0], runs[500])

    def test_bad_values_are_refused(self):
        for key, value, msg in (("topology.switch_defaults.forwarding", "wormhole",
                                 "switch forwarding: 'wormhole' is not one of cut-through, store-and-forward"),
                                ("topology.switch_defaults.latency", "2ms",
                                 "switch latency: must lie between 0 and 1ms"),
                                ("nic.tx_latency", "5ms", "nic tx_latency: must lie between 0 and 1ms")):
            p = subprocess.run([RDMASIM, "sim", "--check", os.path.join(EXAMPLES, "write-one-link.yaml"),
                                "--set", f"{key}={value}"], capture_output=True, text=True, timeout=seconds(60))
            self.assertEqual(p.returncode, 2)
            self.assertIn(msg, p.stderr)


class Sanity(unittest.TestCase):
    """Values that cannot make sense with the topology are refused at the
    line that set them."""

    CFG = """seed: 1
payload: none
topology:
  switch_defaults:
    shared_buffer: 2MiB
    ecn: {kmax: 500KB}
  generate: {kind: star, hosts: 3, link: {rate: 100Gbps}}
workload:
  generate: {kind: incast, to: h2, op: write, size: 1MiB}
"""

    def check(self, *sets):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, self.CFG)
            args = [a for kv in sets for a in ("--set", kv)]
            return subprocess.run([RDMASIM, "sim", "--check", cfg, *args], capture_output=True, text=True)

    def test_kmax_above_what_the_queue_can_hold(self):
        # a 2 MiB shared buffer without PFC, alpha 1/8, no reserved space
        # and no headroom: one queue holds at most 2 MiB x (1/8) / (9/8)
        cap = 2 * 2**20 // 9
        p = self.check()
        self.assertEqual(p.returncode, 2)
        self.assertIn(f"c.yaml:6:17: ecn kmax: 500000 bytes is more than a queue of switch 's0' can ever "
                      f"hold ({cap} bytes, alpha x pool / (1 + alpha): its lossy dynamic threshold)", p.stderr)
        self.assertEqual(self.check(f"topology.switch_defaults.ecn.kmax={cap}").returncode, 0)
        self.assertEqual(self.check(f"topology.switch_defaults.ecn.kmax={cap + 1}").returncode, 2)
        # the scaled default (500 KB at 100 Gb/s) is kept within it
        self.assertEqual(self.check("topology.switch_defaults.ecn.kmax=auto").returncode, 0)
        p = self.check("topology.switch_defaults.ecn.kmax=auto", "topology.switch_defaults.ecn.kmin=300KB")
        self.assertIn("--set topology.switch_defaults.ecn.kmin=300KB: ecn kmin: 300000 bytes is more than",
                      p.stderr)
        # with PFC a lossless queue fills from every port: the whole buffer
        p = self.check("topology.switch_defaults.pfc={priorities: [3]}")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_dcqcn_min_rate_above_the_link_rate(self):
        p = self.check("topology.switch_defaults.ecn.kmax=auto", "nic.dcqcn.min_rate=200Gbps")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--set nic.dcqcn.min_rate=200Gbps: nic dcqcn min_rate: 200 Gb/s is above the rate of "
                      "host 'h0''s link (100 Gb/s)", p.stderr)
        p = self.check("topology.switch_defaults.ecn.kmax=auto", "nic.dcqcn.min_rate=200Gbps",
                       "nic.dcqcn.enable=false")
        self.assertEqual(p.returncode, 0, p.stderr)
        for cc in ("dctcp", "timely"):
            p = self.check("topology.switch_defaults.ecn.kmax=auto", f"nic.cc={cc}", f"nic.{cc}.min_rate=101Gbps")
            self.assertEqual(p.returncode, 2)
            self.assertIn(f"--set nic.{cc}.min_rate=101Gbps: nic {cc} min_rate: 101 Gb/s is above", p.stderr)


if __name__ == "__main__":
    main(default_limit=900)
