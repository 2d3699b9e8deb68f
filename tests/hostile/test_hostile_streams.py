#!/usr/bin/python3
"""Hostile captures against TCP/iWARP reassembly, decode and replay: time
and memory bounded whatever the capture, and nothing dropped silently.

Each capture is written at test time by gen_hostile.py (or gen_iwarp and a
cut of its output). The limits are loose on purpose (a noisy 2-core
machine): before the stream decoder's connection table grew and its
out-of-order octets sat in a ring, 40,000 one-octet connections took 81 s
to replay and 320,000 out-of-order octets 77 s; now each case takes about a
second and the limit is 10 s.
"""
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
failed = 0


def check(where, ok, detail=""):
    global failed
    if not ok:
        failed += 1
        print(f"FAIL {where} {detail}")
    else:
        print(f"ok   {where}")


def gen(tmp, kind, n):
    path = os.path.join(tmp, f"{kind}-{n}.pcap")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_hostile.py"), kind, str(n), path], check=True)
    return path


# A sanitizer build (SANITIZER_FLAGS from make check) runs slower and holds
# shadow memory and freed blocks in quarantine: its bounds are looser.
SANITIZED = bool(os.environ.get("SANITIZER_FLAGS", "").strip())
TIME_SCALE = 3.0 if SANITIZED else 1.0
MEMORY_SCALE = 4.0 if SANITIZED else 1.0


def status():
    """Say how the checks went; the exit status: 1 when any failed."""
    print(f"{'FAIL' if failed else 'PASS'}: {failed} failed")
    return 1 if failed else 0


def script(main_fn):
    """Run a suite's main under a whole-run time limit (a hang fails there,
    not at the harness's timeout) and exit with its status."""
    sys.path.insert(0, os.path.join(os.environ.get("TOP_SRCDIR", "."), "tests"))
    from testlib import script_limit
    script_limit(300)
    sys.exit(main_fn())


def run(*args, limit_s=10.0, limit_mb=1024):
    """rdmasim with its output thrown away; (rc, seconds, peak MB, stderr)."""
    limit_s *= TIME_SCALE
    limit_mb *= MEMORY_SCALE
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    r = subprocess.run([os.environ["RDMASIM"], *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    dt = time.monotonic() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    where = " ".join(a if "/" not in a else os.path.basename(a) for a in args)
    check(f"{where}: {dt:.1f} s < {limit_s} s", dt < limit_s)
    if peak > before / 1024:  # the child set a new high: it is this one's peak
        check(f"{where}: {peak:.0f} MB < {limit_mb} MB", peak < limit_mb)
    return r.returncode, dt, peak, r.stderr


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    e = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    head, recs, off = data[:24], [], 24
    while off < len(data):
        _, _, incl, _ = struct.unpack(e + "IIII", data[off:off + 16])
        recs.append(data[off:off + 16 + incl])
        off += 16 + incl
    return head, recs


def tcp_of(rec):
    """(source port, payload) of an Ethernet/IPv4/TCP record, else None."""
    fr = rec[16:]
    if fr[12:14] != b"\x08\x00" or fr[23] != 6:
        return None
    ihl = (fr[14] & 15) * 4
    t = fr[14 + ihl:]
    total = struct.unpack("!H", fr[16:18])[0]
    doff = (t[12] >> 4) * 4
    return struct.unpack("!H", t[:2])[0], t[doff:total - ihl]


def gap_never_delivered(tmp):
    """An MPA connection whose first FPDU segment after the handshake is
    lost: the FPDUs behind it are held to the end, then reported, and
    decode --strict fails."""
    src = os.path.join(tmp, "iw.pcap")
    exe = os.path.join(os.environ["TOP_BUILDDIR"], "tests", "iwarp", "gen_iwarp")
    subprocess.run([exe, "-c", "-l", "one", "-n", "10", src], check=True)
    head, recs = read_pcap(src)
    out, req_port, dropped, changed = [], None, False, False
    for rec in recs:
        t = tcp_of(rec)
        if t and t[1].startswith(b"MPA ID Req Frame"):
            req_port = t[0]
        elif t and req_port == t[0] and t[1] and not dropped:
            dropped = True
            continue
        out.append(rec)
        if dropped and not changed and t and req_port == t[0] and t[1]:
            # the same held segment again, its last octet different
            changed = True
            out.append(rec[:-1] + bytes([rec[-1] ^ 0xFF]))
    check("a segment to drop was found", dropped)
    cut = os.path.join(tmp, "iw-gap.pcap")
    with open(cut, "wb") as f:
        f.write(head + b"".join(out))
    r = subprocess.run([os.environ["RDMASIM"], "decode", "--strict", cut], capture_output=True, text=True)
    check("decode names the octets never delivered", "octets after a gap never delivered" in r.stdout,
          r.stdout[-400:])
    check("decode --strict fails on them", r.returncode != 0, str(r.returncode))
    r = subprocess.run([os.environ["RDMASIM"], "replay", cut], capture_output=True, text=True)
    check("replay names them too", "never delivered" in r.stdout, r.stdout[-600:])
    check("replay flags the overlap with different octets", "different data" in r.stdout, r.stdout[-600:])
    r = subprocess.run([os.environ["RDMASIM"], "decode", cut], capture_output=True, text=True)
    check("decode flags the overlap with different octets", "retransmission with different data" in r.stdout)


def delivered_then_resent_different(tmp):
    """A data segment delivered in order, then sent again whole: with one
    octet changed, decode flags the retransmission as carrying different
    data (the octets are gone by then; a CRC of the segment is kept); sent
    again unchanged, it is a plain retransmission."""
    src = os.path.join(tmp, "iw-clean.pcap")
    exe = os.path.join(os.environ["TOP_BUILDDIR"], "tests", "iwarp", "gen_iwarp")
    subprocess.run([exe, "-c", "-l", "one", "-n", "10", src], check=True)
    head, recs = read_pcap(src)

    def resend_first_data_segment(change):
        out, req_port, resent = [], None, False
        for rec in recs:
            t = tcp_of(rec)
            out.append(rec)
            if t and t[1].startswith(b"MPA ID Req Frame"):
                req_port = t[0]
            elif t and req_port == t[0] and t[1] and not resent:
                resent = True
                out.append(rec[:-1] + bytes([rec[-1] ^ 0xFF]) if change else rec)
        check("a delivered segment to send again was found", resent)
        path = os.path.join(tmp, f"iw-resent-{change}.pcap")
        with open(path, "wb") as f:
            f.write(head + b"".join(out))
        return subprocess.run([os.environ["RDMASIM"], "decode", path], capture_output=True, text=True,
                              timeout=60).stdout

    out = resend_first_data_segment(True)
    check("decode flags a delivered segment sent again with different data",
          "retransmission with different data" in out, out[-600:])
    out = resend_first_data_segment(False)
    check("a delivered segment sent again unchanged is a plain retransmission",
          "retransmission" in out and "different data" not in out, out[-600:])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        p = gen(tmp, "conns", 100000)
        for cmd in ("decode", "replay"):
            rc, *_ = run(cmd, p)
            check(f"{cmd} 100k connections exits 0", rc == 0, str(rc))
        p = gen(tmp, "ooo", 320000)
        for cmd in ("decode", "replay"):
            run(cmd, p)
        p = gen(tmp, "synscan", 1000000)
        for cmd in ("decode", "replay"):
            rc, _, _, err = run(cmd, p, limit_mb=512)
            if cmd == "decode":
                check("decode says how many connections aged out", "868928 connections aged out" in err, err)
        gap_never_delivered(tmp)
        delivered_then_resent_different(tmp)

    return status()


if __name__ == "__main__":
    script(main)
