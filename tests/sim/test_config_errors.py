#!/usr/bin/python3
"""Wrong configuration files: `rdmasim sim` rejects each before anything runs,
with exactly one line FILE:LINE:COL: message and exit status 2, and no input
makes it crash. Each file in tests/sim/bad/ states what it expects in its
first line (the format is in tests/sim_checks.py)."""
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import EXIT_USAGE, RDMASIM, assert_bad_files, assert_set_errors, check  # noqa: E402

BAD = os.path.join(TOP, "tests", "sim", "bad")
EXAMPLES = os.path.join(TOP, "examples")


class BadFiles(unittest.TestCase):
    def test_each_bad_file_gives_one_positioned_message(self):
        assert_bad_files(self, BAD, 26)

    def test_missing_file(self):
        p = check(os.path.join(BAD, "no-such-config.yaml"))
        self.assertEqual(p.returncode, EXIT_USAGE)
        self.assertEqual(len(p.stderr.splitlines()), 1)
        self.assertIn("no-such-config.yaml: cannot read", p.stderr)

    def test_set_errors_name_the_override(self):
        cfg = os.path.join(EXAMPLES, "write-one-link.yaml")
        cases = [
            ("nic.mtu=1000", "--set nic.mtu=1000: nic mtu: 1000 is not one of"),
            ("nic.mtux=1024", "--set nic.mtux=1024: nic: unknown key 'mtux' (did you mean 'mtu'?)"),
            ("topology.links.0.rate=fast", "--set topology.links.0.rate=fast: link rate: 'fast' is not a rate"),
            ("topology.links.5.rate=1Gbps", "--set topology.links.5.rate=1Gbps: '5' is not an index"),
            ("seed", "--set seed: expected KEY=VALUE"),
            ("seed=[1", "--set seed=[1: the value is not valid YAML"),
        ]
        assert_set_errors(self, cfg, cases)

    def test_set_changes_the_run(self):
        cfg = os.path.join(EXAMPLES, "write-one-link.yaml")
        p = check(cfg, "--set", "nic.mtu=1024", "--set", "topology.links.0.rate=25Gbps")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_bad_options(self):
        cfg = os.path.join(EXAMPLES, "write-one-link.yaml")
        for args in (["--no-such-option", cfg], [], [cfg, cfg]):
            p = subprocess.run([RDMASIM, "sim", *args], capture_output=True, text=True)
            self.assertEqual(p.returncode, EXIT_USAGE)
            self.assertIn("usage:", p.stderr)


class NothingCrashes(unittest.TestCase):
    """Damaged copies of every example: truncated, lines dropped, bytes
    changed. Each must load or be refused with one message; none may crash."""

    def run_one(self, text, where):
        path = os.path.join(where, "damaged.yaml")
        with open(path, "wb") as f:
            f.write(text)
        p = subprocess.run([RDMASIM, "sim", "--check", "--quiet", path], capture_output=True,
                           timeout=60)
        self.assertIn(p.returncode, (0, EXIT_USAGE), (text, p.stderr))
        if p.returncode:
            self.assertEqual(len(p.stderr.splitlines()), 1, (text, p.stderr))

    def test_damaged_examples(self):
        rng = random.Random(5)
        junk = [b"", b":", b"- ", b"{", b"]", b"&a", b"*a", b"\x00", b"\xff", b"'", b"1e999",
                b"-1", b"0x", b"99999999999999999999999", b"!!binary", b"\t", b"? ", b"<<: "]
        with tempfile.TemporaryDirectory() as tmp:
            for cdf in glob.glob(os.path.join(EXAMPLES, "*.cdf")):
                shutil.copy(cdf, tmp)
            for name in sorted(glob.glob(os.path.join(EXAMPLES, "*.yaml"))):
                with open(name, "rb") as f:
                    text = f.read()
                lines = text.split(b"\n")
                for cut in range(0, len(text), max(1, len(text) // 25)):
                    self.run_one(text[:cut], tmp)
                for i in range(len(lines)):
                    self.run_one(b"\n".join(lines[:i] + lines[i + 1:]), tmp)
                for _ in range(40):
                    b = bytearray(text)
                    at = rng.randrange(len(b))
                    b[at:at + rng.randrange(4)] = rng.choice(junk)
                    self.run_one(bytes(b), tmp)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=1).result.wasSuccessful() else 1)
