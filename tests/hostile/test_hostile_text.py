#!/usr/bin/python3
"""Right output on hostile but legal inputs: times before the first frame,
and file names that are not UTF-8, hold control characters or are long.

Before: -0.3 s relative printed as "-1.700000000" (tshark: -0.300000000)
and a JSON ts of -0.5 s as "-1.500000000"; replay of a capture starting
before 1970 said it started at 18446744073709551615.5 and lasted 0 ns; a name with byte 0xff made
decode --json (several files) and replay --json emit invalid JSON, and
names were cut after about 4,077 bytes. Now a byte that is not UTF-8 is
written \\udcXX (Python's surrogateescape gives the byte back) and names
are never cut. RoCEv2 behind more than two VLAN tags was "other"; it is
decoded behind up to 20, as tshark 4.0 does, and RoCEv2 behind IPv6
extension headers (Hop-by-Hop, Routing, an atomic Fragment, Destination
Options, AH), which was "other", is decoded. decode's "==> name <=="
header (several files, text) printed a name's control characters as they
are (an escape sequence in a name reached the terminal); now they, DEL
and the backslash are written \\xNN.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hostile_streams as streams  # noqa: E402
from test_hostile_streams import check, gen  # noqa: E402


def rdmasim(*args):
    return subprocess.run([os.environ["RDMASIM"], *args], capture_output=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        times = gen(tmp, "times", 3)
        lines = rdmasim("decode", times).stdout.decode().splitlines()
        check("a frame 0.3 s before the first is at -0.300000000", " -0.300000000 " in lines[1], lines[1])
        check("10.5 s before the first is -10.500000000", " -10.500000000 " in lines[2], lines[2])
        objs = [json.loads(x) for x in rdmasim("decode", "--json", times).stdout.splitlines()]
        check("JSON ts of -0.5 s is -0.500000000", objs[2]["ts"] == "-0.500000000", objs[2]["ts"])

        # replay: a capture that starts before 1970 keeps its times
        import gen_hostile as g0
        neg = os.path.join(tmp, "neg.pcap")
        with open(neg, "wb") as f:
            f.write(g0.PCAP_HDR)
            for i, (sec, ns) in enumerate([(-1, 500000000), (0, 500000000), (2, 0)]):
                x = g0.roce(bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]), 0x04, 1, i, b"\0" * 8)
                f.write(struct.pack("<iIII", sec, ns, len(x), len(x)) + x)
        d = json.loads(rdmasim("replay", "--json", neg).stdout)
        check("replay: a capture starting at -0.5 s says so", d["capture_start"] == "-0.500000000", d["capture_start"])
        check("and lasts 2.5 s, not 0", d["summary"]["duration_ns"] == 2500000000, str(d["summary"]["duration_ns"]))

        tmpb = os.fsencode(tmp)
        odd = os.path.join(tmpb, b"we\xffird\x01\x7f name\xc3\x28.pcap")
        deep = tmpb
        while len(deep) < 3700:
            deep = os.path.join(deep, b"d" * 100 + b"\x02" * 50)
            os.mkdir(deep)
        long = os.path.join(deep, b"\xfe" * 100 + b".pcap")
        data = open(times, "rb").read()
        for p in (odd, long):
            with open(p, "wb") as f:
                f.write(data)
        for p in (odd, long):
            r = rdmasim("decode", "--json", times, p)
            try:
                names = {json.loads(x)["file"] for x in r.stdout.splitlines()}
            except ValueError as e:
                names = {str(e)}
            check(f"decode --json names a {len(p)}-byte odd name exactly",
                  {os.fsencode(n) for n in names} == {os.fsencode(times), p}, str(names)[:200])
            r = rdmasim("replay", "--json", p)
            try:
                name = json.loads(r.stdout)["file"]
            except ValueError as e:
                name = str(e)
            check(f"replay --json names a {len(p)}-byte odd name exactly", os.fsencode(name) == p, name[:200])
        # the text header of several files: control characters as \xNN
        r = rdmasim("decode", times, odd)
        heads = [x for x in r.stdout.split(b"\n") if x.startswith(b"==> ")]
        want = b"==> " + odd.replace(b"\x01", b"\\x01").replace(b"\x7f", b"\\x7f") + b" <=="
        check("decode's ==> name <== escapes control characters as \\xNN",
              len(heads) == 2 and heads[1] == want and not any(c < 0x20 or c == 0x7f for c in heads[1]),
              repr(heads))
        esc = os.path.join(tmpb, b"a\x1b[2Jb\\c\nd.pcap")
        with open(esc, "wb") as f:
            f.write(data)
        r = rdmasim("decode", times, esc)
        heads = [x for x in r.stdout.split(b"\n") if x.startswith(b"==> ")]
        check("an escape sequence, a backslash and a newline in a name stay on the header's line, escaped",
              len(heads) == 2 and heads[1].endswith(b"/a\\x1b[2Jb\\x5cc\\x0ad.pcap <==")
              and r.stdout.count(b"\n") == len(r.stdout.splitlines()), repr(heads))
        # RoCEv2 behind 3 and 20 VLAN tags (tshark 4.0 decodes up to 20)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import gen_hostile as g
        fr = g.roce(bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]), 0x04, 1, 0, b"\0" * 8)
        vlan = os.path.join(tmp, "vlan.pcap")
        with open(vlan, "wb") as f:
            f.write(g.PCAP_HDR)
            for i, k in enumerate((3, 20, 21)):
                x = fr[:12] + b"\x81\x00\x00\x0a" * k + fr[12:]
                f.write(struct.pack("<IIII", 1, i, len(x), len(x)) + x)
        r = rdmasim("decode", vlan)
        lines = r.stdout.decode().splitlines()
        check("RoCEv2 behind 3 and 20 VLAN tags is decoded", all("RoCEv2 RC SEND Only" in x for x in lines[:2]),
              r.stdout.decode())
        check("a 21st tag is unsupported, not malformed", "more than twenty VLAN tags" in lines[2] and
              r.returncode == 0, r.stdout.decode())
        v6 = gen(tmp, "ipv6ext", 3)
        lines = rdmasim("decode", v6).stdout.decode().splitlines()
        check("RoCEv2 behind IPv6 extension headers is decoded, ICRC as rxe computes it",
              len(lines) == 3 and all("RoCEv2 RC SEND Only" in x and "ICRC ok" in x for x in lines), str(lines))
        if shutil.which("tshark"):
            t = subprocess.run(["tshark", "-r", v6], capture_output=True, text=True).stdout.splitlines()
            check("tshark decodes the same frames as RoCE", len(t) == 3 and all("RRoCE" in x for x in t), str(t))
    return streams.status()


if __name__ == "__main__":
    streams.script(main)
