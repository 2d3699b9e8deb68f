#!/usr/bin/python3
"""The rail-optimised topology generator (`generate: {kind: rail}`): the
nodes and links it makes, traffic within a rail never reaching a spine
while traffic across rails does, a ring all-reduce on every rail at once
each at its link's goodput (the rails do not share a link), and the PCIe
tree `server: gpu8` gives each NIC."""
import os
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, table, write_config  # noqa: E402
from testlib import main  # noqa: E402

SERVERS, RAILS, SPINES = 3, 4, 2
# a RoCEv2 packet on the wire beyond its payload (test_collectives.py)
PER_PACKET = 24 + 14 + 20 + 8 + 12 + 4
MTU = 4096


def config(workload, server="plain"):
    return f"""seed: 2
payload: none
nic: {{mtu: {MTU}}}
topology:
  switch_defaults: {{shared_buffer: 8MiB, pfc: {{priorities: [3]}}}}
  generate: {{kind: rail, servers: {SERVERS}, rails: {RAILS}, spines: {SPINES}, server: {server},
             host_link: {{rate: 100Gbps}}, fabric_link: {{rate: 200Gbps}}}}
workload:
{workload}"""


class Rail(unittest.TestCase):
    def run_config(self, text):
        tmp = tempfile.mkdtemp(prefix="rail-")
        out = os.path.join(tmp, "out")
        run_sim(write_config(tmp, text), out)
        return out

    def ports(self, workload, server="plain"):
        return table(self.run_config(config(workload, server)), "ports.csv")

    def test_nodes_and_links(self):
        ports = self.ports("  messages: [{src: s0n0, dst: s1n0, size: 4KiB}]\n")
        links = {(p["node"], p["peer"].rsplit("-", 1)[0]) for p in ports}
        want = {(f"s{i}n{r}", f"rail{r}") for i in range(SERVERS) for r in range(RAILS)}
        want |= {(f"rail{r}", f"spine{j}") for r in range(RAILS) for j in range(SPINES)}
        want |= {(b, a) for a, b in want}
        self.assertEqual(links, want)
        rates = {p["node"]: int(p["rate_bps"]) for p in ports}
        self.assertEqual(rates["s2n3"], 100 * 10**9)
        self.assertEqual(rates["spine1"], 200 * 10**9)

    def test_spines_carry_only_traffic_across_rails(self):
        def spine_frames(src, dst):
            ports = self.ports(f"  messages: [{{src: {src}, dst: {dst}, size: 64KiB}}]\n")
            return sum(int(p["tx_frames"]) for p in ports if p["node"].startswith("spine"))
        self.assertEqual(spine_frames("s0n2", "s2n2"), 0)
        # 16 data packets one way and at least one ACK back, both via a spine
        self.assertGreaterEqual(spine_frames("s0n1", "s2n2"), 17)

    def test_every_rail_at_its_links_goodput(self):
        """One 4 MiB ring all-reduce per rail, all at once: each is bounded
        by its own 100 Gb/s host links (2 MiB chunks ... one rail's traffic
        never meets another's) and comes within 10% of that bound."""
        gens = "".join(
            f"    - {{kind: all-reduce, hosts: [{', '.join(f's{i}n{r}' for i in range(SERVERS))}], "
            f"size: 12MiB}}\n" for r in range(RAILS))
        out = self.run_config(config("  generate:\n" + gens))
        rows = table(out, "collectives.csv")
        self.assertEqual(len(rows), RAILS)
        bound = 100e9 / 8 * MTU / (MTU + PER_PACKET) / 1e9
        busbw = [float(r["busbw_GBps"]) for r in rows]
        for b in busbw:
            self.assertLessEqual(b, bound * 1.001)
            self.assertGreaterEqual(b, 0.9 * bound)
        self.assertAlmostEqual(min(busbw), max(busbw), delta=0.01 * bound)

    def test_gpu_server_pcie_trees(self):
        out = self.run_config(config(
            "  generate: {kind: all-reduce, hosts: [s0n3, s1n3], size: 1MiB, mem: gpu0}\n", "gpu8"))
        rows = table(out, "pcie.csv")
        for r in range(RAILS):
            host = f"s0n{r}"
            up = {(row["link"], row["to"]) for row in rows if row["host"] == host and row["from"] == row["link"]}
            socket = "socket0" if 2 * r < RAILS else "socket1"
            self.assertEqual(up, {("plx", socket), ("nic", "plx"), ("gpu0", "plx")}, host)
            gens = {row["generation"] for row in rows if row["host"] == host and row["generation"]}
            self.assertEqual(gens, {"5"})
        # GPUDirect below the switch: the GPU's link carries the data, the
        # switch's uplink to the socket only the doorbells, WQEs and completions
        gpu = [row for row in rows if row["host"] == "s0n3" and row["link"] == "gpu0"]
        plx = [row for row in rows if row["host"] == "s0n3" and row["link"] == "plx"]
        self.assertGreaterEqual(sum(int(row["payload_bytes"]) for row in gpu), 2 * 2**20 // 2)
        self.assertLess(sum(int(row["payload_bytes"]) for row in plx), 64 * 1024)


if __name__ == "__main__":
    main()
