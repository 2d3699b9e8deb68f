#!/usr/bin/python3
"""Hierarchical all-reduce (algorithm: hierarchical) on the rail topology:
N servers of G GPUs, a reduce-scatter over each server's NVSwitch, one
ring all-reduce per rail between the servers, an all-gather over NVLink.

  * data: every step's destination holds the sums it should, for N = 1..4
    servers and G = 2..8 GPUs (and G = 1: the rail rings alone);
  * large sizes: each GPU sends 2(G-1)/G S over its NVLink (phases 1 and
    3, at the one-way rate of its generation: 300 GB/s for NVLink 3, 450
    for NVLink 4, nvidia.com "NVLink and NVSwitch"), and each NIC 2(N-1)/N
    S/G in its rail's ring, at the link's goodput (a 4096-byte payload in
    4096 + 82 bytes on the wire, test_collectives.py); the phases overlap
    slice by slice, so the time is at least the larger of the two and
    busbw = 2(n-1)/n S / time at most 2(n-1)/n S / max(T_nvlink, T_net).
    Both sides of that max are tested: a network-bound case (100 Gb/s
    links) and an NVLink-bound one (NVLink 3 under 400 Gb/s links); busbw
    is within 5% of the bound;
  * small sizes: one slice per part, so nothing overlaps: G - 1 NVLink
    steps, the rail ring of S/G bytes (whose own time test_collectives.py
    holds to the alpha-beta model), G - 1 NVLink steps; an NVLink step is
    the switch's latency (470 ns by default, NCCL's hwLat for an NVLink
    ring step) and its S/(G N) bytes at the NVLink rate. The time is that
    sum to within a few picoseconds of rounding."""
import os
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, table, write_config  # noqa: E402
from testlib import main  # noqa: E402

PS = 10**12
MTU = 4096
PER_PACKET = 24 + 14 + 20 + 8 + 12 + 4  # RoCEv2 with IPv4 beyond the payload, as test_collectives.py
NVLINK_ONE_WAY = {3: 300e9, 4: 450e9}   # bytes per second
NVLINK_LATENCY = 470 * 10**3            # ps


def config(servers, gpus, workload, rate="100Gbps", nvlink=4, payload="none"):
    return f"""seed: 4
payload: {payload}
nic: {{mtu: {MTU}}}
topology:
  switch_defaults: {{shared_buffer: 32MiB, pfc: {{priorities: [3]}}}}
  generate: {{kind: rail, servers: {servers}, rails: {gpus}, nvlink: {nvlink},
             host_link: {{rate: {rate}, delay: 1us}}, fabric_link: {{rate: {rate}, delay: 1us}}}}
workload:
  generate:
{workload}"""


def hier(sizes, extra=""):
    return f"    - {{kind: all-reduce, algorithm: hierarchical, sizes: [{', '.join(map(str, sizes))}]{extra}}}\n"


class Hierarchical(unittest.TestCase):
    def run_config(self, text):
        tmp = tempfile.mkdtemp(prefix="hier-")
        out = os.path.join(tmp, "out")
        run_sim(write_config(tmp, text), out, timeout=300)
        return out

    def collectives(self, *args, **kw):
        return table(self.run_config(config(*args, **kw)), "collectives.csv")

    def test_data(self):
        for servers, gpus in ((1, 2), (1, 8), (2, 1), (2, 2), (2, 5), (3, 3), (3, 8), (4, 2), (4, 8)):
            with self.subTest(servers=servers, gpus=gpus):
                out = self.run_config(config(servers, gpus, hier(["4KiB", "96KiB"], ", slice: 8KiB"),
                                             payload="data"))
                rows = table(out, "collectives.csv")
                self.assertEqual([(r["algorithm"], r["status"], r["data"], r["ranks"]) for r in rows],
                                 [("hierarchical", "ok", "ok", str(servers * gpus))] * 2)
                msgs = table(out, "messages.csv")
                self.assertEqual({m["data"] for m in msgs}, {"ok"})
                # phases 1 and 3: every GPU, G - 1 steps, N parts of ns slices
                nvlink = [m for m in msgs if m["src"].split("n")[0] == m["dst"].split("n")[0]]
                want = 0
                for size in (4 * 1024, 96 * 1024):
                    widest = -(-(-(-size // 4 // gpus)) // servers) * 4
                    want += 2 * servers * gpus * (gpus - 1) * servers * -(-widest // 8192)
                self.assertEqual(len(nvlink), want)

    def check_bound(self, servers, gpus, rate, nvlink):
        size = 256 * 2**20
        (row,) = self.collectives(servers, gpus, hier([size]), rate=rate, nvlink=nvlink)
        n = servers * gpus
        goodput = float(rate[:-4]) * 1e9 / 8 * MTU / (MTU + PER_PACKET)
        t_nvlink = 2 * (gpus - 1) / gpus * size / NVLINK_ONE_WAY[nvlink]
        t_net = 2 * (servers - 1) / servers * size / gpus / goodput
        bound = 2 * (n - 1) / n * size / max(t_nvlink, t_net) / 1e9
        busbw = float(row["busbw_GBps"])
        self.assertLessEqual(busbw, bound * 1.001)
        self.assertGreaterEqual(busbw, 0.95 * bound)
        return t_nvlink, t_net

    def test_large_network_bound(self):
        t_nvlink, t_net = self.check_bound(4, 4, "100Gbps", 4)
        self.assertGreater(t_net, 5 * t_nvlink)

    def test_large_nvlink_bound(self):
        t_nvlink, t_net = self.check_bound(4, 8, "400Gbps", 3)
        self.assertGreater(t_nvlink, 1.4 * t_net)

    def test_small_sizes_step_by_step(self):
        for servers, gpus in ((2, 2), (2, 8), (3, 4), (4, 8)):
            with self.subTest(servers=servers, gpus=gpus):
                size = 1024 * servers * gpus
                (h,) = self.collectives(servers, gpus, hier([size]))
                ranks = ", ".join(f"s{i}n0" for i in range(servers))
                (ring,) = self.collectives(servers, gpus, f"    - {{kind: all-reduce, hosts: [{ranks}], "
                                                         f"size: {size // gpus}}}\n")
                step = NVLINK_LATENCY + size / (gpus * servers) / NVLINK_ONE_WAY[4] * PS
                want = 2 * (gpus - 1) * step + int(ring["time_ps"])
                self.assertAlmostEqual(int(h["time_ps"]), want, delta=4 * gpus)

    def test_one_server_is_nvlink_alone(self):
        # N = 1: 2(G - 1) NVLink steps of S/G each, nothing on the network
        out = self.run_config(config(1, 8, hier([64 * 1024])))
        (row,) = table(out, "collectives.csv")
        want = 2 * 7 * (NVLINK_LATENCY + 64 * 1024 / 8 / NVLINK_ONE_WAY[4] * PS)
        self.assertAlmostEqual(int(row["time_ps"]), want, delta=16)
        ports = table(out, "ports.csv")
        self.assertEqual(sum(int(p["tx_frames"]) for p in ports), 0)


if __name__ == "__main__":
    main()
