#!/usr/bin/python3
"""What `rdmasim sim --out DIR` leaves in DIR: the run owns its outputs
(rdmasim-outputs.txt lists them; a later run removes what it does not
write again and nothing else), the size of the traces is announced before
a run that would write large ones, trace_limit caps each pcap file, the
PCIe breakdown's columns are durations, and scripts/pcie_table.py reads a
run directory."""
import os
import signal
import subprocess
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import RDMASIM, output_files, run_sim, summary, table, write_config  # noqa: E402
from testlib import main, pcap_records, seconds  # noqa: E402

EXAMPLES = os.path.join(TOP, "examples")
ONE_LINK = os.path.join(EXAMPLES, "write-one-link.yaml")


class OwnedDirectory(unittest.TestCase):
    def test_a_rerun_removes_what_the_last_run_left(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(ONE_LINK, out)
            with open(os.path.join(out, "rdmasim-outputs.txt")) as f:
                listed = f.read().split()
            self.assertEqual(sorted(listed), sorted(output_files(out)))
            self.assertIn("pcap/h0-0.pcap", listed)
            # a file of the user's, and one an edited list names outside the outputs
            for name in ("notes.txt", "pcap/mine.txt"):
                with open(os.path.join(out, name), "w") as f:
                    f.write("keep\n")
            with open(os.path.join(out, "rdmasim-outputs.txt"), "a") as f:
                f.write("notes.txt\n../escape.pcap\n")
            run_sim(ONE_LINK, out, "--set", "trace=[]")
            files = output_files(out)
            self.assertNotIn("pcap/h0-0.pcap", files)
            self.assertIn("notes.txt", files)
            self.assertIn("pcap/mine.txt", files)
            with open(os.path.join(out, "rdmasim-outputs.txt")) as f:
                self.assertNotIn("pcap/h0-0.pcap", f.read().split())
            # without anything of the user's, pcap/ goes with its last pcap
            os.remove(os.path.join(out, "pcap", "mine.txt"))
            run_sim(ONE_LINK, out)
            run_sim(ONE_LINK, out, "--set", "trace=[]")
            self.assertFalse(os.path.exists(os.path.join(out, "pcap")))


    def test_nothing_is_removed_through_a_symbolic_link(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, elsewhere = os.path.join(tmp, "out"), os.path.join(tmp, "elsewhere")
            os.makedirs(out)
            os.makedirs(elsewhere)
            with open(os.path.join(elsewhere, "x.pcap"), "w") as f:
                f.write("not the run's\n")
            os.symlink(elsewhere, os.path.join(out, "pcap"))
            with open(os.path.join(out, "rdmasim-outputs.txt"), "w") as f:
                f.write("pcap/x.pcap\n")
            run_sim(ONE_LINK, out, "--set", "trace=[]")
            self.assertTrue(os.path.exists(os.path.join(elsewhere, "x.pcap")))


class TraceSize(unittest.TestCase):
    BIG = """
payload: none
topology:
  hosts: [h0, h1]
  links: [{a: h0, b: h1, rate: 400Gbps, delay: 1us}]
trace: [h0]
workload:
  messages: [{src: h0, dst: h1, op: write, size: 1GiB, repeat: 2}]
"""

    def test_large_traces_are_announced_before_the_run(self):
        """2 GiB written through one traced port of full frames: the
        warning must come before any frame is simulated, so it is read
        first and the run is then interrupted."""
        with tempfile.TemporaryDirectory() as tmp:
            cfg = write_config(tmp, self.BIG)
            p = subprocess.Popen([RDMASIM, "sim", cfg, "--out", os.path.join(tmp, "out"), "--quiet"],
                                 stderr=subprocess.PIPE, text=True)
            try:
                line = p.stderr.readline()
            finally:
                p.send_signal(signal.SIGINT)
                p.communicate(timeout=seconds(30))
            self.assertRegex(line, r"^rdmasim sim: warning: the 1 pcap file will take about 2\.0 GiB; "
                                   r"the trace_limit key caps each file")

    def test_small_traces_and_capped_ones_are_not(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = run_sim(ONE_LINK, os.path.join(tmp, "a"))
            self.assertEqual(p.stderr, "")
            cfg = write_config(tmp, self.BIG.replace("size: 1GiB, repeat: 2", "size: 64KiB")
                               .replace("payload", "trace_limit: 1MiB\npayload"))
            self.assertEqual(run_sim(cfg, os.path.join(tmp, "b")).stderr, "")

    def test_trace_limit_caps_each_file_and_says_so(self):
        """The example's 16 data frames of 4154 bytes and an ACK: 20 KiB
        holds the file header and four whole records; the rest, the ACK
        with them, is left out so that the file has no gap."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(ONE_LINK, out, "--set", "trace_limit=20KiB")
            pcap = os.path.join(out, "pcap", "h0-0.pcap")
            self.assertLessEqual(os.path.getsize(pcap), 20 * 1024)
            records = list(pcap_records(pcap))
            self.assertEqual(len(records), 4)
            notes = summary(out)["notes"]
            self.assertEqual(len(notes), 1)
            self.assertIn("1 pcap file reached trace_limit (20480 bytes) and left out the 13 frames", notes[0])


class PcieColumns(unittest.TestCase):
    def test_breakdown_columns_are_durations_and_pcie_table_reads_a_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            run_sim(os.path.join(EXAMPLES, "pcie-gpudirect.yaml"), out)
            rows = table(out, "messages.csv")
            self.assertNotIn("delivered_ps", rows[0])
            phases = ["copy", "doorbell", "wqe_fetch", "payload_read", "wire", "dma_write", "ack",
                      "completion"]
            for r in rows:
                fct = int(r["fct_ps"])
                self.assertEqual(sum(int(r[p + "_ps"]) for p in phases), fct)
                self.assertEqual(int(r["end_ps"]) - int(r["start_ps"]), fct)
                self.assertLess(0, int(r["delivery_ps"]))
            p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "scripts", "pcie_table.py"), out],
                               capture_output=True, text=True, timeout=seconds(30))
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = p.stdout.splitlines()
            self.assertTrue(lines[0].startswith("| src | dst | op | bytes | messages | fct (ns) | delivery (ns)"))
            self.assertEqual(len(lines), 2 + len({(r["src"], r["dst"], r["op"], r["bytes"]) for r in rows}))
            p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "scripts", "pcie_table.py"),
                                os.path.join(tmp, "none")], capture_output=True, text=True)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("none", p.stderr)


if __name__ == "__main__":
    main(default_limit=60)
