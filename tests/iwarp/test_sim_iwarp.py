#!/usr/bin/python3
"""iWARP in the simulator: RDMAP/DDP/MPA over the TCP model.

Oracles, none of them an earlier run:
  - tshark dissects every data segment of every iWARP example as MPA with
    a good CRC32c, and `rdmasim decode --strict` accepts every frame;
  - `rdmasim replay` on a host's capture finds the messages of
    messages.csv (requester, operation, size);
  - the bytes that arrive equal the bytes sent (summary: data_verified),
    after random loss, bit errors and tail drops;
  - TCP's recovery, from the counters each endpoint keeps: one loss is
    repaired by a fast retransmit without a timeout (RFC 5681 3.2), a burst
    of tail drops by SACK recovery (RFC 6675), a dead path by timeouts
    whose intervals double (RFC 6298 5.5);
  - throughput theory: NewReno under random loss p follows Mathis et al.
    (MSS/RTT x sqrt(3/2)/sqrt(p)) within 20% for p = 1e-4 .. 1e-2; DCTCP
    holds the bottleneck queue near its marking threshold K with the link
    busy (RFC 8257, Alizadeh et al. section 3.3); N flows sharing a
    bottleneck get a Jain fairness index of at least 0.95."""
import collections
import glob
import json
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
from sim_checks import run_sim, summary, table, write_config  # noqa: E402
from testlib import limit, main, pcap_records  # noqa: E402
EXAMPLES = os.path.join(TOP, "examples")
TSHARK = shutil.which("tshark")
PS = 10**12
OPS = {"write": "iWARP RDMA Write", "read": "iWARP RDMA Read", "send": "iWARP Send",
       "send_inv": "iWARP Send with Invalidate"}


def tcp_sides(out):
    """The TCP counters of every endpoint: (flow index, side) -> dict."""
    return {(i, s): side["tcp"] for i, f in enumerate(summary(out)["flows"])
            for s, side in enumerate(f["sides"]) if "tcp" in side}


def run_tcp(cfg):
    """Run cfg: the totals of summary.json and the TCP sides (tcp_sides)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        run_sim(write_config(tmp, cfg), out)
        return summary(out)["totals"], tcp_sides(out)


def two_hosts(nic="", links="", extra=""):
    return f"""seed: 1
payload: data
nic:
  transport: iwarp
  tcp: {{min_rto: 5ms, delayed_ack: 50us{nic}}}
topology:
  switches: [s0]
  hosts: [h0, h1]
  links:
{links}
{extra}
"""


class Examples(unittest.TestCase):
    @limit(240)
    @unittest.skipUnless(TSHARK, "tshark is not installed")
    def test_every_iwarp_frame_is_mpa_with_a_good_crc(self):
        with tempfile.TemporaryDirectory() as tmp:
            configs = sorted(glob.glob(os.path.join(EXAMPLES, "iwarp-*.yaml")))
            self.assertEqual(len(configs), 3)
            for cfg in configs:
                out = os.path.join(tmp, os.path.basename(cfg))
                run_sim(cfg, out)
                self.assertEqual(summary(out)["totals"]["failed"], 0)
                pcaps = sorted(glob.glob(os.path.join(out, "pcap", "*.pcap")))
                self.assertTrue(pcaps)
                for path in pcaps:
                    with self.subTest(pcap=os.path.relpath(path, tmp)):
                        self.check_pcap(path)

    @unittest.skipUnless(TSHARK, "tshark is not installed")
    def test_markers_and_ipv6_when_asked(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, args in (("markers", ["--set", "nic.mpa_markers=true"]),
                               ("ipv6", ["--set", "nic.ipv6=true"])):
                out = os.path.join(tmp, name)
                run_sim(os.path.join(EXAMPLES, "iwarp-pair.yaml"), out, *args)
                self.assertEqual(summary(out)["totals"]["data_verified"], 8)
                for path in sorted(glob.glob(os.path.join(out, "pcap", "*.pcap"))):
                    with self.subTest(pcap=f"{name}/{os.path.basename(path)}"):
                        self.check_pcap(path, markers=name == "markers")
            # a marker every 512 octets of the stream: a 1460-octet segment
            # holds two or three (iw_tx.c sizes FPDUs so that none ends
            # where a marker is due, which tshark 4.0 miscounts)
            v = subprocess.run([TSHARK, "-n", "-r", os.path.join(tmp, "markers", "pcap", "h0-0.pcap"),
                                "-o", "tcp.try_heuristic_first:TRUE", "-T", "fields", "-e",
                                "iwarp_mpa.marker_fpduptr"], capture_output=True, text=True).stdout
            self.assertGreater(sum(len(line.split(",")) for line in v.split() if line), 100)

    def test_a_solicited_roce_send_sets_se_on_its_last_packet(self):
        # the same key over RoCEv2: IBA 9.2.3, BTH SE on the last packet only
        cfg = """seed: 1
topology:
  switches: [s0]
  hosts: [{name: h0, trace: true}, h1]
  links: [{a: h0, b: s0}, {a: h1, b: s0}]
workload:
  messages:
    - {src: h0, dst: h1, op: send, size: 10000, solicited: true}
    - {src: h0, dst: h1, op: send, size: 10000, start: 20us}
"""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(write_config(tmp, cfg), out)
            d = subprocess.run([RDMASIM, "decode", "--json", os.path.join(out, "pcap", "h0-0.pcap")],
                               capture_output=True, text=True)
            sends = [f["bth"] for f in map(json.loads, d.stdout.splitlines())
                     if f.get("bth", {}).get("opcode", 0) in (0, 1, 2, 4)]  # SEND First..Only
            self.assertEqual([b["se"] for b in sends], [0, 0, 1, 0, 0, 0])

    def check_pcap(self, path, markers=False):
        # TCP's sequence analysis flags the model's retransmissions and
        # segments out of order after a loss; tshark needs it to find
        # markers, and the captures with markers have no loss
        opts = [TSHARK, "-n", "-r", path, "-o", "tcp.try_heuristic_first:TRUE",
                "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE",
                "-o", "tcp.analyze_sequence_numbers:" + ("TRUE" if markers else "FALSE")]
        p = subprocess.run(opts + ["-T", "fields", "-e", "frame.number", "-e", "tcp.len",
                            "-e", "iwarp_mpa.ulpdulength", "-e", "iwarp_mpa.rev",
                            "-e", "iwarp_mpa.crc_check", "-e", "_ws.malformed",
                            "-e", "_ws.expert.severity", "-e", "infiniband.bth.opcode"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line.split("\t") for line in p.stdout.splitlines()]
        self.assertEqual(len(rows), len(pcap_records(path)))
        fpdus = tcp = 0
        for number, tcp_len, ulpdu, rev, crc, malformed, severity, bth in rows:
            self.assertEqual(malformed, "", f"frame {number} is malformed")
            for sev in filter(None, severity.split(",")):
                self.assertLess(int(sev, 0), 0x00600000, f"frame {number}: expert {sev}")
            if bth:  # the RoCEv2 neighbours of examples/iwarp-wan.yaml
                continue
            self.assertNotEqual(tcp_len, "", f"frame {number} is not TCP")
            tcp += 1
            if tcp_len != "0":
                self.assertTrue(ulpdu or rev, f"frame {number}: data that is not MPA")
            if ulpdu:
                fpdus += 1
                self.assertNotEqual(crc, "", f"frame {number}: no MPA CRC")
        # tshark 4.0 judges the CRC32c only in its text ("Good CRC32")
        v = subprocess.run(opts + ["-V"], capture_output=True, text=True).stdout
        self.assertEqual(v.count("Bad CRC32"), 0)
        self.assertEqual(v.count("Good CRC32"), fpdus)
        self.assertTrue(fpdus or not tcp, "no FPDU among the TCP frames")
        d = subprocess.run([RDMASIM, "decode", "--strict", path], capture_output=True, text=True)
        self.assertEqual(d.returncode, 0, d.stdout[-2000:] + d.stderr)

    def test_replay_finds_the_messages_of_messages_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(os.path.join(EXAMPLES, "iwarp-pair.yaml"), out)
            want = collections.Counter()
            for m in table(out, "messages.csv"):
                self.assertEqual((m["status"], m["data"]), ("ok", "ok"))
                want[(m["src"], OPS[m["op"]], int(m["bytes"]))] += 1
            solicited = 0
            for host in ("h0", "h1"):
                p = subprocess.run([RDMASIM, "replay", "--json",
                                    os.path.join(out, "pcap", f"{host}-0.pcap")],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                got = collections.Counter()
                for m in json.loads(p.stdout)["messages"]:
                    self.assertEqual(m["status"], "ok", m)
                    src = "h%d" % (int(m["requester"].rsplit(".", 1)[1]) - 1)
                    # solicited: true makes a Send (with Invalidate) one with SE
                    kind = m["kind"].replace(" with SE and Invalidate", " with Invalidate")
                    solicited += kind != m["kind"] or kind.endswith(" with SE")
                    got[(src, kind.replace("Send with SE", "Send"), m["bytes"])] += 1
                self.assertEqual(got, want, host)
            self.assertEqual(solicited, 2 * 2)  # two in each host's capture


def tcp_segments(path):
    """(time, source host index, src port, seq, ack, flags, payload length)
    of the IPv4 TCP frames of a capture (host h is 10.0.0.h+1)."""
    out = []
    for t, f in pcap_records(path):
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
            continue
        ihl = (f[14] & 15) * 4
        tcp = f[14 + ihl:]
        sport, dport, seq, ack = struct.unpack(">HHII", tcp[:12])
        plen = struct.unpack(">H", f[16:18])[0] - ihl - (tcp[12] >> 4) * 4
        out.append((t, f[29] - 1, sport, seq, ack, tcp[13], plen))
    return out


class Pcie(unittest.TestCase):
    """The same PCIe model inside the hosts as RoCE: examples/pcie-host-pair.yaml
    over iWARP. Every message completes with its data; the Gen3 x8 slot
    (63 Gb/s of TLP payload) holds a 16 MiB WRITE and READ to its own pace
    on a 100 Gb/s link, as it holds RoCE's, where Gen3 x16 and Gen4 x16 keep
    up with the link; and the completion times split into PCIe steps."""

    @limit(180)
    def test_pcie_host_pair(self):
        with tempfile.TemporaryDirectory() as tmp:
            fct = {}
            for transport in ("roce", "iwarp"):
                out = os.path.join(tmp, transport)
                run_sim(os.path.join(EXAMPLES, "pcie-host-pair.yaml"), out, "--set", f"nic.transport={transport}",
                        "--set", "payload=data", "--set", "nic.tcp.delayed_ack=1us")
                s = summary(out)
                self.assertEqual(s["totals"]["completed"], s["totals"]["messages"])
                self.assertEqual(s["totals"]["data_verified"], s["totals"]["messages"])
                rows = table(out, "messages.csv")
                fct[transport] = {(m["src"], m["op"]): int(m["fct_ps"]) for m in rows if m["bytes"] == str(16 << 20)}
                if transport == "iwarp":
                    small = [m for m in rows if m["op"] == "write" and m["bytes"] == "64"]
                    self.assertTrue(all(int(m["payload_read_ps"]) > 0 and int(m["doorbell_ps"]) > 0
                                        and int(m["completion_ps"]) > 0 for m in small))
            for op in ("write", "read"):
                iw, roce = fct["iwarp"], fct["roce"]
                # PCIe-bound: Gen3 x8 takes 1.8x as long as Gen3 x16 on either transport
                self.assertGreater(iw[("g3x8-a", op)], 1.6 * iw[("g3x16-a", op)], op)
                self.assertLess(abs(iw[("g3x8-a", op)] / roce[("g3x8-a", op)] - 1), 0.05, op)


class Close(unittest.TestCase):
    def test_a_connection_whose_work_is_done_closes_with_fins(self):
        # the first connection is done long before the second: both its
        # sides send a FIN after their last octet (h1, with nothing to
        # send, right after its MPA Reply), and each FIN is acknowledged
        # (RFC 9293 3.6)
        fin, syn = 0x01, 0x02
        links = ("    - {a: h0, b: s0, trace: true}\n"
                 "    - {a: h1, b: s0}")
        work = """workload:
  messages:
    - {src: h0, dst: h1, op: write, size: 10000}
    - {src: h0, dst: h1, qp: 2, op: write, size: 4MiB}"""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(write_config(tmp, two_hosts(links=links, extra=work)), out)
            segs = [s for s in tcp_segments(os.path.join(out, "pcap", "h0-0.pcap")) if s[2] == 1024]
            fins = [s for s in segs if s[5] & fin]
            self.assertEqual(sorted(s[1] for s in fins), [0, 1])
            for t, host, _, seq, _, _, _ in fins:
                data = [s for s in segs if s[1] == host and s[6]]
                self.assertEqual(seq, max(s[3] + s[6] for s in data), "the FIN follows the last octet")
                acks = [s for s in segs if s[1] != host and s[0] >= t and s[4] == seq + 1]
                self.assertTrue(acks, f"the FIN of h{host} is acknowledged")
            self.assertEqual(len([s for s in segs if s[5] & syn]), 2)
            states = [side["tcp"]["state"] for side in summary(out)["flows"][0]["sides"]]
            self.assertEqual(sorted(states), ["closed", "time-wait"])


class Recovery(unittest.TestCase):
    def test_data_intact_after_loss_and_bit_errors(self):
        links = ("    - {a: h0, b: s0, loss: 0.5%, ber: 1e-7, mtu: 1500}\n"
                 "    - {a: h1, b: s0, loss: 0.5%, ber: 1e-7, mtu: 1500}")
        work = """workload:
  messages:
    - {src: h0, dst: h1, op: write, size: 256KiB, repeat: 10, interval: 20us}
    - {src: h0, dst: h1, qp: 2, op: read, size: 128KiB, repeat: 10, interval: 20us}
    - {src: h1, dst: h0, op: send, size: 64KiB, repeat: 10, interval: 20us}
    - {src: h1, dst: h0, op: send_inv, size: 3000, start: 1ms}"""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(write_config(tmp, two_hosts(links=links, extra=work)), out)
            t = summary(out)["totals"]
            self.assertEqual((t["completed"], t["data_verified"]), (31, 31))
            self.assertGreater(t["link_losses"], 0)
            self.assertGreater(t["bad_frames_dropped"], 0)  # TCP checksums caught the bit errors
            self.assertGreater(t["retransmitted"], 0)

    def test_one_loss_is_repaired_by_fast_retransmit(self):
        # the link goes down for 0.5 us, which loses the one segment on it
        links = ("    - {a: h0, b: s0, rate: 10Gbps, delay: 1us, mtu: 1500}\n"
                 "    - {a: h1, b: s0, rate: 10Gbps, delay: 5us, mtu: 1500}")
        extra = ("faults:\n  - {a: h0, b: s0, down: 300us, up: 300.5us}\n"
                 "workload:\n  messages:\n    - {src: h0, dst: h1, op: write, size: 4MiB}")
        t, sides = run_tcp(two_hosts(links=links, extra=extra))
        self.assertEqual(t["data_verified"], 1)
        x = sides[(0, 0)]
        self.assertEqual((x["retransmitted_segments"], x["fast_retransmits"], x["rto"]), (1, 1, 0))
        self.assertGreaterEqual(x["dupacks"], 3)

    def test_a_burst_of_drops_is_repaired_by_sack_recovery(self):
        # slow start overshoots a 64 KiB buffer before a 10:1 step down
        links = ("    - {a: h0, b: s0, rate: 100Gbps, delay: 2us, mtu: 1500}\n"
                 "    - {a: h1, b: s0, rate: 10Gbps, delay: 2us, mtu: 1500}")
        extra = "workload:\n  messages:\n    - {src: h0, dst: h1, op: write, size: 8MiB}"
        cfg = two_hosts(links=links, extra=extra).replace("topology:\n",
                                                         "topology:\n  switch_defaults: {buffer: 64KiB}\n")
        t, sides = run_tcp(cfg)
        self.assertEqual(t["data_verified"], 1)
        self.assertGreater(t["tail_drops"], 10)
        x = sides[(0, 0)]
        self.assertEqual(x["retransmitted_segments"], t["tail_drops"])
        self.assertGreaterEqual(x["sack_recoveries"], 1)
        # several drops in one window, repaired in one recovery each
        self.assertLess(x["sack_recoveries"], t["tail_drops"])
        self.assertEqual(x["rto"], 0)

    def test_a_dead_path_is_waited_out_by_timeouts_that_double(self):
        links = ("    - {a: h0, b: s0, rate: 10Gbps, delay: 1us, mtu: 1500, trace: true}\n"
                 "    - {a: h1, b: s0, rate: 10Gbps, delay: 5us, mtu: 1500}")
        extra = ("faults:\n  - {a: h1, b: s0, down: 300us, up: 100ms}\n"
                 "workload:\n  messages:\n    - {src: h0, dst: h1, op: write, size: 4MiB}")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(write_config(tmp, two_hosts(links=links, extra=extra)), out)
            self.assertEqual(summary(out)["totals"]["data_verified"], 1)
            x = tcp_sides(out)[(0, 0)]
            # 5, 10, 20, 40 ms after the first send: the fifth comes after 100 ms
            self.assertGreaterEqual(x["rto"], 4)
            # the retransmissions of the oldest segment, from h0's capture
            times = collections.defaultdict(list)
            for t, host, _, seq, _, _, plen in tcp_segments(os.path.join(out, "pcap", "h0-0.pcap")):
                if host == 0 and plen:
                    times[seq].append(t)
            sent = max(times.values(), key=len)
            gaps = [b - a for a, b in zip(sent, sent[1:])]
            self.assertGreaterEqual(len(gaps), 3)
            for a, b in zip(gaps, gaps[1:]):
                self.assertAlmostEqual(b / a, 2, delta=0.05, msg=gaps)


def mathis_run(tmp, p, stop):
    cfg = f"""seed: 7
payload: none
stop: {stop}
nic:
  transport: iwarp
  tcp: {{cc: newreno, min_rto: 2ms, delayed_ack: 500us, window: 64MiB}}
topology:
  switches: [s0]
  hosts: [h0, h1]
  links:
    - {{a: h0, b: s0, rate: 100Gbps, delay: 250us, mtu: 1500}}
    - {{a: h1, b: s0, rate: 100Gbps, delay: 250us, mtu: 1500, loss: {p}}}
workload:
  messages:
    - {{src: h0, dst: h1, op: write, size: 1GiB, repeat: 4}}
"""
    out = os.path.join(tmp, f"m{p}-{stop}")
    run_sim(write_config(tmp, cfg, f"m{p}-{stop}.yaml"), out, timeout=240)
    x = tcp_sides(out)[(0, 0)]
    return x["data_segments_out"] - x["retransmitted_segments"], x


class Theory(unittest.TestCase):
    @limit(300)
    def test_newreno_follows_the_mathis_formula(self):
        # segments per second between two stop times (slow start excluded),
        # against (1 / RTT) sqrt(3/2) / sqrt(p), RTT = 4 x 250 us; about
        # 50 to 100 loss events per point keep the noise near 12%
        rtt = 1e-3
        points = [(1e-4, 1, 6), (1e-3, 0.2, 2.2), (1e-2, 0.2, 1.2)]
        with tempfile.TemporaryDirectory() as tmp:
            for p, t1, t2 in points:
                a, _ = mathis_run(tmp, p, f"{t1}s")
                b, x = mathis_run(tmp, p, f"{t2}s")
                rate = (b - a) / (t2 - t1)
                mathis = 1 / rtt * (1.5 ** 0.5) / p ** 0.5
                with self.subTest(p=p):
                    self.assertGreater(x["fast_retransmits"], 30)
                    self.assertLess(abs(rate / mathis - 1), 0.20, f"{rate:.0f} vs {mathis:.0f} segments/s")

    def test_dctcp_holds_the_queue_near_k_with_the_link_busy(self):
        k = 40000
        cfg = f"""seed: 1
payload: none
stop: 20ms
nic:
  transport: iwarp
  tcp: {{cc: dctcp, min_rto: 5ms, delayed_ack: 50us}}
topology:
  switch_defaults:
    buffer: 1MiB
    ecn: {{enable: true, kmin: {k}B, kmax: {k + 1}B, pmax: 100%}}
  switches: [s0]
  hosts: [h0, h1, h2]
  links:
    - {{a: h0, b: s0, rate: 10Gbps, delay: 5us}}
    - {{a: h1, b: s0, rate: 10Gbps, delay: 5us}}
    - {{a: h2, b: s0, rate: 10Gbps, delay: 5us}}
workload:
  messages:
    - {{src: h0, dst: h2, op: write, size: 1GiB}}
    - {{src: h1, dst: h2, op: write, size: 1GiB}}
"""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(write_config(tmp, cfg), out)
            q = [int(r["total_bytes"]) for r in table(out, "qlen.csv")
                 if r["port"] == "s0-2" and int(r["time_ps"]) > 5 * 10**9]
            self.assertGreater(len(q), 1000)
            mean = sum(q) / len(q)
            self.assertLess(abs(mean / k - 1), 0.25, mean)
            port = [r for r in table(out, "ports.csv") if r["port"] == "s0-2"][0]
            self.assertGreater(float(port["utilization"]), 0.95)
            self.assertEqual(summary(out)["totals"]["tail_drops"], 0)
            for x in tcp_sides(out).values():
                if x["data_segments_out"] > 100:
                    self.assertGreater(x["ecn_cuts"], 10)

    def test_long_flows_share_a_bottleneck_fairly(self):
        n = 4
        hosts = ", ".join(f"h{i}" for i in range(n + 1))
        links = "".join(f"    - {{a: h{i}, b: s0, rate: 10Gbps, delay: 5us}}\n" for i in range(n))
        msgs = "".join(f"    - {{src: h{i}, dst: h{n}, op: write, size: 1MiB, repeat: 1000}}\n"
                       for i in range(n))
        for cc in ("newreno", "cubic"):
            cfg = f"""seed: 1
payload: none
stop: 100ms
nic:
  transport: iwarp
  tcp: {{cc: {cc}, min_rto: 5ms, delayed_ack: 50us}}
topology:
  switch_defaults: {{buffer: 512KiB}}
  switches: [s0, s1]
  hosts: [{hosts}]
  links:
{links}    - {{a: s0, b: s1, rate: 10Gbps, delay: 20us}}
    - {{a: h{n}, b: s1, rate: 10Gbps, delay: 5us}}
workload:
  messages:
{msgs}"""
            with tempfile.TemporaryDirectory() as tmp, self.subTest(cc=cc):
                out = os.path.join(tmp, "out")
                run_sim(write_config(tmp, cfg), out)
                got = collections.Counter()
                for m in table(out, "messages.csv"):
                    if m["status"] == "ok":
                        got[m["src"]] += int(m["bytes"])
                x = [got[f"h{i}"] for i in range(n)]
                jain = sum(x) ** 2 / (n * sum(v * v for v in x))
                self.assertGreaterEqual(jain, 0.95, x)
                # and together they fill the bottleneck
                self.assertGreater(sum(x) * 8 / 0.1, 0.9 * 10e9)


if __name__ == "__main__":
    main(default_limit=120)
