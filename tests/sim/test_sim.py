#!/usr/bin/python3
"""End-to-end tests of `rdmasim sim`: completion times against a model the
test computes from the configuration it writes, goodput at line rate, loss
recovery with intact data, determinism, and every example's pcaps in tshark.

Frame sizes come from the RoCEv2 layout (IBA vol. 1 annex A17): Ethernet 14,
IPv4 20 or IPv6 40, UDP 8, BTH 12, the extended headers the opcode carries,
payload padded to 4 bytes, ICRC 4; on the wire each frame also costs its
preamble and start delimiter (8), FCS (4) and inter-frame gap (12)."""
import csv
import glob
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import output_files  # noqa: E402
from testlib import limit, main, pcap_records, seconds  # noqa: E402
EXAMPLES = os.path.join(TOP, "examples")
TSHARK = shutil.which("tshark")

ETH, IPV4, IPV6, UDP, BTH, ICRC, WIRE = 14, 20, 40, 8, 12, 4, 24
RETH, AETH, IMMDT, ATOMICETH, ATOMICACKETH = 16, 4, 4, 28, 8
PS = 10**12

# Heuristic dissectors tshark would try on RDMA payloads (see
# tests/wireshark/test_tshark.py): random payload bytes are no protocol.
HEURISTICS = ["smcr_infiniband", "smb_direct_infiniband", "rpcrdma_infiniband", "nvme_rdma",
              "lnet_ib", "iser_infiniband", "eth_over_ib", "mellanox_eoib", "sdp_infiniband",
              "fc_infiniband", "drbd_rdma"]


def run_sim(config, out, *args):
    p = subprocess.run([RDMASIM, "sim", config, "--out", out, "--quiet", *args],
                       capture_output=True, text=True, timeout=seconds(120))
    return p


def messages(out):
    with open(os.path.join(out, "messages.csv")) as f:
        return list(csv.DictReader(f))


def summary(out):
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def ser(nbytes, rate):
    """Serialization time in ps, rounded up as the simulator does."""
    return -(-nbytes * 8 * PS // rate)


def wire(payload, ext, ip=IPV4):
    frame = ETH + ip + UDP + BTH + ext + payload + (-payload % 4) + ICRC
    return max(frame, 60) + WIRE


def write_config(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


class CompletionTime(unittest.TestCase):
    """One message over one link, alone: its completion time is the
    serialization of its frames back to back, the propagation delay, and the
    response coming back."""

    def one(self, op, size, rate_gbps, delay_ns, mtu, ipv6=False):
        rate = rate_gbps * 10**9
        delay = delay_ns * 1000
        ip = IPV6 if ipv6 else IPV4
        extra = {"write_imm": ", imm: 5", "send_imm": ", imm: 5"}.get(op, "")
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(os.path.join(tmp, "c.yaml"), f"""
nic: {{mtu: {mtu}, ipv6: {str(ipv6).lower()}}}
topology:
  hosts: [a, b]
  links: [{{a: a, b: b, rate: {rate_gbps}Gbps, delay: {delay_ns}ns}}]
trace: [a]
workload:
  messages: [{{src: a, dst: b, op: {op}, size: {size}{extra}}}]
""")
            p = run_sim(cfg, os.path.join(tmp, "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            (m,) = messages(os.path.join(tmp, "out"))
            recs = pcap_records(os.path.join(tmp, "out", "pcap", "a-0.pcap"))
        npkts = max(1, -(-size // mtu))
        sizes = [min(mtu, size - i * mtu) for i in range(npkts)]
        if op == "read":
            t = ser(wire(0, RETH, ip), rate) + delay
            for i, n in enumerate(sizes):
                ext = AETH if i in (0, npkts - 1) else 0
                t += ser(wire(n, ext, ip), rate)
            t += delay
        elif op in ("cas", "faa"):
            t = ser(wire(0, ATOMICETH, ip), rate) + delay + ser(wire(0, AETH + ATOMICACKETH, ip), rate) + delay
        else:
            t = 0
            for i, n in enumerate(sizes):
                ext = 0
                if i == 0 and op.startswith("write"):
                    ext += RETH
                if i == npkts - 1 and op.endswith("_imm"):
                    ext += IMMDT
                t += ser(wire(n, ext, ip), rate)
            t += delay + ser(wire(0, AETH, ip), rate) + delay
        self.assertEqual(int(m["fct_ps"]), t, (op, size))
        self.assertEqual(int(m["ideal_ps"]), t)
        self.assertEqual(m["status"], "ok")
        self.assertEqual(m["data"], "ok")
        # the capture agrees: the response's last bit reaches a at t
        self.assertEqual(recs[-1][0], t // 1000)
        self.assertEqual(recs[0][0], 0)

    def test_write_over_one_link(self):
        self.one("write", 65536, 100, 1000, 4096)
        self.one("write", 10000, 25, 500, 1024)
        self.one("write", 1, 100, 1000, 4096)
        self.one("write", 0, 100, 1000, 4096)

    def test_other_operations(self):
        self.one("write_imm", 9000, 40, 2000, 2048)
        self.one("read", 70000, 100, 1000, 4096)
        self.one("send", 5000, 100, 300, 256)
        self.one("send_imm", 4096, 100, 300, 4096)
        self.one("cas", 8, 10, 100, 4096)
        self.one("faa", 8, 400, 100, 4096)
        self.one("write", 30000, 100, 1000, 4096, ipv6=True)


def opcodes(path):
    """(time in ns, BTH opcode, source address) of every RoCEv2/IPv4 frame."""
    return [(t, f[42], f[26:30]) for t, f in pcap_records(path)
            if len(f) > 42 and f[12:14] == b"\x08\x00" and f[23] == 17]


class Acknowledgements(unittest.TestCase):
    """How often the responder acknowledges: on the ACK-request bit, which
    the requester sets every ack_request_every packets and on each
    message's last, and at least every ack_coalesce packets."""

    def acks(self, nic):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(os.path.join(tmp, "c.yaml"), f"""
nic: {{{nic}}}
topology:
  hosts: [a, b]
  links: [{{a: a, b: b}}]
trace: [a]
workload:
  messages: [{{src: a, dst: b, op: write, size: 256KiB}}]
""")
            p = run_sim(cfg, os.path.join(tmp, "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            ops = opcodes(os.path.join(tmp, "out", "pcap", "a-0.pcap"))
        self.assertEqual(sum(1 for _, op, _ in ops if op in range(0x06, 0x09)), 64)
        return sum(1 for _, op, _ in ops if op == 0x11)

    def test_ack_request_and_coalescing(self):
        self.assertEqual(self.acks("ack_request_every: 0"), 1)
        self.assertEqual(self.acks("ack_request_every: 16"), 4)
        self.assertEqual(self.acks("ack_request_every: 0, ack_coalesce: 8"), 8)
        self.assertEqual(self.acks("ack_request_every: 0, ack_coalesce: 3"), 22)


class ReadLimit(unittest.TestCase):
    def requests_before_last_response(self, limit):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(os.path.join(tmp, "c.yaml"), f"""
nic: {{max_rd_atomic: {limit}}}
topology:
  hosts: [a, b]
  links: [{{a: a, b: b}}]
trace: [a]
workload:
  messages: [{{src: a, dst: b, op: read, size: 16KiB, repeat: 4}}]
""")
            p = run_sim(cfg, os.path.join(tmp, "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            ops = opcodes(os.path.join(tmp, "out", "pcap", "a-0.pcap"))
        first_last = min(t for t, op, _ in ops if op == 0x0f)  # READ Response Last
        return sum(1 for t, op, _ in ops if op == 0x0c and t < first_last)

    def test_outstanding_reads_are_limited(self):
        self.assertEqual(self.requests_before_last_response(1), 1)
        self.assertEqual(self.requests_before_last_response(2), 2)
        self.assertEqual(self.requests_before_last_response(16), 4)


class Goodput(unittest.TestCase):
    """A long stream on a 100 Gb/s link with MTU 4096 reaches
    rate x payload / (payload + every per-packet byte) within 0.5%."""

    def test_write_read_send_reach_line_rate(self):
        rate, mtu, size = 100 * 10**9, 4096, 32 * 2**20
        middle = wire(mtu, 0) - mtu  # headers, ICRC, preamble, FCS, gap
        analytic = rate * mtu / (mtu + middle)
        for op in ("write", "read", "send"):
            with tempfile.TemporaryDirectory() as tmp:
                cfg = write_config(os.path.join(tmp, "c.yaml"), f"""
payload: none
topology:
  hosts: [a, b]
  links: [{{a: a, b: b, rate: 100Gbps, delay: 1us}}]
workload:
  messages: [{{src: a, dst: b, op: {op}, size: {size}}}]
""")
                p = run_sim(cfg, os.path.join(tmp, "out"))
                self.assertEqual(p.returncode, 0, p.stderr)
                (m,) = messages(os.path.join(tmp, "out"))
                goodput = size * 8 * PS / int(m["fct_ps"])
                self.assertLess(abs(goodput - analytic) / analytic, 0.005, (op, goodput, analytic))


def request_psns(path, src):
    """(QP, PSN) of every request packet host `src` (an IPv4 address as
    bytes) sent in a RoCEv2/IPv4 capture."""
    out = []
    for _, f in pcap_records(path):
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 17 or f[26:30] != src:
            continue
        bth = f[42:]
        opcode = bth[0]
        if opcode & 0xe0 or 0x0d <= opcode <= 0x12:  # RC requests only
            continue
        out.append((int.from_bytes(bth[5:8], "big"), int.from_bytes(bth[9:12], "big")))
    return out


class Loss(unittest.TestCase):
    def test_go_back_n_recovers_with_data_intact(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = run_sim(os.path.join(EXAMPLES, "lossy-link.yaml"), out)
            self.assertEqual(p.returncode, 0, p.stderr)
            s = summary(out)
            rows = messages(out)
            self.assertTrue(all(r["status"] == "ok" and r["data"] == "ok" for r in rows))
            self.assertEqual(s["totals"]["completed"], len(rows))
            self.assertEqual(s["totals"]["data_verified"], len(rows))
            self.assertGreater(s["totals"]["link_losses"], 0)
            retx = sum(int(r["retransmissions"]) for r in rows)
            self.assertGreater(retx, 0)
            self.assertEqual(s["totals"]["retransmitted"], retx)
            # the pcap on each requester's port shows request PSNs sent again
            seen_again = 0
            # hosts h0 and h1 are 10.0.0.1 and 10.0.0.2 (docs/config.md)
            for port, src in (("h0-0", bytes([10, 0, 0, 1])), ("h1-0", bytes([10, 0, 0, 2]))):
                psns = request_psns(os.path.join(out, "pcap", port + ".pcap"), src)
                seen_again += len(psns) - len(set(psns))
            self.assertGreater(seen_again, 0)
            self.assertLessEqual(seen_again, retx)

    def test_bit_errors_fail_the_icrc_at_the_receiver(self):
        # with payload: none a frame leaves out its payload (a pattern the
        # receiver puts back): an error in it must fail the ICRC all the same
        for payload, fabric in (("data", "roce"), ("none", "roce"), ("none", "infiniband")):
            with self.subTest(payload=payload, fabric=fabric), tempfile.TemporaryDirectory() as tmp:
                cfg = write_config(os.path.join(tmp, "c.yaml"), """
seed: 9
payload: %s
nic: {timeout: 30us}
topology:
  fabric: %s
  switches: [s]
  hosts: [a, b]
  links: [{a: a, b: s, ber: 1e-6}, {a: b, b: s}]
workload:
  messages: [{src: a, dst: b, op: write, size: 256KiB, repeat: 8}]
""" % (payload, fabric))
                out = os.path.join(tmp, "out")
                p = run_sim(cfg, out)
                self.assertEqual(p.returncode, 0, p.stderr)
                s = summary(out)
                corrupted = sum(port["corrupted"] for port in s["ports"])
                self.assertGreater(corrupted, 0)
                # the switch forwards them; the NIC at the far end drops them
                self.assertEqual(s["totals"]["bad_frames_dropped"], corrupted)
                self.assertEqual(s["totals"]["completed"], 8)
                self.assertEqual(s["totals"]["data_verified"], 8 if payload == "data" else 0)

    def test_rnr_nak_waits_for_the_receive(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = run_sim(os.path.join(EXAMPLES, "rnr.yaml"), out)
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = messages(out)
            s = summary(out)
            self.assertGreater(s["flows"][0]["sides"][1]["rnr_naks"], 0)
            # neither completes before its receive is posted (recv_at)
            self.assertGreater(int(rows[0]["end_ps"]), 100 * 10**6)
            self.assertGreater(int(rows[1]["end_ps"]), 150 * 10**6)
            self.assertTrue(all(r["data"] == "ok" for r in rows))


class RunCpuTime(unittest.TestCase):
    """--wall-time's run_cpu_s: the process's CPU time in the run alone,
    without the set-up or the outputs (docs/config.md)."""

    def cpu_of(self, *args):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = run_sim(os.path.join(EXAMPLES, "fat-tree-shift-dmodk.yaml"), out, "--wall-time", *args)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.assertEqual(p.returncode, 0, p.stderr)
            process = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            return summary(out)["run_cpu_s"], process

    def test_a_run_that_does_nothing_takes_no_cpu(self):
        # a k=16 fat-tree's routes take the process's time; the run, the
        # components' start alone: some 4 % of it, and a few milliseconds
        # whatever the machine, so a preempted run can pass a tenth; with the
        # set-up counted in it would be all of it
        run, process = self.cpu_of("--set", "topology.generate.k=16", "--set", "stop=1ns")
        self.assertGreater(process, 0.02)
        self.assertLess(run, process / 3)

    def test_a_whole_run_takes_most_of_the_process(self):
        # the k=4 shift of 10 MiB flows: half a million events
        run, process = self.cpu_of()
        self.assertGreater(run, 0.5 * process)
        self.assertLessEqual(run, process)


class FramesWithoutPayload(unittest.TestCase):
    """payload: none: a frame in flight holds its headers and its CRCs, not
    its payload (docs/performance.md)."""

    def test_a_frame_in_flight_costs_its_headers(self):
        # 64 hosts writing to one: thousands of frames wait in the switch
        for fabric in ("roce", "infiniband"):
            per_frame = {}
            for payload in ("none", "data"):
                with tempfile.TemporaryDirectory() as tmp:
                    out = os.path.join(tmp, "out")
                    p = run_sim(os.path.join(EXAMPLES, "incast-64-roce.yaml"), out, "--wall-time",
                                "--set", "payload=" + payload, "--set", "topology.fabric=" + fabric)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    mem = summary(out)["memory"]
                    self.assertGreater(mem["frames_in_flight_peak"], 1000)
                    per_frame[payload] = mem["frames_in_flight_peak_bytes"] / mem["frames_in_flight_peak"]
                    self.assertLessEqual(mem["frames_in_flight_peak_bytes"], mem["frame_pool_bytes"])
            with self.subTest(fabric=fabric):
                self.assertLessEqual(per_frame["none"], 512, per_frame)
                # with payload: data they hold it: up to 4 KiB each
                self.assertGreater(per_frame["data"], 1024, per_frame)

    def test_traced_frames_hold_their_whole_payload(self):
        # the pcap has every byte: the fill pattern (byte i is i mod 256)
        # between the headers and an ICRC that checks
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = run_sim(os.path.join(EXAMPLES, "write-one-link.yaml"), out, "--set", "payload=none",
                        "--set", "trace=[h0]")
            self.assertEqual(p.returncode, 0, p.stderr)
            path = os.path.join(out, "pcap", "h0-0.pcap")
            d = subprocess.run([RDMASIM, "decode", "--json", "--strict", path], capture_output=True, text=True)
            self.assertEqual(d.returncode, 0, d.stderr)
            frames = [json.loads(line) for line in d.stdout.splitlines()]
            writes = 0
            for (_, raw), f in zip(pcap_records(path), frames):
                n = f.get("payload_len", 0)
                if n < 64:
                    continue
                writes += 1
                self.assertTrue(f["icrc"]["ok"], f)
                at = len(raw) - 4 - f["bth"]["padcnt"] - n
                self.assertEqual(raw[at:at + n], bytes(i % 256 for i in range(n)))
            self.assertGreater(writes, 10)


class Replay(unittest.TestCase):
    """`rdmasim replay` reading the requester's capture finds the messages
    and retransmissions that messages.csv lists. Losses lie beyond the
    captured port, so the capture holds every request sent."""

    def test_replay_tells_the_same_story(self):
        probe = subprocess.run([RDMASIM, "replay", "--help"], capture_output=True, text=True)
        if probe.returncode != 0:
            self.skipTest("rdmasim replay is not built")
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(os.path.join(tmp, "c.yaml"), """
seed: 5
nic: {timeout: 50us}
topology:
  switches: [s0]
  hosts: [h0, h1]
  links:
    - {a: h0, b: s0, trace: true}
    - {a: h1, b: s0, loss: 1%}
workload:
  messages:
    - {src: h0, dst: h1, op: write, size: 256KiB, repeat: 10, interval: 20us}
    - {src: h0, dst: h1, qp: 2, op: send, size: 64KiB, repeat: 10, interval: 20us}
    - {src: h0, dst: h1, qp: 3, op: write_imm, size: 10000, imm: 1, repeat: 10, interval: 20us}
""")
            out = os.path.join(tmp, "out")
            p = run_sim(cfg, out)
            self.assertEqual(p.returncode, 0, p.stderr)
            r = subprocess.run([RDMASIM, "replay", "--json", os.path.join(out, "pcap", "h0-0.pcap")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            replayed = json.loads(r.stdout)["messages"]
            rows = messages(out)
            flows = summary(out)["flows"]
        # the responder's QPN of each configured queue pair
        qpn = {f["qp"]: f["qpn"][f["hosts"].index("h1")] for f in flows}
        kinds = {"write": "RDMA WRITE", "write_imm": "RDMA WRITE", "send": "SEND"}
        self.assertEqual(len(replayed), len(rows))
        self.assertGreater(sum(int(row["retransmissions"]) for row in rows), 0)
        for qp in qpn:
            mine = [row for row in rows if int(row["qp"]) == qp]
            theirs = sorted((m for m in replayed if m["responder_qpn"] == qpn[qp]),
                            key=lambda m: m["start_ns"])
            self.assertEqual(len(mine), len(theirs))
            for row, m in zip(mine, theirs):
                self.assertEqual(m["kind"].split(" with")[0], kinds[row["op"]])
                self.assertEqual(m["bytes"], int(row["bytes"]))
                self.assertEqual(m["retransmitted_packets"], int(row["retransmissions"]))
                self.assertEqual(m["status"], "ok")


class Determinism(unittest.TestCase):
    def test_same_seed_same_bytes_other_seed_other_run(self):
        for example in ("lossy-link.yaml", "leaf-spine-websearch.yaml"):
            with tempfile.TemporaryDirectory() as tmp:
                cfg = os.path.join(EXAMPLES, example)
                a, b, c = (os.path.join(tmp, x) for x in "abc")
                for out, seed in ((a, "5"), (b, "5"), (c, "6")):
                    p = run_sim(cfg, out, "--seed", seed)
                    self.assertEqual(p.returncode, 0, p.stderr)
                fa, fb, fc = output_files(a), output_files(b), output_files(c)
                self.assertIn("summary.json", fa)
                self.assertEqual(fa, fb, example)
                self.assertNotEqual(fa["messages.csv"], fc["messages.csv"], example)

    def test_leftovers_none(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = run_sim(os.path.join(EXAMPLES, "every-operation.yaml"), out)
            self.assertEqual(p.returncode, 0, p.stderr)
            leftovers = [f for f in glob.glob(os.path.join(out, "**"), recursive=True) if f.endswith(".tmp")]
            self.assertEqual(leftovers, [])


@unittest.skipUnless(TSHARK, "tshark is not installed")
class Examples(unittest.TestCase):
    @limit(240)
    def test_every_example_runs_and_its_pcaps_open_cleanly(self):
        configs = sorted(glob.glob(os.path.join(EXAMPLES, "*.yaml")))
        configs.append(os.path.join(EXAMPLES, "split", "run.yaml"))
        pcaps = 0
        with tempfile.TemporaryDirectory() as tmp:
            for cfg in configs:
                name = os.path.basename(cfg)
                out = os.path.join(tmp, name)
                p = run_sim(cfg, out)
                with self.subTest(example=name):
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertEqual(summary(out)["totals"]["failed"], 0)
                # a frame a bit error hit is captured where it arrives: the
                # bad frames of a port's capture are those its peer corrupted
                ports = {p["port"]: p for p in summary(out)["ports"]}
                for path in sorted(glob.glob(os.path.join(out, "pcap", "*.pcap"))):
                    port = os.path.basename(path)[:-len(".pcap")]
                    with self.subTest(pcap=f"{name}/{port}"):
                        self.check_pcap(path, ports[ports[port]["peer"]]["corrupted"])
                    pcaps += 1
        self.assertGreater(pcaps, 5)

    def check_pcap(self, path, corrupted):
        # iWARP frames: tshark finds MPA by heuristics once it has seen the
        # Request/Reply; TCP's own sequence analysis (retransmissions, out
        # of order after a loss) is the model's behaviour, not an error
        args = [TSHARK, "-n", "-r", path, "-o", "ip.check_checksum:TRUE",
                "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
                "-o", "tcp.try_heuristic_first:TRUE", "-o", "tcp.analyze_sequence_numbers:FALSE"]
        for h in HEURISTICS:
            args += ["--disable-heuristic", h]
        p = subprocess.run(args + ["-T", "fields", "-e", "frame.number", "-e", "infiniband.bth.opcode",
                                   "-e", "_ws.malformed", "-e", "_ws.expert.severity", "-e", "tcp.len",
                                   "-e", "iwarp_mpa.ulpdulength", "-e", "iwarp_mpa.rev",
                                   "-e", "frame.protocols"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line.split("\t") for line in p.stdout.splitlines()]
        self.assertEqual(len(rows), len(pcap_records(path)))
        for number, opcode, malformed, severity, tcp_len, mpa_len, mpa_rev, protocols in rows:
            if protocols.endswith(":infiniband_link"):
                # an InfiniBand flow control packet, which tshark 4.0 always
                # calls malformed; tests/infiniband checks them from the bytes
                continue
            if tcp_len:  # iWARP: a segment with data is MPA (an FPDU or the Request/Reply)
                self.assertTrue(tcp_len == "0" or mpa_len or mpa_rev, f"frame {number} is not MPA")
            else:
                self.assertNotEqual(opcode, "", f"frame {number} is not InfiniBand")
            self.assertEqual(malformed, "", f"frame {number} is malformed")
            # 0x00800000 is error, 0x00600000 warning (epan/proto.h)
            for sev in filter(None, severity.split(",")):
                self.assertLess(int(sev, 0), 0x00600000, f"frame {number}: expert {sev}")
        # the project's own decoder checks every ICRC; with bit errors on a
        # link, the frames they hit are the only failures
        d = subprocess.run([RDMASIM, "decode", "--strict", path], capture_output=True, text=True)
        # a damaged frame's line says so in brackets, with the codec's status
        # (TCP flags like [SYN] and iWARP's stream notes are brackets too)
        damage = re.compile(r" \[(truncated|malformed|bad checksum|bad ICRC|bad VCRC|unsupported)")
        bad = [line for line in d.stdout.splitlines() if "ICRC BAD" in line or damage.search(line)]
        self.assertEqual(len(bad), corrupted, "\n".join(bad[:10]))
        self.assertEqual(d.returncode, 1 if corrupted else 0, d.stderr)


if __name__ == "__main__":
    main(default_limit=60)
