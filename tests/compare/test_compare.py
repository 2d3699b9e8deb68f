#!/usr/bin/python3
"""`rdmasim compare examples/compare-incast.yaml`: every transport runs,
and every number of the table (compare.json, compare.csv, compare.txt) is
what that transport's own summary.json and messages.csv say, computed here
again from those files; each transport's directory is what `rdmasim sim`
with the transport's keys writes; differences are taken from the first
transport; bad usage and a configuration a transport refuses end with
status 2 before any table is written."""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from testlib import RDMASIM, limit, main, seconds  # noqa: E402

CONFIG = os.path.join(TOP, "examples", "compare-incast.yaml")
TRANSPORTS = ["ib", "roce", "roce-lossy", "iwarp", "tcp"]
# what compare sets for each (its --help and docs/transports.md list them)
KEYS = {
    "ib": ["topology.fabric=infiniband", "nic.transport=roce", "infiniband.cc.enable=true"],
    "roce": ["topology.fabric=roce", "nic.transport=roce"],
    "roce-lossy": ["topology.fabric=roce", "nic.transport=roce", "nic.pfc=false",
                   "topology.switch_defaults.pfc.enable=false"],
    "iwarp": ["topology.fabric=roce", "nic.transport=iwarp", "nic.pfc=false",
              "topology.switch_defaults.pfc.enable=false"],
    "tcp": ["topology.fabric=roce", "nic.transport=tcp", "nic.pfc=false",
            "topology.switch_defaults.pfc.enable=false"],
}
SIZE_CLASSES = [("le_4KiB", 0, 4096), ("le_64KiB", 4096, 65536), ("le_1MiB", 65536, 1 << 20),
                ("gt_1MiB", 1 << 20, math.inf)]


def rank(values, q):
    """Nearest rank: the ceil(q n / 100)-th smallest."""
    v = sorted(values)
    return v[(len(v) * q + 99) // 100 - 1]


def expected(run_dir):
    """Every metric of the table, from the run's own files."""
    with open(os.path.join(run_dir, "summary.json")) as f:
        s = json.load(f)
    with open(os.path.join(run_dir, "messages.csv")) as f:
        msgs = [r for r in csv.DictReader(f) if r["status"] == "ok"]
    out = {"messages_ok": float(len(msgs))}
    fct = [int(m["fct_ps"]) / 1e6 for m in msgs]
    small = [int(m["fct_ps"]) / 1e6 for m in msgs if int(m["bytes"]) <= 4096]
    for name, vals in (("small", small), ("fct", fct)):
        out[f"{name}_p50_us"] = rank(vals, 50) if vals else None
        out[f"{name}_p99_us"] = rank(vals, 99) if vals else None
    first = min(int(m["start_ps"]) for m in msgs)
    last = max(int(m["end_ps"]) for m in msgs)
    out["goodput_gbps"] = sum(int(m["bytes"]) for m in msgs) * 8 * 1000 / (last - first)
    for name, lo, hi in SIZE_CLASSES:
        vals = [float(m["slowdown"]) for m in msgs if lo < int(m["bytes"]) <= hi or
                (lo == 0 and int(m["bytes"]) == 0)]
        out[f"slowdown_{name}_p50"] = rank(vals, 50) if vals else None
        out[f"slowdown_{name}_p99"] = rank(vals, 99) if vals else None
    t, fab = s["totals"], s["fabric"]
    out["tail_drops"] = t["tail_drops"]
    out["link_losses"] = t["link_losses"]
    out["pfc_pauses"] = fab["pauses_sent"]
    out["paused_us"] = fab["paused_ps"] / 1e6
    out["credit_blocked_us"] = fab["credit_blocked_ps"] / 1e6 if "credit_blocked_ps" in fab else None
    out["retransmitted"] = t["retransmitted"]
    out["timeouts"] = t["timeouts"]
    cpu = s["host_cpu"]
    out["cpu_us_per_GB"] = cpu["cpu_ps"] / 1e6 / (cpu["bytes"] / 1e9)
    out["copies_per_byte"] = cpu["copied_bytes"] / cpu["bytes"]
    return s, out


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def compare(*args, timeout=60):
    return subprocess.run([RDMASIM, "compare", *args], capture_output=True, text=True,
                          timeout=seconds(timeout))


class Incast(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="rdmasim-compare-")
        cls.out = os.path.join(cls.tmp, "out")
        cls.p = compare(CONFIG, "--out", cls.out)
        with open(os.path.join(cls.out, "compare.json")) as f:
            cls.json = json.load(f)
        cls.expect = {t: expected(os.path.join(cls.out, t)) for t in TRANSPORTS}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_every_transport_runs(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        self.assertEqual([t["name"] for t in self.json["transports"]], TRANSPORTS)
        self.assertEqual(self.json["reference"], "ib")
        for t in self.json["transports"]:
            self.assertEqual(t["status"], 0)
            self.assertEqual(t["dir"], os.path.join(self.out, t["name"]))
            summary, _ = self.expect[t["name"]]
            self.assertEqual(summary["totals"]["completed"], summary["totals"]["messages"])
            # the trace the example asks for, there to replay
            self.assertTrue(os.path.isfile(os.path.join(t["dir"], "pcap", "h32-0.pcap")), t["name"])

    def test_each_run_is_the_transport(self):
        fabric = {t: self.expect[t][0]["config"]["fabric"] for t in TRANSPORTS}
        self.assertEqual(fabric, {"ib": "infiniband", "roce": "roce", "roce-lossy": "roce",
                                  "iwarp": "roce", "tcp": "roce"})
        self.assertEqual(self.expect["iwarp"][0]["config"]["nic"]["transport"], "iwarp")
        self.assertEqual(self.expect["tcp"][0]["config"]["nic"]["transport"], "tcp")
        self.assertGreater(self.expect["roce"][0]["fabric"]["pauses_sent"], 0)
        self.assertEqual(self.expect["roce-lossy"][0]["fabric"]["pauses_sent"], 0)
        self.assertGreater(self.expect["roce-lossy"][0]["totals"]["tail_drops"], 0)

    @limit(30)
    def test_a_transports_directory_is_what_rdmasim_sim_writes(self):
        """roce-lossy run by hand with its keys: the same messages.csv and
        summary.json, byte for byte."""
        own = os.path.join(self.tmp, "by-hand")
        args = [RDMASIM, "sim", CONFIG, "--out", own, "--quiet"]
        for k in KEYS["roce-lossy"]:
            args += ["--set", k]
        p = subprocess.run(args, capture_output=True, text=True, timeout=seconds(30))
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("messages.csv", "summary.json", "ports.csv"):
            with open(os.path.join(own, name), "rb") as a, \
                    open(os.path.join(self.out, "roce-lossy", name), "rb") as b:
                got, want = a.read(), b.read()
            if name == "summary.json":  # the configuration's path is the same; nothing else differs
                got, want = json.loads(got), json.loads(want)
            self.assertEqual(got, want, name)

    def test_json_values_are_the_runs_own(self):
        names = [m["name"] for m in self.json["metrics"]]
        for t in self.json["transports"]:
            _, want = self.expect[t["name"]]
            self.assertEqual(sorted(t["values"]), sorted(want))
            self.assertEqual(sorted(names), sorted(want))
            for m in names:
                self.assertTrue(close(t["values"][m], want[m]), f"{t['name']} {m}: {t['values'][m]} != {want[m]}")

    def test_differences_are_from_the_first_transport(self):
        ref = self.expect["ib"][1]
        for t in self.json["transports"]:
            _, v = self.expect[t["name"]]
            for m, x in v.items():
                d = None if x is None or ref[m] is None else x - ref[m]
                r = None if d is None or ref[m] == 0 else x / ref[m]
                self.assertTrue(close(t["diff"][m], d), f"{t['name']} {m} diff")
                self.assertTrue(close(t["ratio"][m], r), f"{t['name']} {m} ratio")

    def test_csv_holds_the_same_numbers(self):
        with open(os.path.join(self.out, "compare.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), len(TRANSPORTS) * len(self.json["metrics"]))
        for r in rows:
            want = self.expect[r["transport"]][1][r["metric"]]
            got = float(r["value"]) if r["value"] else None
            self.assertTrue(close(got, want), f"{r['transport']} {r['metric']}")
            if r["transport"] == "ib":
                self.assertIn(r["diff"], ("0", ""))

    def test_text_table_shows_each_number_rounded(self):
        with open(os.path.join(self.out, "compare.txt")) as f:
            text = f.read()
        self.assertEqual(text, self.p.stdout)
        lines = {ln.split()[0]: ln for ln in text.splitlines() if ln and ln.split()[0] in self.expect["ib"][1]}
        self.assertEqual(len(lines), len(self.json["metrics"]))
        cells_at = [text.splitlines()[3].index(t) for t in TRANSPORTS]
        for m, line in lines.items():
            for t, at in zip(TRANSPORTS, cells_at):
                cell = line[at:].split()[0]
                want = self.expect[t][1][m]
                if want is None:
                    self.assertEqual(cell, "-", f"{t} {m}")
                    continue
                got = float(cell)
                # whole numbers exactly, others to 3 significant digits or 0.1
                tol = 0 if want == int(want) else max(0.05, abs(want) * 5e-3)
                self.assertLessEqual(abs(got - want), tol + 1e-9, f"{t} {m}: {cell} for {want}")

    def test_figure_is_svg_with_a_bar_per_number(self):
        root = ET.parse(os.path.join(self.out, "compare.svg")).getroot()
        self.assertTrue(root.tag.endswith("svg"))
        texts = [e.text for e in root.iter() if e.tag.endswith("text")]
        for t in TRANSPORTS:
            self.assertIn(t, texts)
        self.assertIn("Host CPU (us per GB, log scale)", texts)

    def test_jq_reads_the_table(self):
        if not shutil.which("jq"):
            self.skipTest("jq is not installed")
        p = subprocess.run(["jq", "-r", '.transports[] | "\\(.name) \\(.values.tail_drops)"',
                            os.path.join(self.out, "compare.json")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = dict(line.split() for line in p.stdout.splitlines())
        self.assertEqual({t: int(v) for t, v in got.items()},
                         {t: self.expect[t][0]["totals"]["tail_drops"] for t in TRANSPORTS})


class Usage(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="rdmasim-compare-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_order_and_reference_follow_the_list(self):
        out = os.path.join(self.tmp, "o")
        p = compare(CONFIG, "--transports", "tcp,roce", "--out", out, "--seed", "7")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "compare.json")) as f:
            j = json.load(f)
        self.assertEqual([t["name"] for t in j["transports"]], ["tcp", "roce"])
        self.assertEqual(j["reference"], "tcp")
        self.assertEqual(sorted(os.listdir(out)),
                         ["compare.csv", "compare.json", "compare.svg", "compare.txt", "roce", "tcp"])
        with open(os.path.join(out, "tcp", "summary.json")) as f:
            self.assertEqual(json.load(f)["config"]["seed"], "0x0000000000000007")

    def test_bad_usage(self):
        for args, message in [
            (["--transports", "ib,fddi"], "unknown transport 'fddi'"),
            (["--transports", "ib,ib"], "transport 'ib' given twice"),
            (["--bogus"], "unknown option '--bogus'"),
        ]:
            p = compare(CONFIG, "--out", os.path.join(self.tmp, "x"), *args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(message, p.stderr)
        p = compare()
        self.assertEqual(p.returncode, 2)
        self.assertIn("no CONFIG given", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x", "compare.json")))

    def test_a_refused_configuration_stops_the_comparison(self):
        """A read over plain sockets is refused: the tcp run ends with status
        2, with the loader's FILE:LINE:COL message, and no table is written."""
        cfg = os.path.join(self.tmp, "read.yaml")
        with open(cfg, "w") as f:
            f.write("topology:\n  hosts: [h0, h1]\n  links: [{a: h0, b: h1}]\n"
                    "workload:\n  messages:\n    - {src: h0, dst: h1, op: read, size: 64}\n")
        out = os.path.join(self.tmp, "o")
        p = compare(cfg, "--out", out, "--transports", "roce,tcp,ib")
        self.assertEqual(p.returncode, 2)
        self.assertIn(f"{cfg}:6:", p.stderr)
        self.assertIn("op read is not offered over tcp", p.stderr)
        self.assertIn("the tcp run", p.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["roce"])


if __name__ == "__main__":
    main()
