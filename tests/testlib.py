"""What the Python test suites share: the command under test, a reader for
the nanosecond pcaps `rdmasim sim` writes, a per-test time limit, and the
exit status automake's test driver reads (0 pass, 1 fail, 77 skip).

A hang must fail the test it is in, within that test's limit, not run
into the harness's timeout: `main()` arms an alarm around every test
method; when it rings, the test fails naming the limit, and a program it
was waiting for is killed (subprocess.run kills its child when the wait
is interrupted). TEST_TIME_SCALE (a number, default 1) stretches every
limit for slow builds (sanitizers, valgrind)."""
import os
import signal
import struct
import sys
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
EXIT_SKIP = 77
SCALE = float(os.environ.get("TEST_TIME_SCALE", "1") or 1)


def limit(seconds):
    """The time limit of a test method or class, in seconds (scaled)."""
    def mark(obj):
        obj.time_limit = seconds
        return obj
    return mark


def seconds(s):
    """s seconds scaled by TEST_TIME_SCALE: for subprocess timeouts."""
    return s * SCALE


def read_pcap(path):
    """(file header, [(record header, frame bytes)]) of a little-endian
    classic pcap, the bytes as they are: for tests that rewrite records."""
    with open(path, "rb") as f:
        blob = f.read()
    magic = struct.unpack("<I", blob[:4])[0]
    if magic not in (0xa1b23c4d, 0xa1b2c3d4):
        raise ValueError(f"{path}: not a little-endian pcap (magic {magic:#x})")
    out, off = [], 24
    while off < len(blob):
        hdr = blob[off:off + 16]
        caplen = struct.unpack("<I", hdr[8:12])[0]
        out.append((hdr, blob[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return blob[:24], out


def write_raw_pcap(path, file_header, records):
    """Write what read_pcap returned (records changed or not)."""
    with open(path, "wb") as f:
        f.write(file_header)
        for hdr, data in records:
            f.write(hdr)
            f.write(data)


def pcap_records(path):
    """(timestamp in ns, frame bytes) of every record of a pcap file; the
    timestamps of a microsecond pcap are scaled to nanoseconds."""
    file_header, records = read_pcap(path)
    frac = 1 if file_header[:4] == b"\x4d\x3c\xb2\xa1" else 1000
    out = []
    for hdr, data in records:
        sec, sub = struct.unpack("<II", hdr[:8])
        out.append((sec * 10**9 + sub * frac, data))
    return out


def write_pcap(path, frames, linktype=1):
    """Write (timestamp in ns, frame bytes) records as a nanosecond pcap."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, linktype))
        for t, frame in frames:
            f.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(frame), len(frame)))
            f.write(frame)


class TimeLimitExceeded(AssertionError):
    pass


def script_limit(seconds_, name=None):
    """For a suite written as a script: fail it (exit 1, naming the limit)
    if it runs longer than `seconds_` (scaled), instead of hanging. The
    exception raised in the wait for a program kills that program."""
    lim = seconds_ * SCALE
    what = name or os.path.basename(sys.argv[0])

    def ring(signum, frame):
        raise SystemExit(f"{what}: ran past its time limit of {lim:.0f} s: a hang?")
    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, lim)


class _LimitedResult(unittest.TextTestResult):
    default_limit = 60

    def startTest(self, test):
        method = getattr(test, getattr(test, "_testMethodName", ""), None)
        lim = getattr(method, "time_limit", None) or getattr(test, "time_limit", None) \
            or self.default_limit
        lim *= SCALE

        def ring(signum, frame):
            raise TimeLimitExceeded(f"{test.id()} ran past its time limit of {lim:.0f} s: a hang?")
        signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, lim)
        super().startTest(test)

    def stopTest(self, test):
        signal.setitimer(signal.ITIMER_REAL, 0)
        super().stopTest(test)


def main(default_limit=60):
    """Run the unittest cases of __main__, each under its time limit
    (default_limit seconds unless @limit says otherwise), and exit 1 when
    one failed, else 77 when any was skipped (a suite that did not run
    all of itself must not report PASS), else 0."""
    _LimitedResult.default_limit = default_limit
    runner = unittest.TextTestRunner(resultclass=_LimitedResult, verbosity=1)
    result = unittest.main(exit=False, testRunner=runner, verbosity=1).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.skipped:
        for test, why in result.skipped:
            print(f"SKIP: {test.id()}: {why}")
        sys.exit(EXIT_SKIP)
    sys.exit(0)
