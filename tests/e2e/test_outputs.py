#!/usr/bin/python3
"""What decode and replay show, checked against tshark and read back with
Debian's jq (which holds numbers as doubles, exact only below 2^53):
64-bit values and CRCs as hex strings, identical in decode and replay; ERF
time and lengths; one-line summaries of the frames around RDMA; ECN-CE;
-c; --filter; gzip-compressed captures; usage errors in one line; replay's
atomics."""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from testlib import main, read_pcap as records, write_raw_pcap as write_pcap  # noqa: E402
REAL = os.path.join(TOP, "pcaps", "real")
RXE = os.path.join(REAL, "rxe-rocev2-read-write-ecn.pcap")
ERF = os.path.join(REAL, "ib-native-erf.pcap")
PORT69 = os.path.join(REAL, "rxe-rocev2-send-port69.pcap")
HAVE = shutil.which("tshark") and shutil.which("jq")


def run(*args):
    p = subprocess.run([RDMASIM, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def jq(program, text):
    return subprocess.run(["jq", "-r", program], input=text, capture_output=True, text=True,
                          check=True).stdout.split()


def tshark(path, *args):
    return subprocess.run(["tshark", "-r", path, *args], capture_output=True, text=True,
                          check=True).stdout.splitlines()


def fields(path, *names, filt=None):
    # the capture's RoCEv2 frames come from UDP port 69, which tshark would give TFTP
    args = ["-d", "udp.port==69,infiniband", "-T", "fields"] + [a for n in names for a in ("-e", n)]
    if filt:
        args += ["-Y", filt]
    return [line.split("\t") for line in tshark(path, *args)]


def icrc(frame):
    """The RoCEv2 ICRC of an Ethernet + IPv4 frame up to it (the IBA's
    invariant CRC: ones before, over the IP header with TOS, TTL and
    checksum masked, the UDP checksum masked and BTH byte 4 masked)."""
    ip, udp, rest = bytearray(frame[14:34]), bytearray(frame[34:42]), bytearray(frame[42:])
    ip[1], ip[8], ip[10:12] = 0xff, 0xff, b"\xff\xff"
    udp[6:8] = b"\xff\xff"
    rest[4] = 0xff
    return zlib.crc32(b"\xff" * 8 + ip + udp + rest)


@unittest.skipUnless(HAVE, "tshark and jq are needed")
class Numbers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def crafted(self):
        """The RDMA WRITE of the soft-RoCE capture with a VA above 2^53."""
        gh, recs = records(RXE)
        hdr, data = recs[3]
        at = 14 + 20 + 8 + 12  # Ethernet, IPv4, UDP, BTH: the RETH's VA
        frame = data[:at] + (0xffff9a0000001001).to_bytes(8, "big") + data[at + 8:-4]
        recs[3] = (hdr, frame + icrc(frame).to_bytes(4, "little"))
        path = os.path.join(self.tmp, "va.pcap")
        write_pcap(path, gh, recs)
        return path

    def test_va_survives_jq_and_matches_tshark_and_replay(self):
        path = self.crafted()
        _, out, _ = run("decode", "--json", path)
        ours = jq("select(.reth) | .reth.va", out)
        self.assertEqual(ours[0], "0xffff9a0000001001")
        theirs = [f[0] for f in fields(path, "infiniband.reth.va", filt="infiniband.reth")]
        self.assertEqual(ours, theirs)
        _, rep, _ = run("replay", "--json", path)
        self.assertEqual(jq(".messages[] | select(.kind == \"RDMA WRITE\") | .remote_address", rep),
                         ["0xffff9a0000001001"])

    def test_guids_and_crcs_as_tshark_shows_them(self):
        _, out, _ = run("decode", "--json", ERF)
        ours = jq("select(.cm.localcaguid) | .cm.localcaguid", out)
        theirs = [f[0] or f[1] for f in fields(ERF, "infiniband.cm.req.localcaguid", "infiniband.cm.rep.localcaguid",
                                               filt="infiniband.cm.req || infiniband.cm.rep")]
        self.assertTrue(ours)
        self.assertEqual(ours, theirs)
        for path in (RXE, ERF):
            _, out, _ = run("decode", "--json", path)
            self.assertEqual(jq("select(.icrc) | .icrc.value", out),
                             [f[0] for f in fields(path, "infiniband.invariant.crc", filt="infiniband.invariant.crc")])
        self.assertEqual(jq("select(.vcrc) | .vcrc.value", run("decode", "--json", ERF)[1]),
                         [f[0] for f in fields(ERF, "infiniband.variant.crc", filt="infiniband.variant.crc")])

    def test_erf_time_and_length_as_tshark(self):
        _, out, _ = run("decode", "--json", ERF)
        ours = [(o["ts"], o["len"], o["caplen"]) for o in map(json.loads, out.splitlines())]
        theirs = [(t, int(n), int(c)) for t, n, c in fields(ERF, "frame.time_epoch", "frame.len", "frame.cap_len")]
        self.assertEqual(ours, theirs)
        self.assertEqual(ours[1], ("1210794479.499762550", 290, 290))
        _, text, _ = run("decode", ERF)
        self.assertIn(" 0.000069015 ", text.splitlines()[1])
        self.assertTrue(text.splitlines()[1].endswith(" len=290"))


@unittest.skipUnless(HAVE, "tshark and jq are needed")
class Lines(unittest.TestCase):
    def test_other_protocols_summarised_as_tshark_names_them(self):
        for path in (PORT69, ERF, os.path.join(REAL, "rxe-rocev2-write-read-arp.pcap")):
            theirs = [f[0] for f in fields(path, "_ws.col.Protocol")]
            _, out, _ = run("decode", path)
            for line, proto in zip(out.splitlines(), theirs):
                if proto in ("ARP", "TCP", "UDP", "ICMP", "ICMPv6"):
                    self.assertIn(f" {proto} ", line, (path, proto))
                    self.assertNotIn("EtherType", line)
        _, out, _ = run("decode", ERF)
        self.assertIn("IPoIB 10.0.0.36 \u2192 10.0.0.255 UDP 49501 \u2192 49501 payload=68", out.splitlines()[2])

    def test_ecn_ce_fecn_becn_in_text(self):
        gh, recs = records(RXE)
        hdr, data = recs[3]
        ip = bytearray(data[14:34])
        ip[1] |= 3  # Congestion Experienced; the ICRC masks the TOS, the header checksum does not
        ip[10:12] = b"\0\0"
        s = sum(struct.unpack("!10H", bytes(ip)))
        while s >> 16:
            s = (s & 0xffff) + (s >> 16)
        ip[10:12] = struct.pack("!H", ~s & 0xffff)
        bth = bytearray(data[42:54])
        bth[4] |= 0xc0  # FECN and BECN (the ICRC masks byte 4 too)
        recs[3] = (hdr, data[:14] + bytes(ip) + data[34:42] + bytes(bth) + data[54:])
        tmp = tempfile.mkdtemp()
        try:
            path = os.path.join(tmp, "ce.pcap")
            write_pcap(path, gh, recs)
            rc, out, err = run("decode", "--strict", path)
            self.assertEqual(rc, 0, err)
            self.assertIn(" A FECN BECN ECN-CE va=", out.splitlines()[3])
            self.assertEqual(fields(path, "ip.dsfield.ecn")[3], ["3"])
        finally:
            shutil.rmtree(tmp)


@unittest.skipUnless(HAVE, "tshark and jq are needed")
class Selecting(unittest.TestCase):
    def frames(self, *args):
        _, out, _ = run("decode", "--json", *args)
        return [o["frame"] for o in map(json.loads, out.splitlines())]

    def test_count_as_tshark(self):
        self.assertEqual(self.frames("-c", "5", PORT69), [int(f[0]) for f in fields(PORT69, "frame.number") [:5]])
        self.assertEqual(len(run("decode", "-c", "3", RXE, RXE)[1].splitlines()), 3 + 1)  # and one file header

    def test_filter_as_tshark_filters(self):
        cases = [
            ("bth.opcode == 17 && ip.src == 192.168.70.6", "infiniband.bth.opcode == 17 && ip.src == 192.168.70.6"),
            ("bth.opcode == 0x11 and not (ip.src == 192.168.70.6)",
             "infiniband.bth.opcode == 17 && !(ip.src == 192.168.70.6)"),
            ("bth.psn >= 3 || ipv6", "infiniband.bth.psn >= 3 || ipv6"),
            ("immdt", "infiniband.immdt"),
            ("bth.opcode != 0 && bth.opcode < 5 && udp.dstport == 4791",
             "infiniband.bth.opcode != 0 && infiniband.bth.opcode < 5 && udp.dstport == 4791"),
            ("icrc.ok == true && !aeth", "infiniband.invariant.crc && !infiniband.aeth"),
            # the bound itself: SEND Last with Immediate is opcode 3
            ("bth.opcode <= 3 && udp.dstport == 4791", "infiniband.bth.opcode <= 3 && udp.dstport == 4791"),
        ]
        for ours, theirs in cases:
            self.assertEqual(self.frames("--filter", ours, PORT69),
                             [int(f[0]) for f in fields(PORT69, "frame.number", filt=theirs)], ours)
        self.assertEqual(self.frames("--filter", "bth.opcode_name == \"RC RDMA READ Request\"", RXE), [6])
        self.assertEqual(self.frames("--filter", "reth.va == 0x0000aaab09dd5000 && reth.dmalen > 18", RXE), [6])
        _, text, _ = run("decode", "--filter", "cm.msg == DREQ", RXE)
        self.assertEqual(len(text.splitlines()), 1)
        self.assertIn("CM DREQ", text)

    def test_bad_filter_is_one_line(self):
        rc, out, err = run("decode", "--filter", "bth.opcode ==", RXE)
        self.assertEqual((rc, out), (2, ""))
        self.assertEqual(len(err.splitlines()), 1)
        self.assertIn("column 14", err)


class Files(unittest.TestCase):
    def test_gzip_read_transparently(self):
        tmp = tempfile.mkdtemp()
        try:
            for name, src in (("a.pcap.gz", RXE), ("b.pcap.gz", ERF)):
                path = os.path.join(tmp, name)
                with open(src, "rb") as f, gzip.open(path, "wb") as g:
                    g.write(f.read())
                self.assertEqual(run("decode", "--json", path)[1], run("decode", "--json", src)[1])
                self.assertEqual(run("replay", "--json", path)[1].replace(path, src),
                                 run("replay", "--json", src)[1])
            if shutil.which("editcap"):
                ng = os.path.join(tmp, "c.pcapng")
                subprocess.run(["editcap", "-F", "pcapng", RXE, ng], check=True)
                with open(ng, "rb") as f, gzip.open(ng + ".gz", "wb") as g:
                    g.write(f.read())
                self.assertEqual(run("decode", ng + ".gz")[1], run("decode", RXE)[1])
        finally:
            shutil.rmtree(tmp)

    def test_usage_errors_in_one_line(self):
        for args in (["decode", "-Y", "x", RXE], ["decode", "--nope", RXE], ["decode", "--filter"], ["decode"],
                     ["decode", "-c", "0", RXE], ["replay", "-Y", RXE]):
            rc, out, err = run(*args)
            self.assertEqual((rc, out), (2, ""), args)
            self.assertEqual(len(err.splitlines()), 1, (args, err))
            self.assertIn(f"see 'rdmasim {args[0]} --help'", err)

    def test_missing_file_named_once(self):
        rc, _, err = run("decode", "nonexist.pcap")
        self.assertEqual(rc, 2)
        self.assertEqual(err, "rdmasim decode: nonexist.pcap: No such file or directory\n")


class Replay(unittest.TestCase):
    def test_atomics_move_eight_bytes_and_the_seed_survives_jq(self):
        tmp = tempfile.mkdtemp()
        try:
            p = subprocess.run([RDMASIM, "sim", os.path.join(TOP, "examples", "every-operation.yaml"), "--out", tmp,
                                "--seed", str(2**64 - 1)], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            if shutil.which("jq"):  # the seed, any 64-bit number, survives jq as the simulator's JSON writes it
                with open(os.path.join(tmp, "summary.json")) as f:
                    self.assertEqual(jq(".config.seed", f.read()), ["0xffffffffffffffff"])
            _, out, _ = run("replay", "--json", os.path.join(tmp, "pcap", "h0-0.pcap"))
            atomics = [m for m in json.loads(out)["messages"] if m["kind"] == "ATOMIC"]
            self.assertTrue(atomics)
            self.assertTrue(all(m["bytes"] == 8 for m in atomics), atomics)
            _, text, _ = run("replay", os.path.join(tmp, "pcap", "h0-0.pcap"))
            self.assertRegex(text, r"ATOMIC +%d +0 +%d B " % (len(atomics), 8 * len(atomics)))
        finally:
            shutil.rmtree(tmp)

    def test_conversations_numbered_in_order(self):
        _, out, _ = run("replay", "--json", RXE)
        doc = json.loads(out)
        self.assertEqual(sorted(v["id"] for v in doc["conversations"]), [1, 2])
        by_id = {v["id"]: v for v in doc["conversations"]}
        self.assertEqual(by_id[1]["a"]["qpn"], 1)  # the CM exchange on QP1 comes first
        self.assertEqual({m["conversation"] for m in doc["messages"]}, {2})
        self.assertEqual(by_id[2]["a"]["qpn"], 0x11)
        _, text, _ = run("replay", RXE)
        rows = text.split("Conversations")[1].split("\n\n")[0].splitlines()[2:]
        self.assertEqual(sorted(row.split()[0] for row in rows), ["1", "2"])

    def test_one_direction_is_not_a_missing_acknowledgement(self):
        # what one switch port saw when the acknowledgements took another path
        gh, recs = records(RXE)
        tmp = tempfile.mkdtemp()
        try:
            path = os.path.join(tmp, "oneway.pcap")
            write_pcap(path, gh, [(h, d) for h, d in recs if d[26:30] == bytes([192, 168, 65, 5])])
            _, out, _ = run("replay", "--json", path)
            doc = json.loads(out)
            self.assertEqual([a["kind"] for a in doc["anomalies"]], ["one direction only"])
            self.assertEqual(doc["summary"]["messages_failed"], 0)
            self.assertTrue(all("one direction only" in m["status"] for m in doc["messages"]))
            _, text, _ = run("replay", path)
            self.assertNotIn("missing acknowledgement", text)
            self.assertIn("2 messages (0 failed or unacknowledged)", text)
        finally:
            shutil.rmtree(tmp)

    def test_counts_in_the_singular(self):
        _, text, _ = run("replay", os.path.join(REAL, "hw-cx4-cnp-rocev1.pcap"))
        self.assertNotRegex(text, r"\b1 (conversation|message|CM message)s\b")


if __name__ == "__main__":
    main()
