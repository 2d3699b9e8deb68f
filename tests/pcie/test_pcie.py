#!/usr/bin/python3
"""End-to-end tests of PCIe inside the hosts (`rdmasim sim` with a pcie
section): completion times and goodput against pcie-bench's model
(Neugebauer et al., SIGCOMM 2018), computed here from the specification's
figures, PCIe as the bottleneck of a 100 Gb/s link, GPUDirect placements,
the refused cross-socket path, the switch that turns the model off, and
determinism. DMA write goodput for 64, 256 and 1500-byte messages is one
of make validate's analytic rows (scripts/validate.py), asserted by
tests/fidelity/test_validate.py.

    raw  = GT/s x encoding x lanes            8b/10b Gen1-2, 128b/130b Gen3-5
    tlp  = raw x (1 - 8/ack - 8/fc - 4/1538)   ACK and UpdateFC DLLPs, SKP
    a write of sz bytes costs sz + ceil(sz/MPS) x 24 bytes on a link, a read
    ceil(sz/MRRS) x 24 bytes of requests one way and sz + ceil(sz/MPS) x 20
    of completions the other

ack and fc are the specification's intervals in symbol times (PCIe Base
Specification 5.0, tables 3-7 to 3-9 and 2-46 to 2-48) for the widths and
MPS used here."""
import csv
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, write_config  # noqa: E402
from testlib import main  # noqa: E402
EXAMPLES = os.path.join(TOP, "examples")
PS = 10**12

# Ethernet, IPv4, UDP, BTH, ICRC, preamble/FCS/gap; RETH, AETH
ETH, IPV4, UDP, BTH, ICRC, WIRE, RETH, AETH = 14, 20, 8, 12, 4, 24, 16, 4
MWR, MRD, CPL = 24, 24, 20
GTS = {1: 2.5e9, 2: 5e9, 3: 8e9, 4: 16e9, 5: 32e9}
# ACK and UpdateFC intervals (symbol times), Gen3 and later, by (width, MPS)
INTERVAL = {(16, 256): 168, (8, 256): 203}
RC_READ_LATENCY = 550_000  # ps, docs/config.md default
RC_LATENCY = 100_000
# a write into socket memory is there 140 ns after its last TLP arrived:
# the root complex's 100 ns and a DDR4-2400 row-miss write, ~40 ns
# (tRP + tRCD + CWL + burst; docs/config.md, pcie root write_latency)
RC_WRITE_LATENCY = 140_000


def tlp_rate(gen, width, mps=256):
    raw = GTS[gen] * (0.8 if gen <= 2 else 128 / 130) * width
    i = INTERVAL[width, mps]
    return raw * (1 - 8 / i - 8 / i - 4 / 1538)


def ser(nbytes, rate):
    return nbytes * 8 / rate * PS


def write_goodput(rate, sz, mps=256):
    return rate * sz / (sz + math.ceil(sz / mps) * MWR)


def read_goodput(rate, sz, mps=256):
    return rate * sz / (sz + math.ceil(sz / mps) * CPL)


def run(config, out, *args):
    """The run, whatever its exit status: the tests check it."""
    return run_sim(config, out, *args, check=False, timeout=300)


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def link(pcie, host, frm, to):
    (r,) = [r for r in pcie if r["host"] == host and r["from"] == frm and r["to"] == to]
    return r


PHASES = ["copy_ps", "doorbell_ps", "wqe_fetch_ps", "payload_read_ps", "wire_ps", "dma_write_ps",
          "ack_ps", "completion_ps"]


class Bottleneck(unittest.TestCase):
    """A NIC in a Gen3 x8 slot cannot fill a 100 Gb/s link: sending, its
    payload reads' completions fill the link toward it; receiving, its
    writes fill the link away from it."""

    def transfer(self, sender, receiver):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, f"""
payload: none
pcie: {{}}
topology:
  hosts:
    - {{name: a, pcie: {{link_defaults: {sender}}}}}
    - {{name: b, pcie: {{link_defaults: {receiver}}}}}
  links: [{{a: a, b: b, rate: 100Gbps, delay: 1us}}]
workload:
  messages: [{{src: a, dst: b, op: write, size: 16MiB}}]
""")
            out = os.path.join(tmp, "out")
            p = run(cfg, out)
            self.assertEqual(p.returncode, 0, p.stderr)
            (m,) = rows(os.path.join(out, "messages.csv"))
            pcie = rows(os.path.join(out, "pcie.csv"))
            ports = {r["port"]: r for r in rows(os.path.join(out, "ports.csv"))}
            with open(os.path.join(out, "summary.json")) as f:
                summary = json.load(f)
        goodput = 16 * 2**20 * 8 / int(m["fct_ps"]) * PS
        return goodput, pcie, ports, summary

    def assert_bottleneck(self, goodput, bound, pcie_link):
        """The goodput reaches the PCIe bound (within 3%, never above) and
        the PCIe link that limits it is busy."""
        self.assertLessEqual(goodput, bound)
        self.assertGreater(goodput, 0.97 * bound)
        self.assertGreater(float(pcie_link["utilization"]), 0.97)

    def test_sender_in_gen3_x8(self):
        goodput, pcie, ports, summary = self.transfer("{gen: 3, width: 8}", "{gen: 4, width: 16}")
        toward = link(pcie, "a", "socket0", "nic")
        self.assert_bottleneck(goodput, read_goodput(tlp_rate(3, 8), 4096), toward)
        self.assertLess(float(ports["a-0"]["utilization"]), 0.6)
        # 16 MiB in MRRS requests, answered by MPS completions
        # (and one 64-byte WQE fetch)
        self.assertEqual(int(toward["cpld_tlps"]) - 1, 16 * 2**20 // 256)
        self.assertEqual(int(link(pcie, "a", "nic", "socket0")["mrd_tlps"]) - 1, 16 * 2**20 // 512)
        # summary.json carries the same counters
        (host,) = [h for h in summary["pcie"] if h["host"] == "a"]
        (j,) = [x for x in host["links"] if x["from"] == "socket0" and x["to"] == "nic"]
        self.assertEqual(j["cpld_tlps"], int(toward["cpld_tlps"]))
        self.assertEqual(j["wire_bytes"], int(toward["wire_bytes"]))
        self.assertAlmostEqual(j["utilization"], float(toward["utilization"]), places=5)

    def test_receiver_in_gen3_x8(self):
        goodput, pcie, ports, _ = self.transfer("{gen: 4, width: 16}", "{gen: 3, width: 8}")
        away = link(pcie, "b", "nic", "socket0")
        self.assert_bottleneck(goodput, write_goodput(tlp_rate(3, 8), 4096), away)
        self.assertEqual(int(away["mwr_tlps"]), 16 * 2**20 // 256)
        self.assertEqual(int(away["payload_bytes"]), 16 * 2**20)

    def test_gen3_x16_keeps_up_with_100g(self):
        goodput, _, ports, _ = self.transfer("{gen: 3, width: 16}", "{gen: 3, width: 16}")
        wire = 100e9 * 4096 / (4096 + ETH + IPV4 + UDP + BTH + ICRC + WIRE)
        self.assertGreater(goodput, 0.99 * wire)
        self.assertGreater(float(ports["a-0"]["utilization"]), 0.99)


class Latency(unittest.TestCase):
    """One 64-byte WRITE alone: each step of its breakdown is the cost of
    its TLPs or frames; writes into memory take the root complex's write
    latency after their last TLP arrived."""

    def test_small_write_breakdown(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, """
pcie: {}
topology:
  hosts: [a, b]
  links: [{a: a, b: b, rate: 100Gbps, delay: 1us}]
workload:
  messages: [{src: a, dst: b, op: write, size: 64}]
""")
            p = run(cfg, os.path.join(tmp, "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            (m,) = rows(os.path.join(tmp, "out", "messages.csv"))
        rate, delay = tlp_rate(3, 16), 1_000_000
        read = ser(MRD, rate) + RC_READ_LATENCY + ser(64 + CPL, rate)
        frame = ETH + IPV4 + UDP + BTH + RETH + 64 + ICRC + WIRE
        ack = ETH + IPV4 + UDP + BTH + AETH + ICRC + WIRE
        want = {
            "copy_ps": 0,
            "doorbell_ps": RC_LATENCY + ser(8 + MWR, rate),
            "wqe_fetch_ps": read,
            "payload_read_ps": read,
            "wire_ps": ser(frame, 100e9) + delay,
            "dma_write_ps": ser(64 + MWR, rate),
            "ack_ps": ser(ack, 100e9) + delay,
            # the 64-byte completion entry crosses the NIC's link
            # (6,191.7 ps at 113.7 Gb/s), then 140 ns into memory: 146,191.7
            "completion_ps": ser(64 + MWR, rate) + RC_WRITE_LATENCY,
        }
        # the payload, likewise, is in memory 140 ns after its TLP arrived,
        # and its TLP arrived after the steps up to dma_write_ps
        want["delivery_ps"] = sum(want[k] for k in PHASES[:6]) + RC_WRITE_LATENCY
        for k, v in want.items():
            self.assertLess(abs(int(m[k]) - v), 4, (k, m[k], v))
        self.assertEqual(sum(int(m[k]) for k in PHASES), int(m["fct_ps"]))
        # ideal_ps: the network alone (the 162-byte frame, then the 86-byte
        # ACK back), then the completion entry alone into memory: 12,960 +
        # 1,000,000 + 6,880 + 1,000,000 + 146,191.7 = 2,166,031.7 ps; the host steps
        # before the first packet leaves (doorbell, WQE fetch, payload
        # read) are the hosts' share of the slowdown
        ideal = ser(frame, 100e9) + delay + ser(ack, 100e9) + delay + ser(64 + MWR, rate) + RC_WRITE_LATENCY
        self.assertLess(abs(int(m["ideal_ps"]) - ideal), 4, (m["ideal_ps"], ideal))

    def test_root_write_latency_is_a_key(self):
        """pcie.root.write_latency sets the time from a write's last TLP
        to its data in memory: 0 ends the completion at the root port."""
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, """
pcie: {root: {write_latency: 0ns}}
topology:
  hosts: [a, b]
  links: [{a: a, b: b, rate: 100Gbps, delay: 1us}]
workload:
  messages: [{src: a, dst: b, op: write, size: 64}]
""")
            p = run(cfg, os.path.join(tmp, "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            (m,) = rows(os.path.join(tmp, "out", "messages.csv"))
        self.assertLess(abs(int(m["completion_ps"]) - ser(64 + MWR, tlp_rate(3, 16))), 4, m["completion_ps"])

    def test_every_breakdown_adds_up(self):
        with tempfile.TemporaryDirectory() as tmp:
            for example in sorted(glob.glob(os.path.join(EXAMPLES, "pcie-*.yaml"))):
                out = os.path.join(tmp, os.path.basename(example))
                p = run(example, out)
                self.assertEqual(p.returncode, 0, p.stderr)
                for m in rows(os.path.join(out, "messages.csv")):
                    self.assertEqual(m["status"], "ok")
                    parts = [int(m[k]) for k in PHASES]
                    self.assertTrue(all(x >= 0 for x in parts))
                    self.assertEqual(sum(parts), int(m["fct_ps"]), (example, m["id"]))


class GpuDirect(unittest.TestCase):
    """The GPU pairs of examples/pcie-gpudirect.yaml: peer to peer below a
    switch runs at the wire's rate; through a root complex, peer reads run
    at peer_read_factor of the link; across sockets, of the inter-socket
    link; bounce buffers add two copies by the GPU's DMA engine."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        out = os.path.join(cls.tmp.name, "out")
        p = run(os.path.join(EXAMPLES, "pcie-gpudirect.yaml"), out)
        assert p.returncode == 0, p.stderr
        cls.msgs = {(m["src"], int(m["bytes"])): m for m in rows(os.path.join(out, "messages.csv"))}
        cls.pcie = rows(os.path.join(out, "pcie.csv"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def goodput(self, pair):
        m = self.msgs[pair + "-a", 16 * 2**20]
        return 16 * 2**20 * 8 / int(m["delivery_ps"]) * PS

    def test_switch_runs_at_wire_rate(self):
        wire = 200e9 * 4096 / (4096 + ETH + IPV4 + UDP + BTH + ICRC + WIRE)
        self.assertGreater(self.goodput("switch"), 0.99 * wire)
        # the peer traffic stays below the switch
        self.assertEqual(int(link(self.pcie, "switch-a", "plx", "socket0")["wire_bytes"]) < 2000, True)

    def test_root_complex_throttles_peer_reads(self):
        bound = 0.25 * read_goodput(tlp_rate(4, 16), 4096)
        g = self.goodput("root")
        self.assertLessEqual(g, bound)
        self.assertGreater(g, 0.97 * bound)

    def test_cross_socket_takes_the_socket_link(self):
        bound = 0.25 * read_goodput(150e9, 4096)
        g = self.goodput("cross")
        self.assertLessEqual(g, bound)
        self.assertGreater(g, 0.97 * bound)
        xs = link(self.pcie, "cross-a", "socket1", "socket0")
        self.assertEqual(int(xs["payload_bytes"]), 16 * 2**20 + 4096)

    def test_bounce_buffers_copy_twice(self):
        m = self.msgs["bounce-a", 16 * 2**20]
        copy = 5_000_000 + ser(16 * 2**20 + 16 * 2**20 // 256 * MWR, tlp_rate(4, 16))
        self.assertLess(abs(int(m["copy_ps"]) - copy) / copy, 1e-3)
        # the GPU on each side moved the message once, through its switch
        self.assertEqual(int(link(self.pcie, "bounce-a", "gpu0", "plx")["payload_bytes"]),
                         16 * 2**20 + 4096)
        self.assertEqual(int(link(self.pcie, "bounce-b", "plx", "gpu0")["payload_bytes"]),
                         16 * 2**20 + 4096)
        small = {p: int(self.msgs[p + "-a", 4096]["start_ps"]) + int(self.msgs[p + "-a", 4096]["delivery_ps"])
                 for p in ("switch", "bounce")}
        self.assertGreater(small["bounce"], small["switch"] + 2 * 5_000_000)


class Placement(unittest.TestCase):
    CONFIG = """
pcie:
  sockets: 2
  gpus: [{{name: gpu1, at: socket1}}]{extra}
topology:
  hosts: [a, b]
  links: [{{a: a, b: b}}]
workload:
  messages:
    - {{src: a, dst: b, op: write, size: 4096, dst_mem: gpu1}}
"""

    def test_cross_socket_peer_to_peer_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, self.CONFIG.format(extra=""))
            p = run(cfg, os.path.join(tmp, "out"))
            self.assertEqual(p.returncode, 2)
            self.assertEqual(p.stdout, "")
            (line,) = p.stderr.splitlines()
            with open(cfg) as f:
                text = f.read().split("\n")
            row = next(i for i, t in enumerate(text) if "dst_mem" in t)
            col = text[row].index("gpu1", text[row].index("dst_mem")) + 1
            self.assertTrue(line.startswith(f"{cfg}:{row + 1}:{col}: dst_mem: "), line)
            for name in ("memory region 'msg0.dst'", "GPU 'gpu1'", "NIC 'nic' of 'b'",
                         "socket 1", "socket 0", "cross_socket_p2p"):
                self.assertIn(name, line)
            self.assertFalse(os.path.exists(os.path.join(tmp, "out")))

    def test_cross_socket_allowed_crosses_the_socket_link(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, self.CONFIG.format(extra="\n  cross_socket_p2p: allow"))
            p = run(cfg, os.path.join(tmp, "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            pcie = rows(os.path.join(tmp, "out", "pcie.csv"))
        self.assertEqual(int(link(pcie, "b", "socket0", "socket1")["payload_bytes"]), 4096)
        self.assertEqual(int(link(pcie, "b", "socket1", "gpu1")["payload_bytes"]), 4096)

    def test_wrong_placements(self):
        cases = [
            ("workload.messages.0.dst_mem=gpu9", "dst_mem: on host 'b', 'gpu9' is not host, socketN"),
            ("workload.messages.0.src_mem=socket2", "src_mem: on host 'a', 'socket2' is not one of its sockets"),
            ("workload.messages.0.op=read", None),
            ("pcie.gpus=[{name: g, at: sw9}]", "pcie gpu at: 'sw9' is not a socket or a switch"),
            ("pcie.link_defaults.width=3", "pcie link_defaults width: x3 is not one of"),
            ("pcie.link_defaults.gen=7", "pcie link_defaults gen: 7 is out of range"),
            ("pcie.nic.mps=384", "pcie nic mps: 384 is not a power of two"),
            ("pcie.link_defaults.wdth=4", "pcie link_defaults: unknown key 'wdth' (did you mean 'width'?)"),
            ("topology.hosts=[{name: a, pcie: {model: false}}, b]", "host pcie model: PCIe is modelled"),
        ]
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, self.CONFIG.format(extra="\n  cross_socket_p2p: allow"))
            for setting, want in cases:
                p = subprocess.run([RDMASIM, "sim", "--check", cfg, "--set", setting],
                                   capture_output=True, text=True)
                if want is None:
                    self.assertEqual(p.returncode, 0, p.stderr)
                    continue
                self.assertEqual(p.returncode, 2, setting)
                self.assertIn(want, p.stderr, setting)
            # bounce buffers carry data pushed by write and send, not reads
            p = subprocess.run([RDMASIM, "sim", "--check", cfg, "--set", "workload.messages.0.op=read",
                                "--set", "workload.messages.0.gpudirect=false"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("dst_mem: memory region 'msg0.dst' in GPU 'gpu1' without GPUDirect", p.stderr)


class Switch(unittest.TestCase):
    """pcie: {model: false} runs exactly as a configuration without PCIe."""

    def test_model_off_is_instant_dma(self):
        work = """
topology:
  hosts: [a, b]
  links: [{a: a, b: b, rate: 25Gbps, delay: 500ns}]
workload:
  messages:
    - {src: a, dst: b, op: write, size: 10000, repeat: 20, interval: 1us}
    - {src: b, dst: a, qp: 2, op: read, size: 70000}
    - {src: a, dst: b, qp: 3, op: send, size: 3000, dst_mem: socket0}
    - {src: a, dst: b, qp: 4, op: faa, add: 3}
"""
        with tempfile.TemporaryDirectory() as tmp:
            on = write_config(tmp, "pcie: {gpus: [{name: g}]}\n" + work, "on.yaml")
            off = write_config(tmp, work, "off.yaml")
            outs = {}
            for name, cfg, extra in (("on", on, []), ("model-off", on, ["--set", "pcie.model=false"]),
                                     ("none", off, [])):
                out = os.path.join(tmp, name)
                p = run(cfg, out, *extra)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(os.path.join(out, "messages.csv")) as f:
                    outs[name] = f.read()
                outs[name + "-pcie.csv"] = os.path.exists(os.path.join(out, "pcie.csv"))
        self.assertEqual(outs["model-off"], outs["none"])
        self.assertFalse(outs["model-off-pcie.csv"])
        self.assertTrue(outs["on-pcie.csv"])
        self.assertNotEqual(outs["on"].split("\n")[1], outs["none"].split("\n")[1])


class Determinism(unittest.TestCase):
    def test_same_run_same_bytes(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = []
            for name in ("a", "b"):
                out = os.path.join(tmp, name)
                p = run(os.path.join(EXAMPLES, "pcie-host-pair.yaml"), out)
                self.assertEqual(p.returncode, 0, p.stderr)
                blobs = {}
                for path in sorted(glob.glob(os.path.join(out, "*"))):
                    with open(path, "rb") as f:
                        blobs[os.path.basename(path)] = f.read()
                files.append(blobs)
        self.assertIn("pcie.csv", files[0])
        self.assertEqual(files[0], files[1])


if __name__ == "__main__":
    main(default_limit=60)
