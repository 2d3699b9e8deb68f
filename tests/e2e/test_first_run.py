#!/usr/bin/python3
"""What ./quickstart shows after building (scripts/first_run.sh): a
simulated run with a trace, a few decoded frames, the replay of the
trace and the HTML report, each step's output where a newcomer sees it,
in well under the minute it is meant to take."""
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from testlib import RDMASIM, main, seconds  # noqa: E402


class FirstRun(unittest.TestCase):
    def test_the_chain(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "quickstart.out")
            start = time.monotonic()
            p = subprocess.run([os.path.join(TOP, "scripts", "first_run.sh"), out], capture_output=True,
                               text=True, timeout=seconds(60), env=dict(os.environ, RDMASIM=RDMASIM))
            took = time.monotonic() - start
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "")
            steps = re.findall(r"^==> (\w+):", p.stdout, re.M)
            self.assertEqual(steps, ["simulate", "decode", "replay", "report"])
            self.assertIn("16 completed, 0 failed", p.stdout)
            decoded = re.findall(r"^ +\d+ \d+\.\d{9} 10\.0\.0\.\d+ → 10\.0\.0\.17 RoCEv2 RC RDMA WRITE", p.stdout, re.M)
            self.assertEqual(len(decoded), 5)
            self.assertIn("16 conversations, 16 messages", p.stdout)
            self.assertIn(out + "/report.html\n", p.stdout)
            self.assertIn("Where to look:", p.stdout)
            for name in ("report.html", "summary.json", "messages.csv", "pcap/h16-0.pcap"):
                self.assertTrue(os.path.isfile(os.path.join(out, name)), name)
                self.assertIn(os.path.join(out, name), p.stdout)
            self.assertLess(took, seconds(30))

    def test_readme_starts_with_quickstart_and_make_check(self):
        with open(os.path.join(TOP, "README.md")) as f:
            block = f.read().split("```sh\n", 1)[1].split("```", 1)[0]
        commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
        self.assertEqual(commands[:2], ["./quickstart", "make check"])
        with open(os.path.join(TOP, "quickstart")) as f:
            quickstart = f.read()
        self.assertIn("scripts/first_run.sh", quickstart)
        self.assertIn(" chromium", quickstart)


if __name__ == "__main__":
    main(default_limit=90)
