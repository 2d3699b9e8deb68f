#!/usr/bin/python3
"""iWARP reassembly and error reporting of `rdmasim decode`, on captures
tests/iwarp/gen_iwarp writes: the cases tshark cannot decode.

The expected output is the project's own decode of the same stream cut one
FPDU per segment (which test_iwarp_tshark.py holds against tshark):
  - two FPDUs per segment, FPDUs split across segments, a retransmitted
    and a reordered segment must yield the same FPDUs in the same order;
  - a capture joined mid-stream yields, with markers, a tail of those FPDUs
    for each direction, and without markers one "no MPA handshake seen";
  - each injected error is reported once, on the frame that carries it, and
    decoding goes on.
"""
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.environ.get("TOP_SRCDIR", "."), "tests"))
from testlib import script_limit  # noqa: E402

FLAGS = [["-c"], ["-m", "-c"], ["-6", "-m"], ["-r", "2", "-m", "-c"], []]


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, where, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {where} {detail}")


def gen(tmp, flags, name):
    path = os.path.join(tmp, name + ".pcap")
    exe = os.path.join(os.environ["TOP_BUILDDIR"], "tests", "iwarp", "gen_iwarp")
    subprocess.run([exe] + flags + [path], check=True)
    return path


def decode(pcap, *opts):
    r = subprocess.run([os.environ["RDMASIM"], "decode", *opts, pcap], capture_output=True, text=True)
    return r.returncode, r.stdout


def objects(pcap):
    rc, out = decode(pcap, "--json")
    return [json.loads(line) for line in out.splitlines()]


def fpdus(objs):
    """(source port, what the FPDU is) in stream order; frame and TCP aside."""
    return [(o["tcp"]["srcport"], json.dumps([o["mpa"], o["ddp"], o["rdmap"], o["payload_len"],
                                               o.get("mpa_crc")], sort_keys=True))
            for o in objs if "ddp" in o]


def errors(objs):
    return [o["error"] for o in objs if "error" in o]


def segmentation(ck, tmp, flags):
    name = " ".join(flags) or "no markers, no CRC"
    ref_objs = objects(gen(tmp, flags + ["-l", "one"], "one"))
    ref = fpdus(ref_objs)
    ck.check(f"{name}: reference decodes", len(ref) == 19 and not errors(ref_objs), errors(ref_objs))
    for layout, extra in [("two", []), ("split", []), ("one", ["-t"]), ("split", ["-t"])]:
        where = f"{name}, -l {layout} {' '.join(extra)}"
        pcap = gen(tmp, flags + ["-l", layout] + extra, "x")
        objs = objects(pcap)
        got = fpdus(objs)
        ck.check(where + ": same FPDUs in the same order", got == ref,
                 f"{len(got)} FPDUs against {len(ref)}")
        ck.check(where + ": no errors", not errors(objs), errors(objs))
        if layout == "two":
            ck.check(where + ": a frame carries a second FPDU", any(o.get("fpdu") == 1 for o in objs))
        if layout == "split":
            ck.check(where + ": frames that complete no FPDU are still iWARP",
                     any(o["proto"] == "iWARP" and "ddp" not in o and o["tcp"]["len"] for o in objs))
        if extra:
            notes = {o.get("note") for o in objs}
            ck.check(where + ": retransmission and reordering noted",
                     {"retransmission", "out of order: held"} <= notes, notes)
        rc, text = decode(pcap)
        ck.check(where + ": text output", rc == 0 and text.count(" iWARP ") >= len(ref))


def midstream(ck, tmp, flags):
    name = " ".join(flags) or "no markers"
    ref = fpdus(objects(gen(tmp, flags, "one")))
    objs = objects(gen(tmp, flags + ["-s"], "mid"))
    got = fpdus(objs)
    if "-m" in flags:
        for port in {p for p, _ in ref}:
            want = [k for p, k in ref if p == port]
            have = [k for p, k in got if p == port]
            ck.check(f"{name} mid-stream, port {port}: a tail of the FPDUs",
                     0 < len(have) <= len(want) and have == want[len(want) - len(have):],
                     f"{len(have)} of {len(want)}")
        ck.check(f"{name} mid-stream: no errors", not errors(objs), errors(objs))
    else:
        ck.check(f"{name} mid-stream: nothing decoded", not got, len(got))
        ck.check(f"{name} mid-stream: reported once", errors(objs) == ["unsupported: no MPA handshake seen"],
                 errors(objs))


def injected(ck, tmp):
    ref = fpdus(objects(gen(tmp, ["-m", "-c"], "ref")))
    rc, _ = decode(gen(tmp, ["-m", "-c"], "ref"), "--strict")
    ck.check("clean capture passes --strict", rc == 0, rc)
    cases = [
        ("crc", ["-c"], "bad checksum: MPA CRC32c mismatch", 0),
        ("reserved", ["-c"], "malformed: DDP reserved field set", 0),
        ("marker", ["-m", "-c"], "malformed: MPA marker points to no FPDU header", 0),
        ("overrun", ["-c"], "malformed: ULPDU_Length overruns the end of the stream", 1),
    ]
    for kind, flags, error, lost in cases:
        pcap = gen(tmp, flags + ["-e", kind], kind)
        objs = objects(pcap)
        errs = errors(objs)
        ck.check(f"-e {kind}: reported once", errs == [error], errs)
        bad = [o for o in objs if o.get("error") == error]
        ck.check(f"-e {kind}: with its frame number", bool(bad) and isinstance(bad[0].get("frame"), int))
        n = len([o for o in objs if "ddp" in o])
        ck.check(f"-e {kind}: decoding goes on", n == len(ref) - lost, f"{n} FPDUs, {len(ref)} expected")
        rc, _ = decode(pcap, "--strict")
        ck.check(f"-e {kind}: --strict fails", rc == 1, rc)
        if kind == "crc":
            ck.check("-e crc: ok false", any(o.get("mpa_crc", {}).get("ok") is False for o in objs))


def main():
    ck = Checker()
    with tempfile.TemporaryDirectory() as tmp:
        for flags in FLAGS:
            segmentation(ck, tmp, flags)
        for flags in [["-m", "-c"], ["-6", "-m"], ["-c"]]:
            midstream(ck, tmp, flags)
        injected(ck, tmp)
    print(f"iwarp decode: {ck.passed} passed, {ck.failed} failed")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    script_limit(120)
    sys.exit(main())
