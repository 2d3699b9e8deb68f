#!/usr/bin/python3
"""End-to-end tests of the lossless fabric: PFC headroom and incast, pause
timing, DCQCN convergence, ECN marking, scheduling, classification, the
NIC's receive buffer, link faults, ECMP, deadlock and the watchdog, the
frames in tshark, and determinism.

Expectations come from the configurations the tests write and from the
formulas they restate, never from an earlier run:
  - a frame costs its bytes plus 24 on the wire (preamble and start
    delimiter 8, FCS 4, inter-frame gap 12); a PFC frame is 60 + 24;
  - a pause quantum is 512 bit times (IEEE 802.1Qbb): 5.12 ns at 100 Gb/s;
  - PFC headroom = 2 x rate x delay + 3 largest frames + 8 PFC frames,
    wire bytes, largest frame = link MTU + 18 (sim/pfc.c derives it);
  - RED marks nothing below kmin and everything above kmax, whose defaults
    scale 5 KB and 200 KB at 40 Gb/s with the port's rate."""
import collections
import glob
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import output_files, run_sim, summary, table, write_config  # noqa: E402
from testlib import main, pcap_records, seconds  # noqa: E402
EXAMPLES = os.path.join(TOP, "examples")
TSHARK = shutil.which("tshark")
PS = 10**12
WIRE, PFC_WIRE = 24, 60 + 24
PFC_DST = bytes.fromhex("0180c2000001")


def headroom(rate, delay_ps, mtu, latency_ps=300_000):
    """A switch port's: the round trip, three largest frames, eight PFC
    frames, and what arrives during the switch's forwarding latency
    (300 ns by default), as it decides when frames reach it."""
    return -(-rate * 2 * delay_ps // (8 * PS)) + 3 * (mtu + 18 + WIRE) + 8 * PFC_WIRE + \
        -(-rate * latency_ps // (8 * PS))


def quantum_ps(rate):
    return -(-512 * PS // rate)


def pfc_frame(f):
    """(class-enable vector, eight pause times) of an 802.1Qbb frame, or None."""
    if f[:6] != PFC_DST or f[12:14] != b"\x88\x08" or f[14:16] != b"\x01\x01":
        return None
    return struct.unpack(">H", f[16:18])[0], struct.unpack(">8H", f[18:34])


def ipv4_src(f):
    """IPv4 source of an untagged RoCEv2 frame, or None."""
    if len(f) > 42 and f[12:14] == b"\x08\x00" and f[23] == 17:
        return f[26:30]
    return None


def host_ip(i):
    return bytes([10, 0, 0, i + 1])


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def star(n, extra_switch="", nic="", rate=100, delay="1us", mtu=9000, stop="", trace="",
         size="256KiB", to=None):
    """n senders and one receiver (the last host) on one switch."""
    to = n if to is None else to
    return f"""
seed: 1
payload: none
{stop}
{trace}
nic: {{timeout: 10ms{nic}}}
topology:
  switch_defaults: {{{extra_switch}}}
  generate: {{kind: star, hosts: {n + 1}, link: {{rate: {rate}Gbps, delay: {delay}, mtu: {mtu}}}}}
workload:
  generate: {{kind: incast, to: h{to}, op: write, size: {size}}}
"""


class Incast(unittest.TestCase):
    """N -> 1 incast through one switch whose buffer holds every port's
    formula headroom and a small pool: PFC must lose nothing for any N, and
    lose frames once the headroom is set below what is in flight."""

    RATE, DELAY, MTU = 100 * 10**9, 2 * 10**6, 9000

    def run_incast(self, tmp, n, hr=None):
        h = headroom(self.RATE, self.DELAY, self.MTU)
        buffer = (n + 1) * (hr or h) + 128 * 1024
        extra = f"shared_buffer: {buffer}, pfc: {{priorities: [3]" + (f", headroom: {hr}}}" if hr else "}")
        cfg = write_config(tmp, star(n, extra, delay="2us"))
        out = os.path.join(tmp, f"out{n}")
        run_sim(cfg, out)
        return summary(out), h

    def test_formula_headroom_loses_nothing_from_2_to_64_senders(self):
        with tempfile.TemporaryDirectory() as tmp:
            for n in (2, 4, 8, 16, 32, 64):
                with self.subTest(senders=n):
                    s, h = self.run_incast(tmp, n)
                    t, fab = s["totals"], s["fabric"]
                    self.assertEqual(t["completed"], n)
                    self.assertEqual(t["tail_drops"], 0)
                    self.assertEqual(fab["headroom_drops"], 0)
                    self.assertEqual(t["retransmitted"], 0)
                    self.assertGreater(fab["pauses_sent"], 0)
                    switch_ports = [p for p in s["ports"] if p["port"].startswith("s0-")]
                    used = max(p["max_headroom_bytes"] for p in switch_ports)
                    for p in switch_ports:
                        self.assertEqual(p["headroom_bytes"], h)
                        self.assertLessEqual(p["max_headroom_bytes"], h)
                    # after XOFF a group's link still brings a round trip at
                    # line rate while its share of the port, 1/n, drains it:
                    # the headroom is really used
                    rtt_bytes = self.RATE * 2 * self.DELAY // (8 * PS)
                    self.assertGreater(used, 0.8 * rtt_bytes * (1 - 1 / n))

    def test_too_small_headroom_drops_and_counts(self):
        with tempfile.TemporaryDirectory() as tmp:
            # half the round trip: less than what is in flight after XOFF
            small = self.RATE * self.DELAY // (8 * PS)
            s, _ = self.run_incast(tmp, 16, hr=small)
            t, fab = s["totals"], s["fabric"]
            self.assertGreater(fab["headroom_drops"], 0)
            # lossless frames are dropped only for want of headroom
            self.assertEqual(t["tail_drops"], fab["headroom_drops"])
            self.assertEqual(sum(p["headroom_drops"] for p in s["ports"]), fab["headroom_drops"])
            # the switch's frames balance: in = out + dropped (PFC frames
            # end or start at its ports)
            sw = [p for p in s["ports"] if p["port"].startswith("s0-")]
            rx = sum(p["rx_frames"] - p["pauses_received"] - p["resumes_received"] for p in sw)
            tx = sum(p["tx_frames"] - p["pauses_sent"] - p["resumes_sent"] for p in sw)
            self.assertEqual(rx, tx + sum(p["tail_drops"] for p in sw))
            # go-back-N recovers every message
            self.assertEqual(t["completed"], 16)
            self.assertGreater(t["retransmitted"], 0)
            for p in sw:
                self.assertEqual(p["headroom_bytes"], small)


class PauseTiming(unittest.TestCase):
    """A NIC obeys a pause for exactly the quanta it was given: with pauses
    shorter than the refresh interval, the sender's first frame after a
    pause starts when the pause runs out, unless an XON or a new pause
    came first."""

    def test_sender_resumes_exactly_when_the_pause_expires(self):
        rate, quanta = 100 * 10**9, 1000
        pause_ns = quanta * quantum_ps(rate) / 1000
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, star(2, f"shared_buffer: 1MiB, pfc: {{priorities: [3], quanta: {quanta}, "
                                            "refresh: 30us}", trace="trace: [h0]", size="2MiB"))
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            recs = pcap_records(os.path.join(out, "pcap", "h0-0.pcap"))
        events = []
        for t, f in recs:
            pf = pfc_frame(f)
            if pf:
                self.assertEqual(pf[0], 1 << 3)
                events.append(("pfc", t, pf[1][3]))
            elif ipv4_src(f) == host_ip(0):
                events.append(("tx", t, 0))
        expired = resumed = 0
        for i, (kind, t, q) in enumerate(events):
            if kind != "pfc":
                continue
            later = events[i + 1:]
            nxt_tx = next((e[1] for e in later if e[0] == "tx"), None)
            nxt_pfc = next((e[1] for e in later if e[0] == "pfc"), None)
            if nxt_tx is None:
                continue
            if q == 0:
                # XON: nothing holds the sender back (it may be finishing a frame)
                self.assertLessEqual(nxt_tx - t, -(-(4096 + 100) * 8 // 100))
                resumed += 1
                continue
            end = t + pause_ns
            if nxt_pfc is not None and nxt_pfc < end and nxt_pfc <= nxt_tx:
                continue  # superseded
            # nothing starts during the pause; the backlog goes the moment it ends
            self.assertGreaterEqual(nxt_tx, end - 1, (t, q))
            self.assertLessEqual(nxt_tx, end + 1, (t, q))
            expired += 1
        self.assertGreater(expired, 10)
        self.assertGreater(resumed, 10)

    def test_xoff_is_refreshed_before_it_expires(self):
        """With the defaults (65535 quanta, refresh at half the pause time),
        a paused link never runs out of pause between XOFF and XON."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(os.path.join(EXAMPLES, "fabric-incast-pfc.yaml"), out)
            rows = table(out, "pfc.csv")
            rates = {p["port"]: int(p["rate_bps"]) for p in table(out, "ports.csv")}
        last, refreshed = {}, 0
        for r in rows:
            key, t = (r["port"], r["priority"]), int(r["time_ps"])
            pause = 65535 * quantum_ps(rates[r["port"]])
            if r["event"] == "pause":
                self.assertNotIn(key, last)
                self.assertEqual(int(r["duration_ps"]), pause)
            elif r["event"] == "refresh":
                self.assertLessEqual(t - last[key], -(-pause // 2))
                refreshed += 1
            elif r["event"] == "resume":
                self.assertEqual(int(r["quanta"]), 0)
                last.pop(key)
                continue
            last[key] = t
        self.assertGreater(refreshed, 10)


class Dcqcn(unittest.TestCase):
    """Four flows join a 100 Gb/s bottleneck 2 ms apart, with the DCQCN
    paper's defaults, ECN marking and PFC. After convergence they share it
    fairly, the link stays busy, the queue sits between the ECN
    thresholds, and PFC no longer pauses anybody."""

    RATE = 100 * 10**9
    KMIN, KMAX = 5000 * 100 // 40, 200000 * 100 // 40

    def test_flows_converge_to_their_fair_share(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, """
seed: 1
payload: none
stop: 40ms
topology:
  switch_defaults:
    shared_buffer: 4MiB
    pfc: {priorities: [3]}
    ecn: {enable: true}
  generate: {kind: star, hosts: 5, link: {rate: 100Gbps, delay: 1us}}
workload:
  messages:
    - {src: h0, dst: h4, size: 1GiB}
    - {src: h1, dst: h4, size: 1GiB, start: 2ms}
    - {src: h2, dst: h4, size: 1GiB, start: 4ms}
    - {src: h3, dst: h4, size: 1GiB, start: 6ms}
""")
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            s = summary(out)
            rates = table(out, "rates.csv")
            qlen = table(out, "qlen.csv")
            pfc = table(out, "pfc.csv")
        window = (30 * 10**9, 40 * 10**9)  # ps
        tput = collections.defaultdict(float)
        samples = set()
        for r in rates:
            t = int(r["time_ps"])
            if r["dst"] == "h4" and window[0] < t <= window[1]:
                tput[r["src"]] += float(r["throughput_bps"])
                samples.add(t)
        mean = {h: v / len(samples) for h, v in tput.items()}
        self.assertEqual(sorted(mean), ["h0", "h1", "h2", "h3"])
        self.assertGreaterEqual(jain(list(mean.values())), 0.95, mean)
        self.assertGreater(sum(mean.values()), 0.9 * self.RATE)
        for h, v in mean.items():
            self.assertLess(abs(v - self.RATE / 4) / (self.RATE / 4), 0.3, (h, v))
        # the bottleneck queue: s0's port towards h4
        depth = {int(r["time_ps"]): int(r["total_bytes"]) for r in qlen if r["port"] == "s0-4"}
        inside = [depth.get(t, 0) for t in sorted(samples)]
        avg = sum(inside) / len(inside)
        self.assertGreater(avg, self.KMIN)
        self.assertLess(avg, self.KMAX)
        self.assertFalse([r for r in pfc if int(r["time_ps"]) > window[0]])
        self.assertGreater(s["fabric"]["cnps_sent"], 0)
        self.assertEqual(s["fabric"]["cnps_sent"], s["fabric"]["rate_cuts"])

    def test_red_marks_nothing_below_kmin_and_everything_above_kmax(self):
        # "never": thresholds within the 4 MiB buffer (the loader refuses
        # more) that the incast's queue, held under a third of the pool by
        # the PFC thresholds of its four ingress groups, does not reach
        marks = {}
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, star(4, "shared_buffer: 4MiB, pfc: {priorities: [3]}, "
                                            "ecn: {kmin: 4000000, kmax: 4MiB, pmax: 1}", size="1MiB"))
            for name, sets in (("never", ()),
                               ("always", ("--set", "topology.switch_defaults.ecn.kmin=1",
                                           "--set", "topology.switch_defaults.ecn.kmax=2"))):
                out = os.path.join(tmp, name)
                run_sim(cfg, out, "--set", "nic.dcqcn.enable=false", *sets)
                marks[name] = summary(out)
        self.assertEqual(marks["never"]["fabric"]["ecn_marked"], 0)
        # above kmax every frame that finds its queue non-empty is marked: the
        # receiver's port holds a queue from the first frames of the incast on
        always = marks["always"]
        to_receiver = next(p for p in always["ports"] if p["peer"] == "h4-0")
        self.assertGreater(always["fabric"]["ecn_marked"], to_receiver["tx_frames"] // 2)
        self.assertLessEqual(always["fabric"]["ecn_marked"], to_receiver["tx_frames"])

    def test_cnps_come_at_most_once_per_interval_and_dcqcn_turns_off(self):
        with tempfile.TemporaryDirectory() as tmp:
            base = star(4, "shared_buffer: 2MiB, pfc: {priorities: [3]}, ecn: {enable: true}",
                        trace="trace: [h4]", size="4MiB")
            cfg = write_config(tmp, base)
            out = os.path.join(tmp, "on")
            run_sim(cfg, out, "--set", "nic.dcqcn.cnp_interval=20us")
            on = summary(out)
            cnps = collections.defaultdict(list)
            for t, f in pcap_records(os.path.join(out, "pcap", "h4-0.pcap")):
                if ipv4_src(f) == host_ip(4) and f[42] == 0x81:
                    self.assertEqual(f[46] & 0x40, 0x40)  # BECN
                    self.assertEqual(f[54:70], bytes(16))
                    self.assertEqual(f[15] >> 2, 48)  # the CNP DSCP
                    cnps[(f[30:34], f[47:50])].append(t)  # per queue pair
            self.assertGreater(sum(map(len, cnps.values())), 4)
            for times in cnps.values():
                for a, b in zip(times, times[1:]):
                    self.assertGreaterEqual(b - a, 20000)
            out = os.path.join(tmp, "off")
            run_sim(cfg, out, "--set", "nic.dcqcn.enable=false")
            off = summary(out)
        self.assertGreater(on["fabric"]["rate_cuts"], 0)
        self.assertGreater(off["fabric"]["ecn_marked"], 0)
        self.assertEqual(off["fabric"]["cnps_sent"], 0)
        self.assertEqual(off["fabric"]["rate_cuts"], 0)


@unittest.skipUnless(TSHARK, "tshark is not installed")
class Frames(unittest.TestCase):
    """PFC frames, CNPs and CE-marked frames in the captures are what the
    standards say, and tshark decodes every one without an error."""

    def tshark(self, path, *fields, extra=()):
        args = [TSHARK, "-n", "-r", path, "-o", "ip.check_checksum:TRUE", *extra, "-T", "fields"]
        for f in ("frame.number", *fields, "_ws.malformed", "_ws.expert.severity"):
            args += ["-e", f]
        p = subprocess.run(args, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line.split("\t") for line in p.stdout.splitlines()]
        for row in rows:
            self.assertEqual(row[-2], "", f"{path}: frame {row[0]} is malformed")
            # 0x00800000 is error, 0x00600000 warning (epan/proto.h)
            for sev in filter(None, row[-1].split(",")):
                self.assertLess(int(sev, 0), 0x00600000, f"{path}: frame {row[0]}: expert {sev}")
        return rows

    def test_pfc_frames_decode_as_cbfc(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(os.path.join(EXAMPLES, "fabric-incast-pfc.yaml"), out, "--set", "trace=[leaf4, h0, spine0]")
            logged = collections.Counter((r["port"], int(r["time_ps"]) // 1000, int(r["quanta"]))
                                         for r in table(out, "pfc.csv") if r["event"] != "watchdog-drop")
            seen = 0
            for path in sorted(glob.glob(os.path.join(out, "pcap", "*.pcap"))):
                port = os.path.basename(path)[:-5]
                frames = {i + 1: (t, f) for i, (t, f) in enumerate(pcap_records(path))}
                fields = ["macc.opcode", "macc.cbfc.enbv"] + [f"macc.cbfc.pause_time.c{c}" for c in range(8)]
                for row in self.tshark(path, *fields):
                    t, f = frames[int(row[0])]
                    pf = pfc_frame(f)
                    if row[1] == "":
                        self.assertIsNone(pf)
                        continue
                    self.assertIsNotNone(pf)
                    self.assertEqual(int(row[1], 16), 0x0101)
                    self.assertEqual(int(row[2], 16), pf[0])
                    self.assertEqual(pf[0] >> 8, 0)
                    for c in range(8):
                        self.assertEqual(int(row[3 + c]), pf[1][c])
                    self.assertEqual(len(f), 60)
                    # a frame this port sent is in pfc.csv at the same time
                    if f[6] == 0x06 and f[6:12] == self.port_mac(port):
                        self.assertGreater(logged[(port, t, pf[1][3])], 0, (port, t))
                    seen += 1
        self.assertGreater(seen, 50)

    @staticmethod
    def port_mac(port):
        """The MAC of a switch port, as pfc.c makes it: 06, node index,
        port index. The incast example's nodes are leaf0..4, spine0, then hosts."""
        names = [f"leaf{i}" for i in range(5)] + ["spine0"]
        node, idx = port.rsplit("-", 1)
        if node not in names:
            return b""
        n = names.index(node)
        return bytes([0x06, n >> 16 & 255, n >> 8 & 255, n & 255, int(idx) >> 8, int(idx) & 255])

    def test_cnps_and_ce_marked_frames_decode_and_keep_valid_checksums(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(os.path.join(EXAMPLES, "fabric-fat-tree-dcqcn.yaml"), out,
                    "--set", "trace=[edge0]", "--set", "topology.switch_defaults.ecn.pmax=0.2")
            cnps = ce = 0
            for path in sorted(glob.glob(os.path.join(out, "pcap", "*.pcap"))):
                rows = self.tshark(path, "infiniband.bth.opcode", "ip.dsfield.ecn", "ip.checksum.status",
                                   extra=["-Y", "infiniband.bth.opcode == 129 || ip.dsfield.ecn == 3"])
                for row in rows:
                    if row[1] == "129":
                        cnps += 1
                    if row[2] == "3":
                        ce += 1
                        # 1: good (2 would be unverified)
                        self.assertEqual(row[3], "1", f"{path}: frame {row[0]}: IPv4 checksum")
                # the project's decoder checks every ICRC: ECN is masked in it
                d = subprocess.run([RDMASIM, "decode", "--strict", path], capture_output=True, text=True)
                self.assertEqual(d.returncode, 0, d.stdout[-2000:])
        self.assertGreater(cnps, 0)
        self.assertGreater(ce, 0)


class Scheduling(unittest.TestCase):
    """Two senders on two priorities share one 100 Gb/s port: DWRR splits
    it by weight, strict priority gives it all to the higher class."""

    def shares(self, sched):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, f"""
seed: 1
payload: none
stop: 1ms
monitor: {{sample: 50us}}
topology:
  switch_defaults:
    shared_buffer: 4MiB
    pfc: {{priorities: [1, 2]}}
    scheduler: {sched}
  hosts:
    - {{name: h0, nic: {{dscp: 8}}}}
    - {{name: h1, nic: {{dscp: 16}}}}
    - h2
  switches: [s0]
  links: [{{a: h0, b: s0}}, {{a: h1, b: s0}}, {{a: h2, b: s0}}]
workload:
  messages:
    - {{src: h0, dst: h2, size: 64MiB}}
    - {{src: h1, dst: h2, size: 64MiB}}
""")
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            sent = collections.Counter()
            for r in table(out, "rates.csv"):
                if r["dst"] == "h2" and int(r["time_ps"]) > 200 * 10**6:
                    sent[r["src"]] += float(r["throughput_bps"])
        return sent["h0"], sent["h1"]

    def test_dwrr_by_weight_and_strict_priority(self):
        low, high = self.shares("{strict: [], weights: [1, 1, 3, 1, 1, 1, 1, 1]}")
        self.assertAlmostEqual(high / low, 3, delta=0.15)
        low, high = self.shares("{strict: [2]}")
        self.assertLess(low, 0.01 * high)


class Classification(unittest.TestCase):
    """Switches trusting PCP classify by the 802.1Q tag: NICs with vlan: true
    tag frames with the priority of their DSCP, and PFC works on it; without
    tags everything lands on priority 0, which is lossy here."""

    def test_pcp_trust(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, "qos: {trust: pcp}\n" +
                               star(8, "shared_buffer: 1MiB, pfc: {priorities: [3]}", nic=", vlan: true",
                                    trace="trace: [h0]"))
            out = os.path.join(tmp, "tagged")
            run_sim(cfg, out)
            tagged = summary(out)
            recs = pcap_records(os.path.join(out, "pcap", "h0-0.pcap"))
            out = os.path.join(tmp, "untagged")
            run_sim(cfg, out, "--set", "nic.vlan=false")
            untagged = summary(out)
        data = [f for _, f in recs if f[12:14] == b"\x81\x00"]
        self.assertGreater(len(data), 0)
        for f in data:
            self.assertEqual(f[14] >> 5, 26 >> 3)   # PCP = priority of DSCP 26
            self.assertEqual(f[14] & 0x0f, 0)        # VID 0
            self.assertEqual(f[15], 0)
            self.assertEqual(f[16:18], b"\x08\x00")
            self.assertEqual(f[19] >> 2, 26)
        self.assertGreater(tagged["fabric"]["pauses_sent"], 0)
        self.assertEqual(tagged["totals"]["tail_drops"], 0)
        self.assertEqual(untagged["fabric"]["pauses_sent"], 0)
        self.assertGreater(untagged["totals"]["tail_drops"], 0)
        self.assertEqual(untagged["totals"]["completed"], 8)


class NicReceiveBuffer(unittest.TestCase):
    """A NIC that takes frames in at 40 Gb/s from a 100 Gb/s link pauses the
    switch before its buffer overflows; with PFC off it drops."""

    def test_nic_sends_pfc_when_its_buffer_fills(self):
        h = headroom(100 * 10**9, 10**6, 9000, latency_ps=0)  # a NIC's: no forwarding latency
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, f"""
seed: 1
payload: none
nic: {{timeout: 10ms}}
topology:
  switch_defaults: {{shared_buffer: 2MiB, pfc: {{priorities: [3]}}}}
  hosts:
    - h0
    - {{name: r, nic: {{rx_rate: 40Gbps, rx_buffer: {h + 64 * 1024}}}}}
  switches: [s0]
  links: [{{a: h0, b: s0}}, {{a: r, b: s0}}]
workload:
  messages: [{{src: h0, dst: r, size: 8MiB}}]
""")
            out = os.path.join(tmp, "pfc")
            run_sim(cfg, out)
            s = summary(out)
            out = os.path.join(tmp, "nopfc")
            run_sim(cfg, out, "--set", "topology.hosts.1.nic.pfc=false")
            lossy = summary(out)
        r = next(p for p in s["ports"] if p["port"] == "r-0")
        self.assertGreater(r["pauses_sent"], 0)
        self.assertEqual(r["headroom_bytes"], h)
        self.assertLessEqual(r["max_headroom_bytes"], h)
        self.assertEqual(s["totals"]["tail_drops"], 0)
        self.assertEqual(s["totals"]["completed"], 1)
        # the message cannot finish faster than the NIC takes it in
        self.assertGreater(s["totals"]["end_time_ps"], 8 * 2**20 * 8 * PS // (40 * 10**9))
        r = next(p for p in lossy["ports"] if p["port"] == "r-0")
        self.assertEqual(r["pauses_sent"], 0)
        self.assertGreater(r["tail_drops"], 0)
        self.assertEqual(lossy["totals"]["completed"], 1)


class Faults(unittest.TestCase):
    """A spine link fails under traffic and comes back: what was on it is
    lost, routes move to the other spine, every message completes with its
    data intact."""

    CONFIG = """
seed: 3
nic: {timeout: 100us}
faults: [%s]
topology:
  switch_defaults: {shared_buffer: 2MiB, pfc: {priorities: [3]}}
  generate: {kind: leaf-spine, leaves: 2, spines: 2, hosts_per_leaf: 4}
workload:
  %s
"""

    def test_link_down_and_up(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, self.CONFIG % ("{a: leaf0, b: spine0, down: 20us, up: 400us}",
                                                   "generate: {kind: permutation, op: write, size: 1MiB, repeat: 2}"))
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            s = summary(out)
            out = os.path.join(tmp, "healthy")
            run_sim(cfg, out, "--set", "faults=[]")
            healthy = summary(out)
        t = s["totals"]
        self.assertEqual(t["completed"], t["messages"])
        self.assertEqual(t["data_verified"], t["messages"])
        self.assertGreater(t["link_losses"], 0)
        self.assertEqual(s["fabric"]["link_faults"], 1)
        self.assertEqual(healthy["totals"]["link_losses"], 0)
        # while leaf0-spine0 was down its traffic crossed spine1
        ports = {p["port"]: p for p in s["ports"]}
        hports = {p["port"]: p for p in healthy["ports"]}
        self.assertGreater(ports["spine1-0"]["tx_frames"], hports["spine1-0"]["tx_frames"])
        self.assertEqual(t["unroutable"], 0)  # spine1 was always there

    def test_frames_for_a_host_cut_off_have_no_route(self):
        """While h4's only link is down, the frames sent to it find no
        route at the switches: they count as unroutable, not as bad."""
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, self.CONFIG % ("{a: leaf1, b: h4, down: 20us, up: 60us}",
                                                   "messages: [{src: h0, dst: h4, op: write, size: 1MiB}]"))
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            t = summary(out)["totals"]
        self.assertEqual(t["data_verified"], 1)
        self.assertGreater(t["unroutable"], 0)
        self.assertEqual(t["bad_frames_dropped"], 0)


class Ecmp(unittest.TestCase):
    """Equal-cost paths are chosen per flow by a hash including the UDP
    source port: each queue pair's frames cross one spine only, and the
    queue pairs spread over all spines."""

    def test_queue_pairs_spread_over_spines(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, """
seed: 1
payload: none
topology:
  generate: {kind: leaf-spine, leaves: 2, spines: 4, hosts_per_leaf: 8}
trace: [spine0, spine1, spine2, spine3]
snaplen: 64
workload:
  generate:
    - {kind: all-to-all, op: write, size: 8KiB}
    - {kind: all-to-all, qp: 2, op: write, size: 8KiB}
""")
            out = os.path.join(tmp, "out")
            run_sim(cfg, out)
            where = collections.defaultdict(set)
            for spine in range(4):
                for path in glob.glob(os.path.join(out, "pcap", f"spine{spine}-*.pcap")):
                    for _, f in pcap_records(path):
                        if ipv4_src(f):
                            where[(f[26:30], f[30:34], f[34:36])].add(spine)
        self.assertGreater(len(where), 200)
        self.assertTrue(all(len(v) == 1 for v in where.values()))
        per_spine = collections.Counter(next(iter(v)) for v in where.values())
        for spine in range(4):
            self.assertGreater(per_spine[spine], len(where) / 4 * 0.75, per_spine)


class Deadlock(unittest.TestCase):
    """examples/fabric-deadlock.yaml: a ring of five switches whose flows
    pause each other in a cycle."""

    def ring_cycle(self, cycle):
        """Each port of the cycle leads from switch i to switch i+1 of the
        ring, and the next port is on that switch."""
        nodes = [p["port"].rsplit("-", 1)[0] for p in cycle]
        self.assertEqual(len(nodes), 5)
        self.assertEqual(sorted(nodes), [f"s{i}" for i in range(5)])
        for a, b in zip(nodes, nodes[1:] + nodes[:1]):
            self.assertEqual((int(a[1]) + 1) % 5, int(b[1]))
        self.assertTrue(all(p["priority"] == 3 for p in cycle))

    def test_detected_and_reported(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = subprocess.run([RDMASIM, "sim", os.path.join(EXAMPLES, "fabric-deadlock.yaml"), "--out", out],
                               capture_output=True, text=True, timeout=seconds(120))
            self.assertEqual(p.returncode, 0, p.stderr)
            s = summary(out)
        self.assertIn("deadlock   at ", p.stdout)
        self.assertEqual(s["totals"]["completed"], 0)
        (dl,) = s["fabric"]["deadlocks"]
        self.ring_cycle(dl["cycle"])
        # found within two checks of the default interval (100 us) once the
        # queues stop
        self.assertLessEqual(dl["time_ps"], 300 * 10**6)

    def test_watchdog_breaks_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            # the watchdog drops frames, and the queue pairs resend them
            # after their timeout: 1 ms, to recover within the 3 ms run
            run_sim(os.path.join(EXAMPLES, "fabric-deadlock.yaml"), out,
                    "--set", "topology.switch_defaults.pfc.watchdog=200us", "--set", "nic.timeout=1ms")
            s = summary(out)
            pfc = table(out, "pfc.csv")
        self.assertEqual(s["totals"]["completed"], 5)
        self.assertGreater(s["fabric"]["watchdog_drops"], 0)
        self.ring_cycle(s["fabric"]["deadlocks"][0]["cycle"])
        storms = [r for r in pfc if r["event"] == "watchdog-drop"]
        self.assertTrue(storms)
        # the watchdog acts on a class paused at least as long as its limit
        self.assertTrue(all(int(r["duration_ps"]) >= 200 * 10**6 for r in storms))


class Determinism(unittest.TestCase):
    def test_same_seed_same_bytes(self):
        for example in ("fabric-fat-tree-dcqcn.yaml", "fabric-deadlock.yaml", "fabric-incast-lossy.yaml"):
            with tempfile.TemporaryDirectory() as tmp:
                cfg = os.path.join(EXAMPLES, example)
                runs = []
                for name in "ab":
                    out = os.path.join(tmp, name)
                    run_sim(cfg, out, "--set", "trace=[h0]")
                    runs.append(output_files(out))
                for f in ("pfc.csv", "qlen.csv", "rates.csv", "summary.json", "pcap/h0-0.pcap"):
                    self.assertIn(f, runs[0])
                self.assertEqual(runs[0], runs[1], example)


class Plot(unittest.TestCase):
    PNGS = ("qlen.png", "rates.png", "pauses.png", "slowdown.png")

    def plot(self, out):
        p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "scripts", "plot.py"), out],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), [os.path.join(out, n) for n in self.PNGS])
        for name in self.PNGS:
            with open(os.path.join(out, name), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertFalse([n for n in os.listdir(out) if n.endswith(".tmp")])

    def setUp(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed")

    def test_plot_writes_four_pngs(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(os.path.join(EXAMPLES, "fabric-incast-pfc.yaml"), out)
            self.plot(out)

    def test_a_run_without_fabric_data_still_plots(self):
        """No queue, no pause: the panels say so instead of failing."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(os.path.join(EXAMPLES, "write-one-link.yaml"), out)
            self.plot(out)

    def test_groups_and_directions(self):
        sys.path.insert(0, os.path.join(TOP, "scripts"))
        import plot
        msgs = [{"src": "h0", "dst": "h1", "op": "write", "bytes": str(b), "status": "ok",
                 "slowdown": str(s)} for b, s in ((100, 1), (100, 3), (2000, 2), (2000, 4), (2000, 8))]
        msgs.append({"src": "h2", "dst": "h3", "op": "read", "bytes": "5", "status": "pending", "slowdown": ""})
        self.assertEqual(plot.slowdown_groups(msgs), [(100, [1, 3, 3]), (2000, [4, 8, 8])])
        # a READ's data comes back: h3 -> h2 carries it, h1 -> h0 only acknowledges
        self.assertEqual(plot.data_directions(msgs), {("h0", "h1"), ("h3", "h2")})


if __name__ == "__main__":
    main(default_limit=60)
