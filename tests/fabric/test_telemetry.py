#!/usr/bin/python3
"""In-band telemetry for HPCC (sim/fabric/telemetry.c, codec/ioam.c): the
IOAM pre-allocated trace (RFC 9197 4.4) in an IPv6 Hop-by-Hop header (RFC
9486) of every request, filled by each switch as the frame leaves it, and
echoed by the responder in its ACK. Checked through the captures of both
hosts, decoded by `rdmasim decode --json` and, independently, by tshark.

Expectations come from the configuration: h0 -> leaf0 -> spine0 -> leaf1
-> h1, host links at 100 Gb/s, leaf-spine links at 400 Gb/s, so a
request reaching h1 carries three nodes, the last switch's first (the
namespace gives link rates in Mb/s); a request leaving h0 carries five
empty slots (nic.hpcc.hops), 16 + 5 x 28 = 156 octets rounded up to 160."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, write_config  # noqa: E402
from testlib import main  # noqa: E402
TSHARK = shutil.which("tshark")
NS, NS_ECHO = 0x8001, 0x8002

CONFIG = """
seed: 1
payload: none
nic: {cc: hpcc, ipv6: true}
trace: [h0, h1]
topology:
  generate: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 1,
             host_link: {rate: 100Gbps, delay: 1us}, fabric_link: {rate: 400Gbps, delay: 1us}}
workload:
  messages:
    - {src: h0, dst: h1, size: 64KiB}
"""


def decode(path):
    p = subprocess.run([RDMASIM, "decode", "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    return [json.loads(line) for line in p.stdout.splitlines()]


class Telemetry(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        out = os.path.join(cls.tmp.name, "out")
        run_sim(write_config(cls.tmp.name, CONFIG), out)
        cls.pcap = {h: os.path.join(out, "pcap", f"{h}-0.pcap") for h in ("h0", "h1")}
        cls.frames = {h: decode(p) for h, p in cls.pcap.items()}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def requests(self, host):
        return [f for f in self.frames[host] if f["bth"]["opcode_name"].startswith("RC RDMA WRITE")]

    def acks(self, host):
        return [f for f in self.frames[host] if f["bth"]["opcode_name"] == "RC Acknowledge"]

    def test_every_frame_is_valid(self):
        for host, frames in self.frames.items():
            for f in frames:
                self.assertNotIn("error", f, (host, f))
                self.assertTrue(f["icrc"]["ok"], (host, f))
                self.assertIn("ioam", f)

    def test_requests_leave_with_room_and_arrive_with_three_nodes(self):
        sent, got = self.requests("h0"), self.requests("h1")
        self.assertEqual(len(sent), 16)  # 64 KiB in 4096-byte packets
        self.assertEqual(len(got), len(sent))
        for f in sent:
            t = f["ioam"]
            self.assertEqual((t["namespace"], t["slots"], t["nodes"], t["node_len"]), (NS, 5, [], 7))
            self.assertEqual(t["remaining"], 5 * 7)
            self.assertEqual(f["ipv6"]["nxt"], 0)  # Hop-by-Hop
        tx = None
        for f in got:
            t = f["ioam"]
            self.assertEqual((t["namespace"], t["slots"], t["remaining"]), (NS, 5, 2 * 7))
            nodes = t["nodes"][::-1]  # in path order
            self.assertEqual([n["ns_data"] for n in nodes], [400000, 400000, 100000])
            self.assertEqual(len({n["node_id"] for n in nodes}), 3)
            times = [n["ts_sec"] * 10**9 + n["ts_frac"] for n in nodes]
            self.assertEqual(times, sorted(times))
            # the port towards h1 has sent every earlier request (and
            # nothing else): its octet count grows by their wire bytes
            sent_bytes = int(nodes[2]["ns_data_wide"], 16)
            if tx is not None:
                self.assertEqual(sent_bytes, tx)
            tx = sent_bytes + len_of(f) + 24

    def test_acks_echo_the_request_they_acknowledge(self):
        got = {f["bth"]["psn"]: f["ioam"] for f in self.requests("h1")}
        acks = self.acks("h0")
        self.assertEqual(len(acks), len(got))  # one per request under HPCC
        for a in acks:
            t = a["ioam"]
            self.assertEqual((t["namespace"], t["remaining"]), (NS_ECHO, 0))
            self.assertEqual(t["slots"], 3)
            self.assertEqual(t["nodes"], got[a["bth"]["psn"]]["nodes"])

    @unittest.skipUnless(TSHARK, "tshark is not installed")
    def test_tshark_reads_the_same_telemetry(self):
        """tshark 4.0 decodes the IOAM trace (its IPv6 dissector) with no
        malformed frame and no expert warning or error, the UDP checksum
        (which does not cover extension headers) good, and the same node
        data as rdmasim decode."""
        for host, path in self.pcap.items():
            fields = ["frame.number", "ipv6.opt.ioam.trace.ns", "ipv6.opt.ioam.trace.remlen",
                      "ipv6.opt.ioam.trace.node.id", "ipv6.opt.ioam.trace.node.qdepth",
                      "ipv6.opt.ioam.trace.node.nsdata_wide", "udp.checksum.status", "infiniband.bth.psn",
                      "_ws.malformed", "_ws.expert.severity"]
            args = [TSHARK, "-n", "-r", path, "-o", "udp.check_checksum:TRUE", "-T", "fields"]
            for f in fields:
                args += ["-e", f]
            p = subprocess.run(args, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = [line.split("\t") for line in p.stdout.splitlines()]
            self.assertEqual(len(rows), len(self.frames[host]))
            for row, f in zip(rows, self.frames[host]):
                where = f"{host} frame {row[0]}"
                self.assertEqual(row[8], "", f"{where}: malformed")
                for sev in filter(None, row[9].split(",")):
                    self.assertLess(int(sev, 0), 0x00600000, f"{where}: expert {sev}")
                self.assertEqual(row[6], "1", f"{where}: UDP checksum")  # 1: good
                t = f["ioam"]
                self.assertEqual(int(row[1]), t["namespace"], where)
                self.assertEqual(int(row[2]), t["remaining"], where)
                self.assertEqual(int(row[7]), f["bth"]["psn"], where)
                ids = [int(x, 16) for x in filter(None, row[3].split(","))]
                self.assertEqual(ids, [n["node_id"] for n in t["nodes"]], where)
                q = [int(x, 16) for x in filter(None, row[4].split(","))]
                self.assertEqual(q, [n["queue_depth"] for n in t["nodes"]], where)
                w = [int(x, 16) for x in filter(None, row[5].split(","))]
                self.assertEqual(w, [int(n["ns_data_wide"], 16) for n in t["nodes"]], where)


def len_of(f):
    """Bytes of the frame as sent (its IPv6 payload and the headers before)."""
    return 14 + 40 + f["ipv6"]["plen"]


if __name__ == "__main__":
    main(default_limit=300)
