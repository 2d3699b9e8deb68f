#!/usr/bin/python3
"""Runs interrupted part way leave no output that looks finished.

`rdmasim sim --out DIR` is sent SIGINT, then SIGTERM, while it writes its
traces: it must end by that signal and leave nothing behind: the traces, written
as NAME.pcap.tmp, are removed, and so are DIR and DIR/pcap, which the run
made.
`rdmasim replay --timeline CSV` reading a capture from a pipe that stops
half way is sent SIGINT, then SIGTERM: it must end by that signal and leave
neither CSV nor its temporary name CSV.tmp.
`rdmasim sim` on a terminal shows a progress line while it sets up a large
fabric; SIGINT then ends it by that signal, saying so, before the run and
with nothing written."""
import os
import pty
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from testlib import main  # noqa: E402
CAPTURE = os.path.join(TOP, "pcaps", "real", "rxe-rocev2-read-write-ecn.pcap")

# Long enough that no machine finishes it before the signal: every host of
# a k = 4 fat-tree writes 1 MiB to every other, 400 times over.
LONG_RUN = """\
payload: none
snaplen: 64
trace: [edge0]
topology:
  generate: {kind: fat-tree, k: 4}
workload:
  generate: {kind: all-to-all, op: write, size: 1MiB, repeat: 400}
"""


# A k = 40 fat-tree (16,000 hosts, 2,000 switches) takes over a second to
# set up; the progress line shows after half a second.
LARGE_SETUP = """\
payload: none
topology:
  generate: {kind: fat-tree, k: 40}
workload:
  generate: {kind: permutation, op: write, size: 4KiB}
"""


def wait_for(pred, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def default_signals():
    """In the child: SIGINT and SIGTERM as a terminal would deliver them,
    even when this test runs where they are ignored (a background job)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def files_under(top):
    return sorted(os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top) for f in fs)


class InterruptedSim(unittest.TestCase):
    def interrupt(self, sig):
        with tempfile.TemporaryDirectory() as tmp:
            config, out = os.path.join(tmp, "long.yaml"), os.path.join(tmp, "out")
            with open(config, "w") as f:
                f.write(LONG_RUN)
            p = subprocess.Popen([RDMASIM, "sim", "--quiet", "--out", out, config],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=default_signals)
            try:
                tracing = wait_for(lambda: any(n.endswith(".pcap.tmp") for n in files_under(out))
                                   if os.path.isdir(out) else False)
                self.assertTrue(tracing, "the run never started its traces")
                time.sleep(0.3)  # frames are being written now
                p.send_signal(sig)
                _, err = p.communicate(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            self.assertEqual(p.returncode, -sig, err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn("interrupted by %s" % signal.Signals(sig).name, err)
            self.assertIn(config, err)
            self.assertEqual(files_under(out), [])
            # the run made DIR and DIR/pcap for its outputs: gone again
            self.assertFalse(os.path.exists(out), "the output directory was left")

    def test_sigint(self):
        self.interrupt(signal.SIGINT)

    def test_sigterm(self):
        self.interrupt(signal.SIGTERM)


class InterruptedSetup(unittest.TestCase):
    def test_sigint(self):
        with tempfile.TemporaryDirectory() as tmp:
            config, out = os.path.join(tmp, "large.yaml"), os.path.join(tmp, "out")
            with open(config, "w") as f:
                f.write(LARGE_SETUP)
            master, slave = pty.openpty()
            p = subprocess.Popen([RDMASIM, "sim", "--out", out, config], stdout=subprocess.DEVNULL,
                                 stderr=slave, preexec_fn=default_signals)
            os.close(slave)
            seen = b""
            try:
                while b"setting up" not in seen:
                    chunk = os.read(master, 4096)  # ends (EIO) only if the process does
                    self.assertTrue(chunk, "no progress line during set-up")
                    seen += chunk
                p.send_signal(signal.SIGINT)
                p.wait(timeout=60)
                while True:
                    try:
                        chunk = os.read(master, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    seen += chunk
            finally:
                os.close(master)
                if p.poll() is None:
                    p.kill()
                    p.wait()
            self.assertEqual(p.returncode, -signal.SIGINT, seen)
            self.assertIn(b"interrupted by SIGINT during set-up", seen)
            self.assertFalse(os.path.exists(out), "an output directory was made")


class InterruptedReplay(unittest.TestCase):
    def interrupt(self, sig):
        with open(CAPTURE, "rb") as f:
            blob = f.read()
        header, records = blob[:24], blob[24:]
        with tempfile.TemporaryDirectory() as tmp:
            fifo, csv = os.path.join(tmp, "capture"), os.path.join(tmp, "timeline.csv")
            os.mkfifo(fifo)
            p = subprocess.Popen([RDMASIM, "replay", "--timeline", csv, fifo],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 preexec_fn=default_signals)
            done = threading.Event()

            def feed():
                # the header and every record, then the pipe stays open:
                # the capture has not ended when the signal comes
                with open(fifo, "wb") as w:
                    w.write(header + records)
                    w.flush()
                    done.wait(60)

            writer = threading.Thread(target=feed)
            writer.start()
            try:
                self.assertTrue(wait_for(lambda: os.path.exists(csv + ".tmp")))
                time.sleep(0.3)
                p.send_signal(sig)
                p.wait(timeout=60)
            finally:
                done.set()
                writer.join()
                if p.poll() is None:
                    p.kill()
                    p.wait()
            self.assertEqual(p.returncode, -sig)
            self.assertEqual(files_under(tmp), ["capture"])

    def test_sigint(self):
        self.interrupt(signal.SIGINT)

    def test_sigterm(self):
        self.interrupt(signal.SIGTERM)


if __name__ == "__main__":
    main(default_limit=60)
