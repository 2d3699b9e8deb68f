#!/usr/bin/python3
"""All-reduce over NCCL's double binary tree (`algorithm: tree`), run end
to end by `rdmasim sim`, against references computed here:

  * data: at host counts that are powers of two and that are not (the
    second tree is mirrored for an even count, shifted for an odd one),
    every step must hold the sum of the subtree below it going up and the
    whole sum coming down; an add of the wrong child, a slice sent before
    both children's arrived, or a wrong tree shows as a corrupted message;
  * small sizes: latency-bound. Each tree carries one frame of half the
    buffer up ceil(log2 n) levels and back down as many, so the time is
    2 ceil(log2 n) x (alpha + beta x its wire bytes), alpha as for the
    ring (two propagation delays, the switch's latency and the header it
    waits for), plus at most one more beta per step where a rank's two
    children send to it, or it sends to both, at once. The ring's
    2(n-1) steps take longer from eight hosts on;
  * large sizes: each tree moves half the buffer S. A rank that is inner
    in one tree, with two children, sends S/2 up and S/2 to each child
    there, and S/2 up as a leaf of the other: 2S in all, and it receives
    as much. So the time is at least the largest number of wire bytes any
    rank sends over its link rate, and busbw (algbw x 2(n-1)/n, as
    nccl-tests computes it whatever the algorithm) at most the link's
    goodput x (n-1)/n; it comes within 10% of that bound."""
import math
import os
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
sys.path.insert(0, os.path.join(TOP, "tests", "gpu"))
from sim_checks import run_sim, table, write_config  # noqa: E402
from test_collectives import HEADER_WAIT, PS, SWITCH_LATENCY, collectives, star, wire  # noqa: E402
from testlib import main  # noqa: E402


class Tree(unittest.TestCase):
    def run_config(self, text):
        tmp = tempfile.mkdtemp(prefix="tree-")
        out = os.path.join(tmp, "out")
        run_sim(write_config(tmp, text), out)
        return out

    def test_data_at_several_host_counts(self):
        """Two sizes chained, an odd element count (the trees' halves
        differ by one) and slices smaller than a half."""
        for n in (2, 3, 5, 6, 8):
            with self.subTest(hosts=n):
                out = self.run_config(star(["100Gbps"] * n) + """payload: data
workload:
  generate: {kind: all-reduce, algorithm: tree, sizes: [4004, 200KiB], slice: 16KiB}
""")
                msgs = table(out, "messages.csv")
                self.assertEqual({m["data"] for m in msgs}, {"ok"})
                rows = collectives(out)
                self.assertEqual([(r["algorithm"], r["status"], r["data"]) for r in rows],
                                 [("tree", "ok", "ok")] * 2)
                # every rank but a tree's root sends each slice up once and
                # receives it down once: 2 (n - 1) messages per slice and tree
                slices = math.ceil(100 * 1024 / (16 * 1024))
                self.assertEqual([int(r["messages"]) for r in rows],
                                 [2 * 2 * (n - 1), 2 * slices * 2 * (n - 1)])
                self.assertGreaterEqual(int(rows[1]["start_ps"]), int(rows[0]["start_ps"]))

    def test_small_sizes_alpha_beta(self):
        rate, delay, size = 100e9, 1_000_000, 4096
        alpha = 2 * delay + SWITCH_LATENCY + HEADER_WAIT * 8 / rate * PS
        beta = wire(size // 2) * 8 / rate * PS
        for n in (4, 6, 8):
            with self.subTest(hosts=n):
                out = self.run_config(star(["100Gbps"] * n) + f"""workload:
  generate:
    - {{kind: all-reduce, algorithm: tree, size: {size}}}
    - {{kind: all-reduce, size: {size}, qp: 2, start: 1ms}}
""")
                tree, ring = (int(r["time_ps"]) for r in collectives(out))
                steps = 2 * math.ceil(math.log2(n))
                self.assertGreaterEqual(tree, steps * (alpha + beta) * 0.999)
                self.assertLessEqual(tree, steps * (alpha + 2 * beta),
                                     f"{n} hosts: {tree} ps, {steps} steps of {alpha + beta:.0f}")
                if n >= 8:
                    self.assertLess(tree, ring)

    def test_large_sizes_at_the_bound(self):
        size = 64 * 2**20
        for n in (4, 6):
            with self.subTest(hosts=n):
                out = self.run_config(star(["100Gbps"] * n) + f"""workload:
  generate: {{kind: all-reduce, algorithm: tree, size: {size}}}
""")
                row = collectives(out)[0]
                payload, sent = {}, {}
                for m in table(out, "messages.csv"):
                    payload[m["src"]] = payload.get(m["src"], 0) + int(m["bytes"])
                    sent[m["src"]] = sent.get(m["src"], 0) + wire(int(m["bytes"]))
                self.assertEqual(max(payload.values()), 2 * size)  # the busiest rank's 2S
                least = max(sent.values()) * 8 / 100e9
                bound = size / least / 1e9 * 2 * (n - 1) / n
                busbw = float(row["busbw_GBps"])
                self.assertAlmostEqual(busbw, float(row["algbw_GBps"]) * 2 * (n - 1) / n, places=4)
                self.assertLessEqual(busbw, bound * 1.0001)
                self.assertGreaterEqual(busbw, 0.9 * bound, f"busbw {busbw:.3f} GB/s, bound {bound:.3f}")


if __name__ == "__main__":
    main()
