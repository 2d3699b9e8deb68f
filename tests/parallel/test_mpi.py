"""`mpirun -np N rdmasim sim`: the outputs of a run split over 2, 3 and 4
MPI ranks are byte for byte those of the sequential run, on every example
(PFC and its deadlock search, the PCIe model, NVLink copies and collectives
over NVSwitches, iWARP and TCP hosts
included) and on link faults, of cut links and others; a cut link without
delay is refused, naming it; a rank killed during the run ends the whole
run without outputs and leaves nothing in TMPDIR; --check prints the
partition. Skipped when rdmasim was built without MPI."""
import csv
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


# The longest examples, shortened: the same networks and cut links, a
# fraction of the events (the suite runs on two shared cores). The
# permutation with smaller messages; the websearch load for 200 us instead
# of 1 ms; the all-reduces stopped early, with messages still pending, which
# every output then lists as the sequential run does (the hierarchical ones
# after the four over NVLink and the rails and the first ring are done).
SHORTER = {
    "fat-tree-k8-permutation.yaml": ["--set", "workload.generate.size=128KiB"],
    "compare-websearch-30.yaml": ["--set", "workload.generate.duration=200us"],
    "compare-websearch-70.yaml": ["--set", "workload.generate.duration=200us"],
    "gpu-rail-allreduce.yaml": ["--set", "stop=400us"],
    "gpu-rail-hierarchical.yaml": ["--set", "stop=5300us"],
    "gpu-tree-allreduce.yaml": ["--set", "stop=800us"],
}


# Two servers of two GPUs on two rails, an all-reduce over their NVSwitches.
RAIL_NVLINK = """seed: 4
payload: none
topology:
  generate: {kind: rail, servers: 2, rails: 2, nvlink: 4,
             host_link: {rate: 100Gbps, delay: 1us}, fabric_link: {rate: 100Gbps, delay: 1us}}
workload:
  generate:
    - {kind: all-reduce, algorithm: hierarchical, sizes: [64KiB]}
"""


# Under the sanitizers the suite looks for memory errors, which every rank
# count exercises alike, and runs three to four times slower: two and four
# ranks there (an even and an uneven split of most examples), all three in
# the normal build.
RANK_COUNTS = (2, 4) if os.environ.get("SANITIZER_FLAGS") else (2, 3, 4)


def write_config(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


class Identical(unittest.TestCase):
    def same_at_two_three_and_four_ranks(self, tmp, cfg, *extra):
        """The sequential run's outputs; every rank count's, compared."""
        name = os.path.basename(cfg)
        seq = os.path.join(tmp, "seq")
        args = [cfg, "-q", *extra]
        r = sequential(*args, "--out", seq)
        self.assertEqual(r.returncode, 0, f"{name}: {r.stderr}")
        want = outputs(seq)
        for n in RANK_COUNTS:
            par = os.path.join(tmp, f"np{n}")
            r = mpirun(n, *args, "--out", par)
            self.assertEqual(r.returncode, 0, f"{name} at {n} ranks: {r.stderr}")
            got = outputs(par)
            self.assertEqual(sorted(got), sorted(want), f"{name} at {n} ranks")
            for rel, path in want.items():
                with open(path, "rb") as a, open(got[rel], "rb") as b:
                    self.assertTrue(a.read() == b.read(),
                                    f"{name} at {n} ranks: {rel} differs from the sequential run's")
            shutil.rmtree(par)
        return seq

    @limit(1200)
    def test_every_example_at_two_three_and_four_ranks(self):
        import json
        for cfg in sorted(glob.glob(os.path.join(TOP, "examples", "*.yaml"))):
            name = os.path.basename(cfg)
            with tempfile.TemporaryDirectory() as tmp:
                seq = self.same_at_two_three_and_four_ranks(tmp, cfg, *SHORTER.get(name, []))
                with open(os.path.join(seq, "summary.json")) as f:
                    s = json.load(f)
                if name == "fabric-deadlock.yaml":
                    # the comparison covers a deadlock found: its cycle
                    # crosses ranks (five switches in a ring)
                    self.assertEqual(len(s["fabric"]["deadlocks"]), 1)
                    self.assertEqual(len(s["fabric"]["deadlocks"][0]["cycle"]), 5)
                if name == "fabric-incast-pfc.yaml":
                    with open(os.path.join(seq, "pfc.csv")) as f:
                        self.assertGreater(len(f.readlines()), 100)
                if name == "pcie-host-pair.yaml":
                    self.assertTrue(os.path.exists(os.path.join(seq, "pcie.csv")))
                if name == "gpu-server.yaml":
                    # the NVLink copies, run as events on the host's rank
                    with open(os.path.join(seq, "copies.csv")) as f:
                        rows = list(csv.DictReader(f))
                    nvlink = [r for r in rows if r["via"] == "nvlink"]
                    self.assertEqual(len(nvlink), 2)
                    self.assertTrue(all(int(r["end_ps"]) > int(r["start_ps"]) for r in nvlink))
                if name == "gpu-rail-hierarchical.yaml":
                    # collectives that end over the NVSwitch and across ranks
                    with open(os.path.join(seq, "collectives.csv")) as f:
                        done = [r["algorithm"] for r in csv.DictReader(f) if r["status"] == "ok"]
                    self.assertEqual(done, ["hierarchical"] * 4 + ["ring"])

    @limit(300)
    def test_link_faults_at_two_three_and_four_ranks(self):
        """Faults of links cut at some rank counts and not at others, one
        that stays down, on a lossless fabric with traces on three ranks;
        and over InfiniBand, whose subnet manager sweeps again."""
        import json
        with tempfile.TemporaryDirectory() as tmp:
            seq = self.same_at_two_three_and_four_ranks(tmp, write_config(tmp, "faults.yaml", FAULTS))
            with open(os.path.join(seq, "summary.json")) as f:
                s = json.load(f)
            self.assertEqual(s["fabric"]["link_faults"], 3)
            self.assertGreater(s["totals"]["link_losses"], 0)
        with tempfile.TemporaryDirectory() as tmp:
            seq = self.same_at_two_three_and_four_ranks(tmp, write_config(tmp, "ib.yaml", FAULTS_IB))
            with open(os.path.join(seq, "summary.json")) as f:
                self.assertGreater(json.load(f)["totals"]["link_losses"], 0)

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


LEAF_SPINE = """  hosts: [{name: h0, trace: true}, h1, h2, h3, {name: h4, trace: true}, h5, h6, h7]
  switches: [{name: l0, trace: true}, l1, l2, l3, {name: s0, trace: true}, s1]
  links:
    - {a: h0, b: l0}
    - {a: h1, b: l0}
    - {a: h2, b: l1}
    - {a: h3, b: l1}
    - {a: h4, b: l2}
    - {a: h5, b: l2}
    - {a: h6, b: l3}
    - {a: h7, b: l3}
    - {a: l0, b: s0}
    - {a: l0, b: s1}
    - {a: l1, b: s0}
    - {a: l1, b: s1}
    - {a: l2, b: s0}
    - {a: l2, b: s1}
    - {a: l3, b: s0}
    - {a: l3, b: s1}
"""


def messages(size):
    return f"""workload:
  messages:
    - {{src: h0, dst: h4, op: write, size: {size}}}
    - {{src: h1, dst: h6, op: write, size: {size}}}
    - {{src: h2, dst: h5, op: write, size: {size}}}
    - {{src: h3, dst: h7, op: read, size: {size}}}
    - {{src: h4, dst: h0, op: send, size: {size}}}
    - {{src: h5, dst: h1, op: write, size: {size}}}
    - {{src: h6, dst: h2, op: write, size: {size}}}
    - {{src: h7, dst: h3, op: write, size: {size}}}
"""


# at 4 ranks l0 and s0 share rank 0, l2 and s1 do not; h6 - l3 is a host link
FAULTS = """seed: 3
payload: none
topology:
  switch_defaults: {shared_buffer: 1MiB, alpha: 1, pfc: {priorities: [3]}}
  link_defaults: {rate: 100Gbps, delay: 1us}
""" + LEAF_SPINE + """faults:
  - {a: l0, b: s0, down: 20us, up: 60us}
  - {a: l2, b: s1, down: 30us}
  - {a: h6, b: l3, down: 25us, up: 26us}
""" + messages("1MiB")

# InfiniBand's queue pairs take long to recover from these losses: the
# first millisecond
FAULTS_IB = """seed: 3
stop: 1ms
payload: none
topology:
  fabric: infiniband
  link_defaults: {rate: 4xEDR, delay: 1us}
""" + LEAF_SPINE + """faults:
  - {a: l0, b: s0, down: 20us, up: 60us}
  - {a: l2, b: s1, down: 30us, up: 40us}
  - {a: h6, b: l3, down: 25us, up: 26us}
""" + messages("1MiB")

# traces on every rank of four, and messages that take seconds to run
LONG_TRACED = """seed: 3
payload: none
trace_limit: 64KiB
topology:
  link_defaults: {rate: 100Gbps, delay: 1us}
""" + LEAF_SPINE.replace("h6, h7]", "{name: h6, trace: true}, {name: h7, trace: true}]").replace(
    "l1, l2", "{name: l1, trace: true}, l2") + messages("1GiB")


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

    def test_partition_key_keeps_a_server_whole(self):
        """The NIC hosts of a server meet in its NVSwitch, not over a link:
        a partition that splits them is refused, naming two of them."""
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, "rail.yaml", RAIL_NVLINK + "partition:\n  - [rail0, spine0, s0n0, s1n0]\n"
                                                  "  - [rail1, s0n1, s1n1]\n")
            r = mpirun(2, cfg, "-q", "--out", os.path.join(tmp, "out"))
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(f"{cfg}:4:14: partition: hosts s0n0 and s0n1 share an NVSwitch that carries "
                          "collective steps, but are on ranks 0 and 1", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "out")))

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
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, "long.yaml", LONG_TRACED)
            out = os.path.join(tmp, "out")
            # the ranks' TMPDIR, where ranks other than 0 keep their captures
            own_tmp = os.path.join(tmp, "tmp")
            os.mkdir(own_tmp)
            p = subprocess.Popen([MPIRUN, "--oversubscribe", "-np", "4", RDMASIM, "sim", cfg, "-q",
                                  "--out", out],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=dict(MPI_ENV, TMPDIR=own_tmp))
            ranks = []
            deadline = time.monotonic() + seconds(30)
            while len(ranks) < 4 and time.monotonic() < deadline:
                time.sleep(0.5)
                r = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True)
                ranks = [int(x) for x in r.stdout.split()]
            self.assertEqual(len(ranks), 4, "the four ranks did not start")
            time.sleep(2)  # well into the run: the set-up takes a fraction of a second
            os.kill(max(ranks), signal.SIGKILL)
            _, err = p.communicate(timeout=seconds(60))
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("signal 9", err)
            self.assertFalse(os.path.exists(os.path.join(out, "summary.json")))
            self.assertFalse(os.path.exists(os.path.join(out, "messages.csv")))
            left = [n for n in os.listdir(own_tmp) if n.startswith("rdmasim-rank-")]
            self.assertEqual(left, [], "a rank's captures were left in TMPDIR")


if __name__ == "__main__":
    if not MPIRUN:
        print("rdmasim is built without MPI: nothing to test")
        sys.exit(EXIT_SKIP)
    main()
