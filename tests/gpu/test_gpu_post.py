#!/usr/bin/python3
"""GPU-initiated sends (a message's `post: gpu`, GPUDirect Async
kernel-initiated as DOCA GPUNetIO uses it) against the CPU-driven path, on
a host whose GPU and NIC share a PCIe switch. The two differ in exactly
three places of the PCIe model (docs/config.md, pcie defaults), and the
breakdown in messages.csv shows each:

  doorbell     the CPU's store crosses the root complex (100 ns) before it
               goes down to the NIC; the GPU's peer-to-peer write does not
  WQE fetch    the NIC reads the WQE from socket memory (550 ns read
               latency) or from the GPU's memory (500 ns)
  completion   the NIC writes the completion entry into socket memory,
               landing 140 ns after its last TLP, or into the GPU's
               memory, where it has landed on arrival

Every other part is the same TLPs on the same links, so the
GPU-initiated message completes 290 ns sooner."""
import os
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import run_sim, table, write_config  # noqa: E402
from testlib import main  # noqa: E402

RC_LATENCY, RC_READ, GPU_READ, RC_WRITE = 100_000, 550_000, 500_000, 140_000  # ps

CONFIG = """seed: 1
payload: none
pcie:
  link_defaults: {gen: 4, width: 16}
  switches: [{name: plx, at: socket0}]
  nic: {at: plx}
  gpus: [{name: gpu0, at: plx}]
topology:
  generate: {kind: star, hosts: 2, link: {rate: 200Gbps, delay: 100ns}}
workload:
  messages:
    - {src: h0, dst: h1, op: write, size: 4KiB, src_mem: gpu0, dst_mem: gpu0}
    - {src: h0, dst: h1, op: write, size: 4KiB, src_mem: gpu0, dst_mem: gpu0, post: gpu, start: 20us}
"""


class GpuPost(unittest.TestCase):
    def test_parts_that_differ(self):
        tmp = tempfile.mkdtemp(prefix="gpupost-")
        out = os.path.join(tmp, "out")
        run_sim(write_config(tmp, CONFIG), out)
        cpu, gpu = table(out, "messages.csv")
        self.assertEqual(int(cpu["doorbell_ps"]) - int(gpu["doorbell_ps"]), RC_LATENCY)
        self.assertEqual(int(cpu["wqe_fetch_ps"]) - int(gpu["wqe_fetch_ps"]), RC_READ - GPU_READ)
        self.assertEqual(int(cpu["completion_ps"]) - int(gpu["completion_ps"]), RC_WRITE)
        for part in ("payload_read_ps", "wire_ps", "dma_write_ps", "ack_ps"):
            self.assertEqual(cpu[part], gpu[part], part)
        self.assertEqual(int(cpu["fct_ps"]) - int(gpu["fct_ps"]),
                         RC_LATENCY + RC_READ - GPU_READ + RC_WRITE)


if __name__ == "__main__":
    main()
