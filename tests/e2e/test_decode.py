#!/usr/bin/python3
"""End-to-end tests of `rdmasim decode`: output, JSON, exit codes, bad input.

Expectations about the real captures were read off the frames themselves
(pcaps/real/README.md says what each holds)."""
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
from testlib import main, read_pcap as records, write_raw_pcap as write_pcap  # noqa: E402
REAL = os.path.join(TOP, "pcaps", "real")


def real(name):
    return os.path.join(REAL, name)


def run(*args):
    p = subprocess.run([RDMASIM, "decode", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


class DecodeRealCaptures(unittest.TestCase):
    def test_every_frame_listed_once_and_every_crc_valid(self):
        expected_rdma = {
            "rxe-rocev2-read-write-ecn.pcap": (12, 12),
            "rxe-rocev2-write-read-arp.pcap": (16, 12),
            "hw-cx4-cnp-rocev1.pcap": (3, 3),
            "ib-native-erf.pcap": (43, 43),
        }
        for name, (frames, rdma) in expected_rdma.items():
            rc, out, err = run("--json", "--strict", real(name))
            self.assertEqual(rc, 0, err)
            objs = [json.loads(line) for line in out.splitlines()]
            self.assertEqual([o["frame"] for o in objs], list(range(1, frames + 1)), name)
            with_crc = [o for o in objs if o["proto"] != "other"]
            self.assertEqual(len(with_crc), rdma, name)
            for o in with_crc:
                self.assertTrue(o["icrc"]["ok"], (name, o["frame"]))
                self.assertNotIn("error", o)

    def test_rxe_read_write_sequence(self):
        rc, out, _ = run("--json", real("rxe-rocev2-read-write-ecn.pcap"))
        objs = [json.loads(line) for line in out.splitlines()]
        ops = [o["bth"]["opcode_name"] for o in objs]
        self.assertEqual(ops, ["UD SEND Only"] * 3 + [
            "RC RDMA WRITE Only", "RC Acknowledge", "RC RDMA READ Request",
            "RC RDMA READ Response First", "RC RDMA READ Response Middle",
            "RC RDMA READ Response Middle", "RC RDMA READ Response Last",
        ] + ["UD SEND Only"] * 2)
        self.assertEqual([o["cm"]["msg"] for o in objs if "cm" in o],
                         ["REQ", "REP", "RTU", "DREQ", "DREP"])
        req, rep = objs[0]["cm"], objs[1]["cm"]
        self.assertEqual(rep["remotecommid"], req["localcommid"])
        # The REP's starting PSN is the PSN the responder's first packet uses.
        write = objs[3]
        self.assertEqual(write["reth"]["dmalen"], 18)
        self.assertEqual(write["payload_len"], 18)
        self.assertEqual(objs[5]["reth"]["dmalen"], 4096)
        self.assertEqual(sum(o["payload_len"] for o in objs[6:10]), 4096)
        self.assertEqual(objs[4]["aeth"]["kind"], "ACK")
        self.assertEqual(objs[4]["bth"]["psn"], write["bth"]["psn"])

    def test_text_lines(self):
        rc, out, _ = run(real("hw-cx4-cnp-rocev1.pcap"))
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertEqual(len(lines), 3)
        self.assertIn("10.0.17.1 \u2192 10.0.18.1 RoCEv2 CNP QP=0x000118", lines[0])
        self.assertIn("RoCEv1 RC RDMA WRITE Only QP=0x00010a", lines[1])
        self.assertIn("payload=5", lines[1])
        self.assertTrue(all("ICRC ok" in line for line in lines))
        self.assertTrue(lines[0].lstrip().startswith("1 0.000000000 "))

    def test_non_rdma_frames_listed_briefly(self):
        rc, out, _ = run(real("rxe-rocev2-write-read-arp.pcap"))
        arp = [line for line in out.splitlines() if " ARP " in line]
        self.assertEqual(len(arp), 4)
        self.assertIn("ARP who has 192.168.", arp[0])

    def test_json_types(self):
        rc, out, _ = run("--json", real("ib-native-erf.pcap"))
        for line in out.splitlines():
            o = json.loads(line)
            self.assertIsInstance(o["ts"], str)
            sec, frac = o["ts"].split(".")
            self.assertEqual(len(frac), 9)
            self.assertIsInstance(o["len"], int)
            self.assertTrue(o["vcrc"]["ok"])
            self.assertEqual(o["erf"]["type"], 21)

    def test_rocev2_port_option(self):
        path = real("rxe-rocev2-send-port69.pcap")
        rc, out, _ = run("--json", path)
        self.assertEqual(sum(json.loads(x)["proto"] == "RoCEv2" for x in out.splitlines()), 105)
        rc, out, _ = run("--json", "--rocev2-port", "9", path)
        self.assertEqual(sum(json.loads(x)["proto"] == "RoCEv2" for x in out.splitlines()), 0)

    def test_pcapng_reads_like_pcap(self):
        # pcaps/rxe-rocev2-read-write-ecn.pcapng is the real capture converted
        # with `editcap -F pcapng`.
        ng = run("--json", os.path.join(TOP, "pcaps", "rxe-rocev2-read-write-ecn.pcapng"))
        classic = run("--json", real("rxe-rocev2-read-write-ecn.pcap"))
        self.assertEqual(ng, classic)

    def test_several_files(self):
        a, b = real("hw-cx4-cnp-rocev1.pcap"), real("rxe-rocev2-read-write-ecn.pcap")
        rc, out, _ = run("--json", a, b)
        objs = [json.loads(x) for x in out.splitlines()]
        self.assertEqual(len(objs), 15)
        self.assertEqual({o["file"] for o in objs}, {a, b})
        rc, out, _ = run(a, b)
        self.assertEqual(out.count("==> "), 2)


class DecodeBadInput(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_usage_errors(self):
        self.assertEqual(run()[0], 2)
        rc, _, err = run("--bogus", real("hw-cx4-cnp-rocev1.pcap"))
        self.assertEqual(rc, 2)
        rc, _, err = run("--rocev2-port", "70000", real("hw-cx4-cnp-rocev1.pcap"))
        self.assertEqual(rc, 2)
        self.assertIn("--rocev2-port", err)
        rc, out, _ = run("--help")
        self.assertEqual(rc, 0)
        for option in ("--json", "--strict", "--rocev2-port"):
            self.assertIn(option, out)

    def test_unreadable_files(self):
        missing = self.path("missing.pcap")
        rc, out, err = run(missing)
        self.assertEqual(rc, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn(missing, err)
        garbage = self.path("garbage.pcap")
        with open(garbage, "wb") as f:
            f.write(b"this is not a capture file at all")
        rc, out, err = run(garbage)
        self.assertEqual(rc, 2)
        self.assertIn(garbage, err)
        empty = self.path("empty.pcap")
        open(empty, "wb").close()
        self.assertEqual(run(empty)[0], 2)

    def test_bad_icrc_reported_and_decoding_goes_on(self):
        gh, recs = records(real("rxe-rocev2-read-write-ecn.pcap"))
        hdr, data = recs[4]
        recs[4] = (hdr, data[:-1] + bytes([data[-1] ^ 0x01]))
        bad = self.path("bad-icrc.pcap")
        write_pcap(bad, gh, recs)
        rc, out, err = run("--json", bad)
        self.assertEqual(rc, 0)
        objs = [json.loads(x) for x in out.splitlines()]
        self.assertEqual(len(objs), 12)
        self.assertEqual(objs[4]["error"], "bad ICRC: ICRC mismatch")
        self.assertFalse(objs[4]["icrc"]["ok"])
        self.assertTrue(objs[5]["icrc"]["ok"])
        self.assertIn("1 of 12", err)
        self.assertEqual(run("--strict", bad)[0], 1)
        rc, out, _ = run(bad)
        self.assertIn("ICRC BAD", out.splitlines()[4])

    def test_snapped_frame_is_truncated(self):
        gh, recs = records(real("rxe-rocev2-read-write-ecn.pcap"))
        hdr, data = recs[6]
        snapped = hdr[:8] + struct.pack("<I", 60) + hdr[12:]
        recs[6] = (snapped, data[:60])
        path = self.path("snapped.pcap")
        write_pcap(path, gh, recs)
        # cut by the snap length: said so, and not damage, even with --strict
        rc, out, err = run("--json", "--strict", path)
        self.assertEqual(rc, 0)
        self.assertIn("1 of 12 frames cut by the snap length", err)
        o = json.loads(out.splitlines()[6])
        self.assertNotIn("error", o)
        self.assertEqual(o["snapped_in"], "payload")
        self.assertEqual(o["caplen"], 60)
        self.assertEqual(o["bth"]["opcode_name"], "RC RDMA READ Response First")
        self.assertEqual(len(out.splitlines()), 12)
        rc, out, _ = run(path)
        self.assertIn("[cut by the snap length in payload]", out.splitlines()[6])
        # the same bytes with a wire length to match are damage
        recs[6] = (hdr[:8] + struct.pack("<II", 60, 60), data[:60])
        write_pcap(path, gh, recs)
        rc, out, err = run("--json", "--strict", path)
        self.assertEqual(rc, 1)
        self.assertIn("1 of 12 frames truncated, malformed or with a bad CRC", err)
        self.assertTrue(json.loads(out.splitlines()[6])["error"].startswith("malformed"))

    def test_file_cut_mid_record(self):
        path = self.path("cut.pcap")
        with open(real("rxe-rocev2-read-write-ecn.pcap"), "rb") as f:
            blob = f.read()
        with open(path, "wb") as f:
            f.write(blob[:-100])
        rc, out, err = run(path)
        self.assertEqual(rc, 2)
        self.assertEqual(len(out.splitlines()), 11)
        self.assertIn("frame 12", err)
        self.assertIn(path, err)

    def test_malformed_frame(self):
        gh, recs = records(real("rxe-rocev2-read-write-ecn.pcap"))
        hdr, data = recs[4]
        data = bytearray(data)
        data[14 + 20 + 4:14 + 20 + 6] = struct.pack(">H", 2000)  # UDP length
        recs[4] = (hdr, bytes(data))
        path = self.path("malformed.pcap")
        write_pcap(path, gh, recs)
        rc, out, _ = run("--json", path)
        o = json.loads(out.splitlines()[4])
        self.assertTrue(o["error"].startswith("malformed: UDP length"), o["error"])
        rc, out, _ = run(path)
        self.assertIn("[malformed: UDP length", out.splitlines()[4])


def ipv4_checksum(header):
    total = sum(struct.unpack(">%dH" % (len(header) // 2), header))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return struct.pack(">H", ~total & 0xffff)


def fragment(frame, sizes):
    """Split the IPv4 datagram of an Ethernet frame (no options) into
    fragments carrying `sizes` bytes of its payload each (multiples of 8
    but the last, RFC 791): offsets in 8-byte units, More Fragments on all
    but the last, header checksums recomputed."""
    eth, ip, payload = frame[:14], bytearray(frame[14:34]), frame[34:14 + struct.unpack(">H", frame[16:18])[0]]
    assert sum(sizes) == len(payload)
    out, at = [], 0
    for i, n in enumerate(sizes):
        h = bytearray(ip)
        h[2:4] = struct.pack(">H", 20 + n)
        h[6:8] = struct.pack(">H", (0x2000 if i < len(sizes) - 1 else 0) | (at // 8))
        h[10:12] = b"\0\0"
        h[10:12] = ipv4_checksum(bytes(h))
        out.append(eth + bytes(h) + payload[at:at + n])
        at += n
    return out


class Fragments(unittest.TestCase):
    """IPv4 fragments of a RoCEv2 datagram (first: offset 0 and More
    Fragments; middle: both; last: an offset alone) are not RoCEv2 packets
    and must not be decoded as one, though the first holds the UDP header
    to port 4791 and a BTH: each is listed as an IPv4 fragment with its
    offset and flag, and none is an error. The datagram whole, before it
    is split, is the RoCEv2 READ response it was."""

    FIRST, MIDDLE = 64, 256

    def write_fragments(self, path):
        gh, recs = records(real("rxe-rocev2-read-write-ecn.pcap"))
        hdr, frame = max(recs, key=lambda r: len(r[1]))  # a READ response with 1024+ bytes
        self.assertEqual(frame[12:14], b"\x08\x00")
        self.assertEqual(frame[20:22], b"\x40\x00")  # DF, offset 0: whole
        ip_payload = struct.unpack(">H", frame[16:18])[0] - 20
        frags = fragment(frame, [self.FIRST, self.MIDDLE, ip_payload - self.FIRST - self.MIDDLE])
        write_pcap(path, gh, [(hdr, frame)] + [
            (hdr[:8] + struct.pack("<II", len(f), len(f)), f) for f in frags])
        return frame

    @unittest.skipUnless(shutil.which("tshark"), "tshark is not installed")
    def test_tshark_sees_the_same_fragments(self):
        """tshark, not reassembling, sees the same three fragments (MF, and
        offsets in its 8-byte units). It does hand the first fragment's UDP
        payload to the InfiniBand dissector, which rdmasim decode rightly
        does not: that BTH heads a datagram the frame does not hold, and
        its ICRC is in the last fragment."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "fragments.pcap")
            self.write_fragments(path)
            p = subprocess.run(["tshark", "-n", "-r", path, "-o", "ip.defragment:FALSE", "-T", "fields",
                                "-e", "ip.flags.mf", "-e", "ip.frag_offset", "-e", "infiniband.bth.opcode"],
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line.split("\t") for line in p.stdout.splitlines()]
        self.assertEqual([r[:2] for r in rows[1:]], [["1", "0"], ["1", str(self.FIRST // 8)],
                                                      ["0", str((self.FIRST + self.MIDDLE) // 8)]])
        self.assertEqual([r[2] for r in rows[2:]], ["", ""])

    def test_fragments_are_listed_as_fragments_never_as_rocev2(self):
        first, middle = self.FIRST, self.MIDDLE
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "fragments.pcap")
            frame = self.write_fragments(path)
            rc, out, err = run("--strict", path)
            lines = out.splitlines()
            self.assertEqual(len(lines), 4, out + err)
            self.assertIn("RoCEv2 RC RDMA READ Response", lines[0])
            for line, (offset, mf) in zip(lines[1:], ((0, " MF"), (first, " MF"), (first + middle, ""))):
                self.assertNotIn("RoCEv2", line, "a fragment was decoded as RoCEv2")
                self.assertNotIn("ICRC", line)
                self.assertIn(f"other IPv4 fragment id=0x{struct.unpack('>H', frame[18:20])[0]:04x} "
                              f"proto=17 offset={offset}{mf} len=", line)
            self.assertEqual(rc, 0, "a fragment is no error: " + err)
            rc, out, err = run("--json", "--strict", path)
            self.assertEqual(rc, 0, err)
            objs = [json.loads(x) for x in out.splitlines()]
        self.assertEqual(len(objs), 4)
        for o, (offset, flags) in zip(objs[1:], ((0, 1), (first // 8, 1), ((first + middle) // 8, 0))):
            self.assertEqual(o["proto"], "other")
            self.assertNotIn("udp", o)
            self.assertNotIn("bth", o)
            self.assertNotIn("error", o)
            self.assertEqual((o["ip"]["frag_offset"], o["ip"]["flags"] & 1), (offset, flags))


if __name__ == "__main__":
    main(default_limit=30)
