#!/usr/bin/python3
"""The InfiniBand fabric of `rdmasim sim` (topology.fabric: infiniband),
held to references that do not come from the simulator:

- the CRCs: a CRC-16 written here from the polynomial (0x100B, least
  significant bit first, as the VCRCs of a real capture show) checks every
  VCRC and LPCRC the simulator wrote, and zlib's CRC-32 every ICRC;
- completion times through 0, 1 and 3 cut-through switches against the
  wire arithmetic of IBA packets at 4x EDR (100 Gb/s of data after
  64b/66b): a packet is LRH 8 + BTH 12 (+ RETH 16 on the first) + payload +
  ICRC 4 + VCRC 2 bytes, plus 2 bytes of delimiters on the wire; a
  cut-through switch forwards once it has the start delimiter and the LRH
  (9 bytes), its latency later;
- credits: incasts up to 64 -> 1 on small buffers, where no packet may
  arrive beyond the credit its receiver granted and none may be dropped;
- VL arbitration: weights 64 and 192 (x 64 bytes) share a link 1:3;
- the subnet manager: following the forwarding tables of subnet.txt from
  every switch reaches every LID, and ftree puts as many routes on every
  up-link of a k=8 fat-tree;
- tshark 4.0 on every frame of every IB example, and `rdmasim replay` on an
  HCA's trace against messages.csv.
"""
import collections
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, summary, table, write_config  # noqa: E402
from testlib import RDMASIM, limit, main, read_pcap, seconds  # noqa: E402

EXAMPLES = os.path.join(TOP, "examples")
REAL_ERF = os.path.join(TOP, "pcaps", "real", "ib-native-erf.pcap")
TSHARK = shutil.which("tshark")
PS = 10**12
EDR4 = 100 * 10**9  # 4x EDR: 4 lanes x 25.78125 Gbaud x 64/66
LRH, BTH, RETH, ICRC, VCRC, WIRE, CUT = 8, 12, 16, 4, 2, 2, 9
ACK = LRH + BTH + 4 + ICRC + VCRC  # AETH


def crc16_ib(data):
    """VCRC and LPCRC: polynomial 0x100B, initial 0xFFFF, final xor 0xFFFF,
    bits taken least significant first (reflected polynomial 0xD008)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xD008 if crc & 1 else crc >> 1
    return crc ^ 0xFFFF


def icrc_local(pkt):
    """ICRC of a packet with an LRH and no GRH (IBA 7.8.1): CRC-32 over the
    packet up to the ICRC with the LRH's VL and the BTH's byte 4 set to ones."""
    body = bytearray(pkt[:-ICRC - VCRC])
    body[0] |= 0xF0
    body[LRH + 4] = 0xFF
    return zlib.crc32(bytes(body))


def erf_records(path):
    """(ERF type, packet bytes, wire length) of every record of an ERF pcap."""
    head, recs = read_pcap(path)
    assert struct.unpack("<I", head[20:24])[0] == 197, f"{path}: not ERF"
    out = []
    for _, data in recs:
        rtype, _, rlen, _, wlen = struct.unpack(">BBHHH", data[8:16])
        out.append((rtype & 0x7F, data[16:rlen], wlen))
    return out


def ser(nbytes, rate=EDR4):
    return -(-nbytes * 8 * PS // rate)


def write_packets(size, mtu=4096):
    """Wire bytes of the packets of one RDMA WRITE of `size` bytes."""
    out, off = [], 0
    while True:
        n = min(mtu, size - off)
        pad = (4 - n % 4) % 4
        out.append(LRH + BTH + (RETH if off == 0 else 0) + n + pad + ICRC + VCRC + WIRE)
        off += n
        if off >= size:
            return out


def chain(nswitch, latency_ns):
    """h0 - s0 - ... - s(n-1) - h1, 4x EDR, 1 us links."""
    sw = [f"s{i}" for i in range(nswitch)]
    ends = ["h0", *sw, "h1"]
    links = "\n".join(f"    - {{a: {a}, b: {b}}}" for a, b in zip(ends, ends[1:]))
    return f"""
topology:
  fabric: infiniband
  link_defaults: {{rate: 4xEDR, delay: 1us}}
  switch_defaults: {{latency: {latency_ns}ns}}
  hosts: [h0, h1]
  switches: [{", ".join(sw)}]
  links:
{links}
"""


class Crcs(unittest.TestCase):
    def test_the_reference_crc16_is_the_vcrc_of_a_real_capture(self):
        seen = 0
        for rtype, pkt, wlen in erf_records(REAL_ERF):
            if rtype != 21 or len(pkt) < wlen:
                continue
            self.assertEqual(crc16_ib(pkt[:-VCRC]), struct.unpack("<H", pkt[-VCRC:])[0])
            seen += 1
        self.assertGreater(seen, 20)


class CompletionTimes(unittest.TestCase):
    """One WRITE alone on a chain of h hops equal in rate: the last packet
    starts after the others, its header crosses each switch (9 bytes, then
    the latency), it arrives whole, and the ACK comes back the same way.
    No flow control packet is on the wire: credits are returned only past
    1 MiB and the periodic ones are off."""

    def expected(self, size, nswitch, latency_ps, delay_ps=10**6):
        hops = nswitch + 1
        data = write_packets(size)
        through = nswitch * (ser(CUT) + latency_ps) + hops * delay_ps
        last_in = sum(ser(b) for b in data) + through
        # a packet shorter than the header a switch waits for would go store-and-forward
        self.assertGreater(ACK + WIRE, CUT)
        return last_in + ser(ACK + WIRE) + through

    @limit(60)
    def test_write_through_0_1_3_switches(self):
        with tempfile.TemporaryDirectory() as tmp:
            for nswitch in (0, 1, 3):
                for size in (8, 4096, 100000):
                    cfg = chain(nswitch, 130) + f"""
infiniband: {{credit_update: 1MiB, fc_period: off}}
workload:
  messages:
    - {{src: h0, dst: h1, op: write, size: {size}}}
"""
                    out = os.path.join(tmp, f"o{nswitch}-{size}")
                    run_sim(write_config(tmp, cfg, f"c{nswitch}-{size}.yaml"), out)
                    m = table(out, "messages.csv")[0]
                    self.assertEqual(m["status"], "ok")
                    want = self.expected(size, nswitch, 130_000)
                    self.assertEqual(int(m["fct_ps"]), want, (nswitch, size))
                    self.assertEqual(int(m["ideal_ps"]), want, (nswitch, size))
                    s = summary(out)
                    self.assertEqual(s["fabric"]["flow_control_packets"], 0)


class Credits(unittest.TestCase):
    """No packet arrives beyond the credit its receiver granted (the
    receiver counts any that does: credit_overruns) and none is dropped,
    under incasts up to 64 -> 1, with the smallest buffers allowed (one
    largest packet and one credit update: the senders wait for credit all
    the time) and with the automatic ones."""

    def incast(self, tmp, senders, extra="", name="i", rate="4xEDR"):
        hosts = ", ".join(f"h{i}" for i in range(senders + 1))
        links = "\n".join(f"    - {{a: h{i}, b: {'s0' if i < senders // 2 else 's1'}}}"
                          for i in range(senders)) + f"\n    - {{a: h{senders}, b: s2}}"
        cfg = f"""
seed: 3
topology:
  fabric: infiniband
  link_defaults: {{rate: {rate}, delay: 500ns}}
  hosts: [{hosts}]
  switches: [s0, s1, s2]
  links:
{links}
    - {{a: s0, b: s2}}
    - {{a: s1, b: s2, rate: 4xHDR}}
{extra}
workload:
  generate: {{kind: incast, to: h{senders}, op: write, size: 96KiB}}
"""
        out = os.path.join(tmp, name)
        run_sim(write_config(tmp, cfg, name + ".yaml"), out)
        return out

    def check_lossless(self, out, senders):
        s = summary(out)
        msgs = table(out, "messages.csv")
        self.assertEqual(len(msgs), senders)
        self.assertTrue(all(m["status"] == "ok" and m["data"] == "ok" for m in msgs))
        self.assertEqual(s["fabric"]["credit_overruns"], 0)
        for p in s["ports"]:
            self.assertEqual(p["credit_overruns"], 0, p["port"])
            self.assertEqual(p["tail_drops"], 0, p["port"])
            self.assertEqual(p["lost"], 0, p["port"])
        self.assertGreater(s["fabric"]["flow_control_packets"], 0)
        # the incast did back up into the senders
        self.assertGreater(s["fabric"]["credit_blocked_ps"], 0)
        return s

    @limit(120)
    def test_incasts_up_to_64_to_1_lose_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            for senders in (2, 16, 64):
                for extra, tag in (("", "auto"),
                                   ("infiniband: {vl_buffer: 4224, credit_update: 64}", "small")):
                    out = self.incast(tmp, senders, extra, f"i{senders}{tag}")
                    self.check_lossless(out, senders)

    def test_links_faster_than_the_switch_latency(self):
        """At 4x NDR a 4 KiB packet takes 82 ns, less than a switch's
        forwarding latency (130 ns), which the model adds to the packet's
        arrival: a flow control packet sent right after it must still
        reach the switch after it, or its FCTBS would count the packet a
        second time and grant credit the buffer does not have."""
        with tempfile.TemporaryDirectory() as tmp:
            self.check_lossless(self.incast(tmp, 16, name="ndr", rate="4xNDR"), 16)

    def test_traffic_both_ways_on_the_smallest_buffers(self):
        """Data, ACKs, READ requests and responses both ways through one
        VL: credit left at every size, down to one block short of a largest
        packet (a 1-block ACK after a flow control packet), and still no
        packet arrives beyond its credit."""
        with tempfile.TemporaryDirectory() as tmp:
            cfg = """
seed: 5
infiniband: {vl_buffer: 4224, credit_update: 64}
topology:
  fabric: infiniband
  link_defaults: {rate: 4xEDR, delay: 300ns}
  generate: {kind: star, hosts: 4}
workload:
  generate:
    - {kind: all-to-all, op: write, size: 40000, repeat: 3}
    - {kind: all-to-all, op: read, size: 30000, qp: 2, repeat: 3}
    - {kind: all-to-all, op: send, size: 777, qp: 3, repeat: 5}
"""
            out = os.path.join(tmp, "o")
            run_sim(write_config(tmp, cfg), out)
            s = summary(out)
            self.assertEqual(s["totals"]["completed"], s["totals"]["messages"])
            for p in s["ports"]:
                self.assertEqual(p["credit_overruns"], 0, p["port"])

    def test_an_update_larger_than_the_window_still_moves_data(self):
        """The 12-bit counters give a sender at most 2048 blocks (128 KiB)
        of credit: a credit_update beyond that (1 MiB) must not wait for
        blocks the sender can never send. The transfer completes with no
        timeout, held back only by a credit round trip per window."""
        with tempfile.TemporaryDirectory() as tmp:
            cfg = chain(1, 130) + """
infiniband: {credit_update: 1MiB, fc_period: off}
workload:
  messages: [{src: h0, dst: h1, op: write, size: 1MiB}]
"""
            out = os.path.join(tmp, "o")
            run_sim(write_config(tmp, cfg), out)
            s = summary(out)
            self.assertEqual(s["totals"]["completed"], 1)
            self.assertEqual(s["totals"]["timeouts"], 0)
            (m,) = table(out, "messages.csv")
            self.assertLess(float(m["slowdown"]), 1.25)

    def test_credits_ride_in_flow_control_packets(self):
        """Every flow control packet a port sent arrived at its peer."""
        with tempfile.TemporaryDirectory() as tmp:
            s = summary(self.incast(tmp, 8))
            ports = {p["port"]: p for p in s["ports"]}
            for p in ports.values():
                self.assertEqual(p["fc_sent"], ports[p["peer"]]["fc_received"], p["port"])


class LinkFaults(unittest.TestCase):
    """A fat-tree link that carries flows goes down and comes back up
    (examples/ib-fat-tree.yaml with a fault). Flow control starts afresh
    when the link comes up (IBA vol. 1, 7.9.4): each end sends a flow
    control packet per VL and resumes the periodic ones. What the queue
    pairs lost they resend after their timeout, so every message completes
    within a few hundred microseconds; a stale credit limit left over from
    before the fault blocked both ends of the link for good, and two
    messages failed after 7 retries of 67 ms each."""

    def run_fault(self, tmp, fault):
        with open(os.path.join(EXAMPLES, "ib-fat-tree.yaml")) as f:
            text = f.read()
        out = os.path.join(tmp, "o")
        run_sim(write_config(tmp, text + f"faults:\n  - {fault}\n"), out)
        return out

    def test_messages_complete_after_the_link_comes_back(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = self.run_fault(tmp, "{a: agg0, b: core0, down: 20us, up: 60us}")
            s = summary(out)
            msgs = table(out, "messages.csv")
        self.assertEqual(len(msgs), 128)
        self.assertEqual({m["status"] for m in msgs}, {"ok"})
        self.assertGreater(s["totals"]["link_losses"], 0)
        self.assertGreater(s["totals"]["retransmitted"], 0)
        self.assertLess(s["totals"]["end_time_ps"], 1000 * 10**6)
        ports = {p["port"]: p for p in s["ports"]}
        for name in ("agg0-0", "core0-0"):
            # the ends of the link that went down waited for credit no
            # longer than the others
            self.assertLessEqual(ports[name]["credit_blocked_ps"],
                                 max(p["credit_blocked_ps"] for p in s["ports"] if p["port"] not in ("agg0-0", "core0-0")))


    def test_frames_for_a_host_cut_off_have_no_route(self):
        """While h64's only link is down, the subnet manager's tables have
        no port for it: what switches receive for it counts as unroutable,
        not as bad, and the messages complete once it is back."""
        with tempfile.TemporaryDirectory() as tmp:
            t = summary(self.run_fault(tmp, "{a: edge16, b: h64, down: 20us, up: 60us}"))["totals"]
        self.assertEqual(t["completed"], 128)
        self.assertGreater(t["unroutable"], 0)
        self.assertEqual(t["bad_frames_dropped"], 0)


class VlArbitration(unittest.TestCase):
    def test_weights_1_to_3_share_the_link_1_to_3(self):
        """examples/ib-vl-arbitration.yaml: VL 0 weight 64, VL 1 weight 192;
        h0 sends 2 MiB on VL 0 and h1 6 MiB on VL 1 into one 100 Gb/s port:
        at 1:3 both finish together."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "o")
            run_sim(os.path.join(EXAMPLES, "ib-vl-arbitration.yaml"), out)
            m = {r["src"]: int(r["end_ps"]) for r in table(out, "messages.csv")}
            share = 3 * (2 / m["h0"]) / (6 / m["h1"])  # VL 0 to VL 1 throughput, times 3
            self.assertAlmostEqual(share, 1.0, delta=0.02)
            # and the link was full meanwhile: 8 MiB of payload at 100 Gb/s, plus headers
            self.assertLess(max(m.values()), 1.02 * ser(8 * 2**20 * (4096 + 30) // 4096))


def parse_subnet(path):
    """(LID of each node name, {(node, IB port): peer name}, {switch: {LID: port}})."""
    lid, peer, lft = {}, {}, collections.defaultdict(dict)
    node = switch = None
    with open(path) as f:
        for line in f:
            m = re.match(r'(Switch|Ca)\t\d+ "[SH]-[0-9a-f]+"\t\t# "([^"]+)"', line)
            if m:
                node, switch = m.group(2), None
                lm = re.search(r"lid (\d+)", line)
                if lm:
                    lid[node] = int(lm.group(1))
                continue
            m = re.match(r'\[(\d+)\].*# (?:lid (\d+) lmc \d+ )?"([^"]+)" lid (\d+)', line)
            if m and node:
                peer[(node, int(m.group(1)))] = m.group(3)
                if m.group(2):
                    lid[node] = int(m.group(2))
                lid.setdefault(m.group(3), int(m.group(4)))
                continue
            m = re.match(r"Unicast lids .* \((.+)\):", line)
            if m:
                switch, node = m.group(1), None
                continue
            m = re.match(r"0x([0-9a-f]{4}) (\d{3}) :", line)
            if m and switch:
                lft[switch][int(m.group(1), 16)] = int(m.group(2))
    return lid, peer, lft


class SubnetManager(unittest.TestCase):
    def run_fat_tree(self, tmp, routing):
        out = os.path.join(tmp, routing)
        run_sim(os.path.join(EXAMPLES, "ib-fat-tree.yaml"), out, "--set", f"topology.routing={routing}",
                "--set", "workload.messages=[{src: h0, dst: h64, size: 4KiB}]")
        return parse_subnet(os.path.join(out, "subnet.txt"))

    def reach_all(self, lid, peer, lft):
        hosts = [n for n in lid if n.startswith("h")]
        self.assertEqual(len(hosts), 128)
        for name, target in lid.items():
            for h in hosts:
                at, hops = peer[(h, 1)], 0
                while at != name:
                    self.assertIn(target, lft[at], (at, name))
                    port = lft[at][target]
                    if port == 0:
                        break
                    at = peer[(at, port)]
                    hops += 1
                    self.assertLess(hops, 8, f"{h} -> {name}: a loop")
                self.assertEqual(at, name)

    @limit(120)
    def test_every_lft_reaches_every_lid(self):
        with tempfile.TemporaryDirectory() as tmp:
            for routing in ("minhop", "ftree"):
                self.reach_all(*self.run_fat_tree(tmp, routing))

    @limit(120)
    def test_ftree_leaves_a_shift_permutation_collision_free(self):
        """examples/ib-fat-tree.yaml: under ftree every flow of the shift
        permutation has its path to itself, so each completes in its ideal
        time but for the credits of the flow coming the other way (a flow
        control packet, 8 wire bytes, per 4 KiB packet: 0.2%); under
        minhop, which balances LIDs and not flows, some share a link."""
        with tempfile.TemporaryDirectory() as tmp:
            worst = {}
            for routing in ("ftree", "minhop"):
                out = os.path.join(tmp, routing)
                run_sim(os.path.join(EXAMPLES, "ib-fat-tree.yaml"), out, "--set", f"topology.routing={routing}")
                worst[routing] = max(float(m["slowdown"]) for m in table(out, "messages.csv"))
            self.assertLess(worst["ftree"], 1.003)
            self.assertGreater(worst["minhop"], 1.5)

    def test_ftree_balances_every_up_link(self):
        """On the k=8 fat-tree each edge switch sends the 124 host LIDs
        outside it over 4 up-links, each aggregation switch the 112 outside
        its pod over 4: 31 and 28 on every one."""
        with tempfile.TemporaryDirectory() as tmp:
            lid, peer, lft = self.run_fat_tree(tmp, "ftree")
            tier = {"edge": 0, "agg": 1, "core": 2}
            kind = {n: re.match(r"[a-z]+", n).group(0) for n in lid}
            host_lids = {lid[n] for n in lid if kind[n] == "h"}
            for sw, table_ in lft.items():
                if kind[sw] == "core":
                    continue
                up = collections.Counter(port for l, port in table_.items() if l in host_lids and port
                                         and kind[peer[(sw, port)]] != "h"
                                         and tier[kind[peer[(sw, port)]]] > tier[kind[sw]])
                self.assertEqual(len(up), 4, sw)
                self.assertEqual(set(up.values()), {31 if kind[sw] == "edge" else 28}, sw)

    def test_lids_beyond_the_unicast_range_are_refused(self):
        p = subprocess.run([RDMASIM, "sim", "--check", os.path.join(EXAMPLES, "ib-fat-tree.yaml"),
                            "--set", "infiniband.lmc=7", "--set", "workload.messages=[]",
                            "--set", "topology.generate.k=16"],
                           capture_output=True, text=True, timeout=seconds(60))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("at most 49151 unicast LIDs", p.stderr)


@unittest.skipUnless(TSHARK, "tshark is not installed")
class Traces(unittest.TestCase):
    """Every frame of every InfiniBand example: `rdmasim decode --strict`
    accepts it, tshark dissects it without an error, and its CRCs are the
    ones computed here.

    tshark 4.0 reports every flow control packet as malformed: its
    dissector of InfiniBand link packets first runs the data packets'
    address parser, which reads an 8-byte LRH from the 6-byte packet (an
    exception in dissect_general_info). Those frames are checked here
    instead: tshark names them "InfiniBand Link" flow control, and their
    fields and LPCRC are read from the bytes."""

    def tshark(self, path):
        p = subprocess.run([TSHARK, "-n", "-r", path, "-T", "fields", "-e", "frame.number",
                            "-e", "frame.protocols", "-e", "_ws.col.Info", "-e", "_ws.malformed",
                            "-e", "_ws.expert.severity"], capture_output=True, text=True,
                           timeout=seconds(120))
        self.assertEqual(p.returncode, 0, p.stderr)
        return [line.split("\t") for line in p.stdout.splitlines()]

    @limit(240)
    def test_examples(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("ib-fat-tree", "ib-incast", "ib-vl-arbitration"):
                out = os.path.join(tmp, name)
                run_sim(os.path.join(EXAMPLES, name + ".yaml"), out, "--set", "snaplen=65535",
                        "--set", "trace=[h0, h1]", "--set", "infiniband.cc.enable=true")
                pcaps = sorted(glob.glob(os.path.join(out, "pcap", "*.pcap")))
                self.assertEqual(len(pcaps), 2)
                for path in pcaps:
                    self.check_file(path)

    def check_file(self, path):
        d = subprocess.run([RDMASIM, "decode", "--strict", path], capture_output=True, text=True,
                           timeout=seconds(60))
        self.assertEqual(d.returncode, 0, d.stderr[-2000:])
        recs = erf_records(path)
        rows = self.tshark(path)
        self.assertEqual(len(rows), len(recs))
        kinds = collections.Counter()
        for row, (rtype, pkt, wlen) in zip(rows, recs):
            self.assertEqual(len(pkt), wlen, "the traces keep whole packets")
            if rtype == 25:
                self.assertEqual(len(pkt), 6)
                self.assertIn("infiniband_link", row[1])
                self.assertIn("Flow Control", row[2])
                self.assertLessEqual(pkt[0] >> 4, 1, "operand 0 or 1")
                self.assertEqual(crc16_ib(pkt[:4]), struct.unpack("<H", pkt[4:])[0])
                kinds["flow control"] += 1
                continue
            self.assertEqual(rtype, 21)
            self.assertEqual(row[3], "", f"{path}: frame {row[0]} is malformed")
            for sev in filter(None, row[4].split(",")):
                self.assertLess(int(sev, 0), 0x00600000, f"{path}: frame {row[0]}: expert {sev}")
            self.assertIn("infiniband", row[1])
            self.assertEqual(pkt[1] & 3, 2, "LNH: IBA local")
            self.assertEqual((pkt[4] << 8 | pkt[5]) & 0x7FF, (len(pkt) - VCRC) // 4, "PktLen")
            self.assertEqual(icrc_local(pkt), struct.unpack("<I", pkt[-6:-2])[0], f"{path} {row[0]}")
            self.assertEqual(crc16_ib(pkt[:-2]), struct.unpack("<H", pkt[-2:])[0], f"{path} {row[0]}")
            kinds[pkt[LRH]] += 1
        self.assertGreater(kinds["flow control"], 0, path)

    def test_traces_without_flow_control_packets_open_cleanly(self):
        """infiniband.trace_flow_control: false leaves the link packets out
        of the traces, for a Wireshark that shows no frame in red."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "o")
            run_sim(os.path.join(EXAMPLES, "ib-vl-arbitration.yaml"), out, "--set", "trace=[h0]",
                    "--set", "infiniband.trace_flow_control=false")
            path = os.path.join(out, "pcap", "h0-0.pcap")
            recs = erf_records(path)
            self.assertTrue(recs)
            self.assertEqual({r[0] for r in recs}, {21})
            rows = self.tshark(path)
            self.assertEqual(len(rows), len(recs))
            self.assertFalse([r for r in rows if r[3] or "infiniband_link" in r[1]])
            # the run itself still had them
            self.assertGreater(summary(out)["fabric"]["flow_control_packets"], 0)

    @limit(120)
    def test_replay_finds_the_messages_of_messages_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = chain(1, 130) + """
trace: [h0]
workload:
  messages:
    - {src: h0, dst: h1, op: write, size: 100000}
    - {src: h0, dst: h1, op: read, size: 20000, start: 30us}
    - {src: h1, dst: h0, op: send, size: 3000, start: 40us}
    - {src: h0, dst: h1, op: faa, start: 50us, add: 5}
    - {src: h1, dst: h0, op: write_imm, size: 9000, start: 60us, qp: 2}
"""
            out = os.path.join(tmp, "o")
            run_sim(write_config(tmp, cfg), out)
            p = subprocess.run([RDMASIM, "replay", "--json", os.path.join(out, "pcap", "h0-0.pcap")],
                               capture_output=True, text=True, timeout=seconds(60))
            self.assertEqual(p.returncode, 0, p.stderr)
            rep = json.loads(p.stdout)
            self.assertEqual(rep["summary"]["bad_frames"], 0)
            found = sorted((m["start_ns"], m["status"]) for m in rep["messages"])
            want = sorted((int(m["start_ps"]) // 1000, "ok") for m in table(out, "messages.csv"))
            self.assertEqual(len(found), len(want))
            self.assertEqual([s for _, s in found], [s for _, s in want])


if __name__ == "__main__":
    main()
