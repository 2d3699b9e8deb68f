#!/usr/bin/python3
"""CXL memory (pcie cxl, workload cxl) against its parts and the published
figures they come from:

  * a load's latency is the sum of its modelled parts: the core's miss
    path, four CXL port crossings, the link's propagation both ways, the
    request and response flits at the link's rate (CXL 3.0 specification
    4.2 and 6.2: 68-byte flits at Gen5, a 64-byte line and its header in
    two; 256-byte flits at Gen6, one), and the device's memory;
  * with the defaults a load takes 170-250 ns (Sun et al., MICRO 2023)
    and CXL adds 70-90 ns over the local part (Pond, ASPLOS 2023);
  * back-to-back loads are bounded by the response flits on the link;
  * an RDMA READ of the same 64 bytes from another server takes over ten
    times as long."""
import os
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, table, write_config  # noqa: E402
from testlib import main  # noqa: E402

PS = 10**12
PARTS = ["cpu_ps", "host_port_ps", "link_ps", "request_flits_ps", "device_port_ps", "media_ps",
         "response_flits_ps", "queue_ps"]


def config(device, accesses, messages=""):
    return f"""seed: 1
payload: none
pcie:
  cxl: [{device}]
topology:
  generate: {{kind: star, hosts: 2, link: {{rate: 200Gbps, delay: 100ns}}}}
workload:
  cxl:
{accesses}
{messages}"""


def flit_ps(nbytes, gen, width=16):
    rate = 32e9 * 128 / 130 * width if gen == 5 else 64e9 * width
    return nbytes * 8 / rate * PS


class Cxl(unittest.TestCase):
    def rows(self, text, name="cxl.csv"):
        tmp = tempfile.mkdtemp(prefix="cxl-")
        out = os.path.join(tmp, "out")
        run_sim(write_config(tmp, text), out)
        return table(out, name), out

    def test_load_is_the_sum_of_its_parts(self):
        for gen, req, resp in ((5, 68, 136), (6, 256, 256)):
            with self.subTest(gen=gen):
                rows, _ = self.rows(config(
                    f"{{name: m0, gen: {gen}, delay: 5ns, port_latency: 25ns, media_latency: 70ns, "
                    "cpu_latency: 50ns}",
                    "    - {host: h0, device: m0, op: load}\n"
                    "    - {host: h0, device: m0, op: store, start: 1us}"))
                load, store = rows
                for r in rows:
                    self.assertEqual(int(r["latency_ps"]), sum(int(r[p]) for p in PARTS))
                    self.assertEqual(int(r["queue_ps"]), 0)
                want = 50_000 + 4 * 25_000 + 2 * 5_000 + 70_000 + flit_ps(req, gen) + flit_ps(resp, gen)
                self.assertAlmostEqual(int(load["latency_ps"]), want, delta=2)
                self.assertAlmostEqual(int(load["response_flits_ps"]), flit_ps(resp, gen), delta=1)
                # a store sends the line and gets a one-flit completion back
                self.assertEqual(load["request_flits_ps"], store["response_flits_ps"])
                self.assertEqual(load["latency_ps"], store["latency_ps"])

    def test_defaults_match_published_latencies(self):
        rows, _ = self.rows(config("{name: m0}", "    - {host: h0, device: m0}"))
        r = rows[0]
        latency = int(r["latency_ps"])
        self.assertTrue(170_000 <= latency <= 250_000, latency)
        added = latency - int(r["cpu_ps"]) - int(r["media_ps"])
        self.assertTrue(70_000 <= added <= 90_000, added)

    def test_back_to_back_loads_are_flit_bound(self):
        n = 2000
        rows, _ = self.rows(config("{name: m0}", f"    - {{host: h0, device: m0, count: {n}}}"))
        ends = sorted(int(r["end_ps"]) for r in rows)
        per_load = flit_ps(136, 5)
        self.assertAlmostEqual((ends[-1] - ends[0]) / (n - 1), per_load, delta=per_load * 0.01)

    def test_rdma_read_of_the_same_line(self):
        rows, out = self.rows(config(
            "{name: m0}", "    - {host: h0, device: m0}",
            "  messages: [{src: h0, dst: h1, op: read, size: 64, start: 1us}]\n"))
        rdma = int(table(out, "messages.csv")[0]["fct_ps"])
        self.assertGreater(rdma, 10 * int(rows[0]["latency_ps"]))


if __name__ == "__main__":
    main()
