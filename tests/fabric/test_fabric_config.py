#!/usr/bin/python3
"""Wrong fabric settings: `rdmasim sim` rejects each file of tests/fabric/bad
before anything runs, with one line FILE:LINE:COL: message and exit status
2; --set reaches the new keys and is checked the same way; every fabric
example loads.

Each bad file starts with
    # expect: LINE | TOKEN | MESSAGE
where the column is where TOKEN first occurs on that line and MESSAGE
begins the text after the position. Numbers in messages that depend on
the links (headroom) follow the formula in sim/pfc.c:
2 x rate x delay + 3 x (MTU + 18 + 24) + 8 x 84 bytes."""
import glob
import os
import sys
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import assert_bad_files, assert_set_errors, check  # noqa: E402
from testlib import main  # noqa: E402

BAD = os.path.join(TOP, "tests", "fabric", "bad")
EXAMPLES = os.path.join(TOP, "examples")


class BadFabricFiles(unittest.TestCase):
    def test_each_bad_file_gives_one_positioned_message(self):
        assert_bad_files(self, BAD, 16)

    def test_set_reaches_the_fabric_keys(self):
        cfg = os.path.join(EXAMPLES, "fabric-incast-pfc.yaml")
        cases = [
            ("topology.switch_defaults.pfc.quanta=0",
             "--set topology.switch_defaults.pfc.quanta=0: pfc quanta: 0 is out of range (1 to 65535)"),
            ("nic.dcqcn.rai=fast", "--set nic.dcqcn.rai=fast: dcqcn rai: 'fast' is not a rate"),
            ("topology.switch_defaults.ecn.pmax=2", "--set topology.switch_defaults.ecn.pmax=2: ecn pmax:"),
            ("qos.trust=dscpp", "--set qos.trust=dscpp: qos trust: 'dscpp' is not dscp or pcp"),
        ]
        assert_set_errors(self, cfg, cases)
        p = check(cfg, "--set", "topology.switch_defaults.pfc.watchdog=1ms", "--set", "nic.dcqcn.g=1/16",
                  "--set", "monitor.sample=off", "--set", "topology.switch_defaults.alpha=2")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_every_fabric_example_loads(self):
        examples = sorted(glob.glob(os.path.join(EXAMPLES, "fabric-*.yaml")))
        self.assertGreaterEqual(len(examples), 4)
        for path in examples:
            with self.subTest(example=os.path.basename(path)):
                p = check(path)
                self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    main(default_limit=30)
