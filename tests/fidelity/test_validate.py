#!/usr/bin/python3
"""The analytic checks of `make validate` (scripts/validate.py): each
scenario's simulated value within its tolerance of a reference that does
not come from the simulator (line-rate arithmetic, destination-mod-k on a
fat-tree, pcie-bench's TLP model, the PFC headroom derivation, the
InfiniBand wire arithmetic)."""
import os
import subprocess
import sys
import tempfile
import unittest

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from testlib import main, seconds  # noqa: E402


class Validate(unittest.TestCase):
    def test_analytic_checks_pass(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "validation.md")
            p = subprocess.run([sys.executable, os.path.join(TOP, "scripts", "validate.py"),
                                "--rdmasim", RDMASIM, "--out", out, "--analytic-only"],
                               capture_output=True, text=True, timeout=seconds(1800))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(out) as f:
                report = f.read()
        lines = [line for line in p.stdout.splitlines() if line.startswith(("ok", "FAIL"))]
        # 12 single-flow rows, 2 fat-trees, 3 PCIe sizes, 4 PFC rows, 4 InfiniBand rows
        self.assertEqual(len(lines), 25, p.stdout)
        self.assertFalse([line for line in lines if line.startswith("FAIL")])
        self.assertIn("| single-flow completion time | 1 MiB WRITE, MTU 1024, 3 switches", report)
        self.assertIn("| InfiniBand fat-tree permutation, ftree |", report)
        self.assertNotIn("FAIL", report)


if __name__ == "__main__":
    main(default_limit=1800)
