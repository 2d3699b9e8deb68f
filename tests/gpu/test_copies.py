#!/usr/bin/python3
"""Copies between the GPUs of one server (workload copies), against
NVIDIA's NVLink figures and pcie-bench's PCIe costs:

  * NVLink generation 3, 4, 5: 600, 900, 1,800 GB/s per GPU both ways
    together (nvidia.com, "NVLink and NVSwitch"), half of it one way: a
    copy of 1 GiB takes copy_latency + size / rate, so its bandwidth is
    the rate within 2% even with the DMA engine's start counted;
  * the NVSwitch joins every GPU to every other: two copies between
    different pairs both run at the full rate; copies that share a GPU's
    sending or receiving side get max-min fair shares of it while they
    overlap (progressive filling: Bertsekas and Gallager, "Data
    Networks", 6.5.2), worked out by hand below;
  * PCIe peer to peer: the source GPU's writes, MPS-sized TLPs of 24 bytes
    of overhead each, at the Gen5 x16 link's TLP rate (ACK and UpdateFC
    DLLPs and SKP ordered sets taken out, PCIe Base Specification 5.0
    tables 3-7 to 3-9, as tests/pcie/test_pcie.py computes it);
  * a bounce through host memory is slower than either."""
import os
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, table, write_config  # noqa: E402
from testlib import main  # noqa: E402

PS = 10**12
COPY_LATENCY = 5 * 10**6  # ps, docs/config.md default of a GPU's copy_latency
GIB = 2**30


def server(copies, nvlink=4):
    gpus = "\n".join(f"          - {{name: gpu{g}, at: plx{g // 2}}}" for g in range(8))
    items = "\n".join(f"    - {c}" for c in copies)
    return f"""seed: 1
payload: none
topology:
  hosts:
    - name: server
      pcie:
        sockets: 2
        nvlink: {nvlink}
        link_defaults: {{gen: 5, width: 16}}
        switches:
          - {{name: plx0, at: socket0}}
          - {{name: plx1, at: socket0}}
          - {{name: plx2, at: socket1}}
          - {{name: plx3, at: socket1}}
        gpus:
{gpus}
    - peer
  links: [{{a: server, b: peer}}]
workload:
  copies:
{items}
"""


def tlp_rate_gen5_x16():
    raw = 32e9 * 128 / 130 * 16
    interval = 168  # symbol times between ACK and UpdateFC DLLPs, x16 at MPS 256
    return raw * (1 - 8 / interval - 8 / interval - 4 / 1538)


class Copies(unittest.TestCase):
    def copies(self, copies, nvlink=4):
        tmp = tempfile.mkdtemp(prefix="copies-")
        out = os.path.join(tmp, "out")
        run_sim(write_config(tmp, server(copies, nvlink)), out)
        return table(out, "copies.csv")

    def test_nvlink_generations(self):
        for gen, both_ways in ((3, 600), (4, 900), (5, 1800)):
            with self.subTest(generation=gen):
                row = self.copies(["{host: server, src: gpu0, dst: gpu5, size: 1GiB, via: nvlink}"],
                                  gen)[0]
                rate = both_ways / 2 * 1e9
                t = int(row["time_ps"])
                self.assertAlmostEqual(t, COPY_LATENCY + GIB / rate * PS, delta=GIB / rate * PS * 1e-4)
                self.assertAlmostEqual(float(row["GBps"]) / (rate / 1e9), 1, delta=0.02)

    def test_nvswitch_joins_every_pair(self):
        rows = self.copies(["{host: server, src: gpu0, dst: gpu1, size: 1GiB, via: nvlink}",
                            "{host: server, src: gpu2, dst: gpu7, size: 1GiB, via: nvlink}",
                            "{host: server, src: gpu3, dst: gpu4, size: 1GiB, via: nvlink, start: 10ms}",
                            "{host: server, src: gpu5, dst: gpu4, size: 1GiB, via: nvlink, start: 10ms}"])
        alone = COPY_LATENCY + GIB / 450e9 * PS
        self.assertAlmostEqual(int(rows[0]["time_ps"]), alone, delta=alone * 1e-4)
        self.assertEqual(rows[0]["time_ps"], rows[1]["time_ps"])
        # into gpu4 twice at once: its receiving side is shared, half each,
        # so both end together, after twice the time of one
        both = COPY_LATENCY + 2 * GIB / 450e9 * PS
        for r in rows[2:]:
            self.assertAlmostEqual(int(r["time_ps"]), both, delta=both * 1e-6)

    def test_two_out_of_one_gpu_share_its_link(self):
        # max-min fair shares of each GPU's sending and receiving side,
        # S = 256 MiB, C = 450 GB/s one way:
        #   a: gpu0 -> gpu1   b: gpu0 -> gpu2   c: gpu3 -> gpu2   d: gpu4 -> gpu2
        # gpu2's receiving side holds three copies, C/3 each; gpu0's sending
        # side leaves a the rest, 2C/3, so a ends at 1.5 S/C; then b, c and
        # d keep C/3 (gpu2 is still full) and end at 3 S/C. A copy of gpu5
        # 1 ms later, alone on its sides, ends as if it were alone.
        size, rate = 256 * 2**20, 450e9
        rows = self.copies([f"{{host: server, src: gpu{a}, dst: gpu{b}, size: 256MiB}}"
                            for a, b in ((0, 1), (0, 2), (3, 2), (4, 2))] +
                           ["{host: server, src: gpu5, dst: gpu6, size: 256MiB, start: 1ms}"])
        unit = size / rate * PS
        want = [1.5 * unit, 3 * unit, 3 * unit, 3 * unit, unit]
        for r, w in zip(rows, want):
            self.assertAlmostEqual(int(r["time_ps"]) - COPY_LATENCY, w, delta=2, msg=r)

    def test_a_copy_that_ends_gives_its_share_back(self):
        # gpu0 -> gpu1 of S and gpu0 -> gpu2 of 3S: C/2 each until the first
        # ends at 2S/C, then the second alone at C for its last 2S: 4S/C
        size, rate = 64 * 2**20, 450e9
        rows = self.copies(["{host: server, src: gpu0, dst: gpu1, size: 64MiB}",
                            "{host: server, src: gpu0, dst: gpu2, size: 192MiB}"])
        unit = size / rate * PS
        self.assertAlmostEqual(int(rows[0]["time_ps"]) - COPY_LATENCY, 2 * unit, delta=2)
        self.assertAlmostEqual(int(rows[1]["time_ps"]) - COPY_LATENCY, 4 * unit, delta=2)

    def test_pcie_peer_to_peer_and_bounce(self):
        rows = self.copies(["{host: server, src: gpu0, dst: gpu1, size: 256MiB, via: p2p}",
                            "{host: server, src: gpu0, dst: gpu2, size: 256MiB, via: p2p, start: 10ms}",
                            "{host: server, src: gpu0, dst: gpu1, size: 256MiB, via: bounce, start: 20ms}",
                            "{host: server, src: gpu0, dst: gpu1, size: 256MiB, via: nvlink, start: 40ms}"])
        size = 256 * 2**20
        goodput = tlp_rate_gen5_x16() / 8 * 256 / (256 + 24)
        for r in rows[:2]:
            t = (int(r["time_ps"]) - COPY_LATENCY) / PS
            self.assertAlmostEqual(size / t / goodput, 1, delta=0.01, msg=r)
        p2p, bounce, nvlink = (float(rows[i]["GBps"]) for i in (0, 2, 3))
        self.assertLess(bounce, p2p / 1.5)
        self.assertGreater(nvlink, 5 * p2p)


if __name__ == "__main__":
    main()
