#!/usr/bin/python3
"""Wrong configuration files: `rdmasim sim` rejects each before anything runs,
with exactly one line FILE:LINE:COL: message and exit status 2, and no input
makes it crash. Each file in tests/sim/bad/ states what it expects in its
first line (the format is in tests/sim_checks.py)."""
import csv
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
from sim_checks import EXIT_USAGE, RDMASIM, assert_bad_files, assert_set_errors, check, load_many  # noqa: E402
from testlib import main  # noqa: E402

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
            ("topology.links.0.rate=0Gbps",
             "--set topology.links.0.rate=0Gbps: link rate: '0Gbps' is zero; a rate must be above zero"),
            ("topology.links.0.loss=50",
             "--set topology.links.0.loss=50: link loss: '50' is outside 0 to 1; a probability is a number "
             "from 0 to 1 or a percentage (5%)"),
            ("seed", "--set seed: expected KEY=VALUE"),
            ("seed=[1", "--set seed=[1: the value is not valid YAML"),
        ]
        assert_set_errors(self, cfg, cases)

    def test_set_changes_the_run(self):
        """The example's one 64 KiB WRITE at 100 Gb/s, MTU 4096, is 16
        frames; with the overrides it is 64 frames of 1024 at 25 Gb/s, and
        takes at least four times as long (the 64 KiB alone take 4x)."""
        cfg = os.path.join(EXAMPLES, "write-one-link.yaml")
        p = check(cfg, "--set", "nic.mtu=1024", "--set", "topology.links.0.rate=25Gbps")
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = {}
        with tempfile.TemporaryDirectory() as tmp:
            for name, sets in (("plain", []), ("set", ["--set", "nic.mtu=1024",
                                                        "--set", "topology.links.0.rate=25Gbps"])):
                out = os.path.join(tmp, name)
                p = subprocess.run([RDMASIM, "sim", cfg, "--quiet", "--out", out, *sets],
                                   capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(os.path.join(out, "ports.csv")) as f:
                    ports = {r["port"]: r for r in csv.DictReader(f)}
                with open(os.path.join(out, "messages.csv")) as f:
                    (msg,) = list(csv.DictReader(f))
                runs[name] = (int(ports["h0-0"]["rate_bps"]), int(ports["h0-0"]["tx_frames"]), int(msg["fct_ps"]))
        self.assertEqual(runs["plain"][:2], (100 * 10**9, 16))
        self.assertEqual(runs["set"][:2], (25 * 10**9, 64))
        self.assertGreater(runs["set"][2], 4 * (runs["plain"][2] - 2 * 10**6))

    def test_bad_options(self):
        cfg = os.path.join(EXAMPLES, "write-one-link.yaml")
        for args in (["--no-such-option", cfg], [], [cfg, cfg]):
            p = subprocess.run([RDMASIM, "sim", *args], capture_output=True, text=True)
            self.assertEqual(p.returncode, EXIT_USAGE)
            self.assertIn("usage:", p.stderr)


class NothingCrashes(unittest.TestCase):
    """Damaged copies of every example: truncated, lines dropped, bytes
    changed. Each must load or be refused with one message; none may crash.
    They are loaded in one process (sim_checks.load_many): a crash or hang
    names the case; a few go through `rdmasim sim --check` as well."""

    def test_damaged_examples(self):
        rng = random.Random(5)
        junk = [b"", b":", b"- ", b"{", b"]", b"&a", b"*a", b"\x00", b"\xff", b"'", b"1e999",
                b"-1", b"0x", b"99999999999999999999999", b"!!binary", b"\t", b"? ", b"<<: "]
        with tempfile.TemporaryDirectory() as tmp:
            for cdf in glob.glob(os.path.join(EXAMPLES, "*.cdf")):
                shutil.copy(cdf, tmp)
            texts = []
            for name in sorted(glob.glob(os.path.join(EXAMPLES, "*.yaml"))):
                with open(name, "rb") as f:
                    text = f.read()
                lines = text.split(b"\n")
                for cut in range(0, len(text), max(1, len(text) // 25)):
                    texts.append(text[:cut])
                for i in range(len(lines)):
                    texts.append(b"\n".join(lines[:i] + lines[i + 1:]))
                for _ in range(40):
                    b = bytearray(text)
                    at = rng.randrange(len(b))
                    b[at:at + rng.randrange(4)] = rng.choice(junk)
                    texts.append(bytes(b))
            paths = []
            for i, text in enumerate(texts):
                # the name of a file the examples include stays free
                paths.append(os.path.join(tmp, f"damaged-{i:05}.yaml"))
                with open(paths[-1], "wb") as f:
                    f.write(text)
            self.assertGreater(len(paths), 1400)
            results = load_many([(path, []) for path in paths])
            refused = 0
            for path, text, err in zip(paths, texts, results):
                if err is not None:
                    refused += 1
                    self.assertNotIn("\n", err, text)
                    self.assertTrue(err.startswith(path + ":"), (text, err))
            self.assertGreater(refused, len(paths) // 4)
            # the command agrees on a sample: same message, exit 2, or exit 0
            for i in range(0, len(paths), len(paths) // 8):
                p = subprocess.run([RDMASIM, "sim", "--check", "--quiet", paths[i]], capture_output=True,
                                   text=True, errors="replace", timeout=30)
                if results[i] is None:
                    self.assertEqual((p.returncode, p.stderr), (0, ""))
                else:
                    self.assertEqual((p.returncode, p.stderr.splitlines()), (EXIT_USAGE, [results[i]]))


if __name__ == "__main__":
    main(default_limit=60)
