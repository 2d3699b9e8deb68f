#!/usr/bin/python3
"""TCP reassembly's idle age-out and the options that set its limits.

Before: a connection left decode's and replay's TCP reassembly only when
more than 131,072 were open at once (a connection that went quiet stayed
for the rest of the capture), and neither limit could be set. Now one
without a segment for longer than --idle-timeout of capture time (default
10min) ages out and is reported as one past --max-connections is.
"""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hostile_streams as streams  # noqa: E402
from test_hostile_streams import check, gen  # noqa: E402

RDMASIM = os.environ["RDMASIM"]
GEN_IWARP = os.path.join(os.path.dirname(os.path.dirname(RDMASIM)), "tests", "iwarp", "gen_iwarp")
IDLE = "connection aged out, 0 octets held dropped (no segment for more than 600000000000 ns of capture time)"


def rdmasim(*args):
    return subprocess.run([RDMASIM, *args], capture_output=True, text=True, timeout=60)


def with_gap(src, dst, after, gap_s):
    """src with every record after the first `after` moved gap_s later."""
    data = open(src, "rb").read()
    out, off, i = [data[:24]], 24, 0
    while off < len(data):
        sec, frac, incl, orig = struct.unpack("<IIII", data[off:off + 16])
        if i >= after:
            sec += gap_s
        out.append(struct.pack("<IIII", sec, frac, incl, orig) + data[off + 16:off + 16 + incl])
        off += 16 + incl
        i += 1
    open(dst, "wb").write(b"".join(out))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        # an iWARP connection quiet for 20 minutes after its MPA exchange
        iw = os.path.join(tmp, "iw.pcap")
        subprocess.run([GEN_IWARP, "-c", iw], check=True)
        gap = os.path.join(tmp, "gap.pcap")
        with_gap(iw, gap, 6, 1200)
        r = rdmasim("decode", iw)
        check("decode: without a gap nothing ages out", r.returncode == 0 and "aged out" not in r.stdout + r.stderr,
              r.stderr)
        r = rdmasim("decode", gap)
        check("decode: 20 minutes quiet ages the connection out, reported on a line",
              r.returncode == 0 and IDLE in r.stdout and "1 after 600000000000 ns idle" in r.stderr,
              r.stdout[-600:] + r.stderr)
        r = rdmasim("decode", "--idle-timeout", "never", gap)
        check("decode --idle-timeout never: it stays", "aged out" not in r.stdout + r.stderr, r.stderr)
        r = rdmasim("decode", "--idle-timeout", "30min", gap)
        check("decode --idle-timeout 30min: it stays", "aged out" not in r.stdout + r.stderr, r.stderr)
        r = rdmasim("replay", gap)
        check("replay: the same connection ages out, an anomaly", r.returncode == 0 and IDLE in r.stdout,
              r.stdout[-800:])
        r = rdmasim("replay", "--idle-timeout", "21min", gap)
        check("replay --idle-timeout 21min: it stays", r.returncode == 0 and "aged out" not in r.stdout,
              r.stdout[-800:])

        # many plain TCP connections: counted, on stderr
        conns = gen(tmp, "conns", 3000)  # one segment each, 1 us apart
        r = rdmasim("decode", "--idle-timeout", "100us", conns)
        check("decode --idle-timeout 100us: 2899 of 3000 one-segment connections age out idle",
              r.returncode == 0 and "0 connections aged out, 2899 after 100000 ns idle" in r.stderr, r.stderr)
        r = rdmasim("decode", "--max-connections", "10", conns)
        check("decode --max-connections 10: 2990 age out for room",
              r.returncode == 0 and "at most 10 connections" in r.stderr and "2990 connections aged out" in r.stderr,
              r.stderr)
        for cmd in ("decode", "replay"):
            for opt, bad in (("--idle-timeout", "0"), ("--idle-timeout", "soon"), ("--max-connections", "0"),
                             ("--max-connections", "-3")):
                r = rdmasim(cmd, opt, bad, conns)
                check(f"{cmd} {opt} {bad} is a usage error", r.returncode == 2 and opt in r.stderr, r.stderr)
            r = rdmasim(cmd, "--help")
            check(f"{cmd} --help names both options", "--max-connections" in r.stdout and "--idle-timeout" in r.stdout)
    return streams.status()


if __name__ == "__main__":
    streams.script(main)
