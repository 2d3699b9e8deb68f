"""`mpirun -np N rdmasim sim`: the outputs of a run split over 2, 3 and 4
MPI ranks are byte for byte those of the sequential run, on every example
a split run takes; a cut link without delay is refused, naming it; a rank
killed during the run ends the whole run without outputs; --check prints
the partition. Skipped when rdmasim was built without MPI."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from testlib import RDMASIM, TOP, EXIT_SKIP, limit, main, seconds  # noqa: E402

MPIRUN = os.environ.get("MPIRUN", "")
# CI runs as root, and the machine has fewer cores than ranks
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               # Open MPI's own allocations outlive MPI_Finalize: the
               # sequential runs of the suite keep the leak checks
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def mpirun(n, *args, **kw):
    return subprocess.run([MPIRUN, "--oversubscribe", "-np", str(n), RDMASIM, "sim", *args],
                          capture_output=True, text=True, env=MPI_ENV,
                          timeout=seconds(kw.pop("timeout", 120)), **kw)


def sequential(*args):
    return subprocess.run([RDMASIM, "sim", *args], capture_output=True, text=True,
                          timeout=seconds(120))


def outputs(d):
    """Every file under d, by its path relative to d."""
    files = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            files[os.path.relpath(p, d)] = p
    return files


NOT_TAKEN = "a run over several MPI ranks does not take"
# the benchmark's permutation with smaller messages: the same fat-tree and
# cut links, a fraction of the events (the suite runs on two shared cores)
SHORTER = {"fat-tree-k8-permutation.yaml": ["--set", "workload.generate.size=128KiB"]}


class Identical(unittest.TestCase):
    @limit(900)
    def test_examples_at_two_three_and_four_ranks(self):
        ran = []
        for cfg in sorted(glob.glob(os.path.join(TOP, "examples", "*.yaml"))):
            name = os.path.basename(cfg)
            with tempfile.TemporaryDirectory() as tmp:
                seq = os.path.join(tmp, "seq")
                args = [cfg, "-q"] + SHORTER.get(name, [])
                r = sequential(*args, "--out", seq)
                self.assertEqual(r.returncode, 0, f"{name}: {r.stderr}")
                want = outputs(seq)
                for n in (2, 3, 4):
                    par = os.path.join(tmp, f"np{n}")
                    r = mpirun(n, *args, "--out", par)
                    if NOT_TAKEN in r.stderr:
                        # refused as a whole, once, before anything is written
                        self.assertNotEqual(r.returncode, 0)
                        self.assertEqual(r.stderr.count(NOT_TAKEN), 1, r.stderr)
                        self.assertFalse(os.path.exists(os.path.join(par, "summary.json")))
                        break
                    self.assertEqual(r.returncode, 0, f"{name} at {n} ranks: {r.stderr}")
                    got = outputs(par)
                    self.assertEqual(sorted(got), sorted(want), f"{name} at {n} ranks")
                    for rel, path in want.items():
                        with open(path, "rb") as a, open(got[rel], "rb") as b:
                            self.assertTrue(a.read() == b.read(),
                                            f"{name} at {n} ranks: {rel} differs from the sequential run's")
                    shutil.rmtree(par)
                else:
                    ran.append(name)
        # the examples a split run takes, at least: the fat-trees, leaf-spine,
        # InfiniBand, the lossy incast, and those with pcap traces
        for must in ("fat-tree-k8-permutation.yaml", "leaf-spine-websearch.yaml", "ib-fat-tree.yaml",
                     "incast-64-ib.yaml", "fabric-incast-lossy.yaml", "hadoop-fat-tree.yaml",
                     "every-operation.yaml", "ipv6.yaml", "lossy-link.yaml", "rnr.yaml",
                     "star-all-to-all.yaml", "write-one-link.yaml"):
            self.assertIn(must, ran)

    def test_wall_time_summary_says_what_each_rank_did(self):
        import json
        cfg = os.path.join(TOP, "examples", "leaf-spine-websearch.yaml")
        with tempfile.TemporaryDirectory() as tmp:
            r = mpirun(3, cfg, "-q", "--wall-time", "--out", tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(tmp, "summary.json")) as f:
                s = json.load(f)
        p = s["parallel"]
        self.assertEqual(p["ranks"], 3)
        self.assertEqual(len(p["per_rank"]), 3)
        # every frame sent to another rank arrived there; the events add up
        self.assertEqual(sum(x["frames_out"] for x in p["per_rank"]),
                         sum(x["frames_in"] for x in p["per_rank"]))
        self.assertGreater(sum(x["frames_out"] for x in p["per_rank"]), 0)
        self.assertEqual(sum(x["events"] for x in p["per_rank"]), s["totals"]["events"])
        # the leaf-spine's links all have 1 us of delay
        self.assertEqual(p["lookahead_ps"], 1000000)


ZERO_DELAY = """seed: 1
payload: none
topology:
  hosts: [h0, h1, h2, h3]
  switches: [s0, s1]
  links:
    - {a: h0, b: s0, delay: 1us}
    - {a: h1, b: s0, delay: 1us}
    - {a: h2, b: s1, delay: 1us}
    - {a: h3, b: s1, delay: 1us}
    - {a: s0, b: s1, delay: 0us}
workload:
  messages:
    - {src: h0, dst: h2, op: write, size: 64KiB}
    - {src: h3, dst: h1, op: write, size: 64KiB}
"""


class Refused(unittest.TestCase):
    def test_a_cut_link_without_delay_is_refused_naming_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = os.path.join(tmp, "zero.yaml")
            with open(cfg, "w") as f:
                f.write(ZERO_DELAY)
            out = os.path.join(tmp, "out")
            r = mpirun(2, cfg, "--out", out)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(f"{cfg}:11:8: the link s0 - s1 has no delay and joins nodes on ranks 0 and 1",
                          r.stderr)
            self.assertEqual(r.stderr.count("has no delay"), 1, r.stderr)
            self.assertFalse(os.path.exists(os.path.join(out, "summary.json")))
            # with both switches on one rank it runs, and as the sequential run does
            with open(cfg, "a") as f:
                f.write("partition:\n  - [s0, s1, h0, h1]\n  - [h2, h3]\n")
            r = mpirun(2, cfg, "-q", "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            seq = os.path.join(tmp, "seq")
            self.assertEqual(sequential(cfg, "-q", "--out", seq).returncode, 0)
            for name in ("summary.json", "messages.csv", "ports.csv"):
                with open(os.path.join(seq, name), "rb") as a, open(os.path.join(out, name), "rb") as b:
                    self.assertEqual(a.read(), b.read(), name)

    def test_partition_key_errors_name_the_node(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfg = os.path.join(tmp, "p.yaml")
            with open(cfg, "w") as f:
                f.write(ZERO_DELAY + "partition:\n  - [s0, s1, h0, h1]\n  - [h2]\n")
            r = sequential(cfg, "--check")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"{cfg}:17:6: partition: node 'h3' is in no list; list every node", r.stderr)
            with open(cfg, "w") as f:
                f.write(ZERO_DELAY + "partition:\n  - [s0, s1, h0, h1]\n  - [h2, h3, h1]\n")
            r = sequential(cfg, "--check")
            self.assertIn(f"{cfg}:18:14: partition: node 'h1' is in two lists", r.stderr)

    def test_check_prints_the_partition(self):
        cfg = os.path.join(TOP, "examples", "fat-tree-k8-permutation.yaml")
        r = sequential(cfg, "--check", "--ranks", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("partition  4 ranks", lines[1])
        self.assertIn("lookahead 1us", lines[1])
        # a k=8 fat-tree: 128 hosts and 80 switches, each pod of 16 hosts
        # whole on one rank, the 16 core switches spread evenly
        hosts = [int(l.split()[2]) for l in lines[2:6]]
        switches = [int(l.split()[4]) for l in lines[2:6]]
        self.assertEqual(hosts, [32, 32, 32, 32])
        self.assertEqual(switches, [20, 20, 20, 20])


class Failures(unittest.TestCase):
    @limit(120)
    def test_a_rank_killed_mid_run_ends_the_run_without_outputs(self):
        cfg = os.path.join(TOP, "examples", "fat-tree-k8-permutation.yaml")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = subprocess.Popen([MPIRUN, "--oversubscribe", "-np", "2", RDMASIM, "sim", cfg, "-q",
                                  "--set", "workload.generate.size=100MiB", "--out", out],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=MPI_ENV)
            ranks = []
            deadline = time.monotonic() + seconds(30)
            while len(ranks) < 2 and time.monotonic() < deadline:
                time.sleep(0.5)
                r = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True)
                ranks = [int(x) for x in r.stdout.split()]
            self.assertEqual(len(ranks), 2, "the two ranks did not start")
            time.sleep(2)  # well into the run: the set-up takes a fraction of a second
            os.kill(max(ranks), signal.SIGKILL)
            _, err = p.communicate(timeout=seconds(60))
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("signal 9", err)
            self.assertFalse(os.path.exists(os.path.join(out, "summary.json")))
            self.assertFalse(os.path.exists(os.path.join(out, "messages.csv")))


if __name__ == "__main__":
    if not MPIRUN:
        print("rdmasim is built without MPI: nothing to test")
        sys.exit(EXIT_SKIP)
    main()
