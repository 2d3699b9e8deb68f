#!/usr/bin/python3
"""Valid configurations that used to take the simulator's memory without
bound, or that make no physical sense.

Before: one SEND waiting for its receive (recv_at) kept every rates.csv row
in memory, 105 MB for 8 s simulated (3.1 GB and SIGABRT for 1000 s); and
`pfc: {refresh: 1ps}` was accepted (4.6 M pauses for 7,496 frames). Now the
monitor's tables move to an unnamed temporary file past 65,536 rows and are
read back when the CSVs are written, and a refresh shorter than a PFC frame
takes on the wire at any Ethernet rate is refused at its line. The memory
refusal of a long `repeat` named the list's next capacity ("16777216
messages" for 10^7, "8 messages" under --max-memory 1MiB); it names what
the entry asks for. A `cdf:` naming some other file quoted its first
word in the error; the error points at it without quoting.
"""
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hostile_streams as streams  # noqa: E402
from test_hostile_streams import check  # noqa: E402

RNR = """seed: 1
topology:
  switches: [s0]
  hosts: [h0, h1]
  links:
    - {a: h0, b: s0, rate: 100Gbps, delay: 1us}
    - {a: h1, b: s0, rate: 100Gbps, delay: 1us}
workload:
  messages:
    - {src: h0, dst: h1, op: send, size: 1500, recv_at: 3s}
"""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "rnr.yaml")
        with open(cfg, "w") as f:
            f.write(RNR)
        out = os.path.join(tmp, "out")
        r = subprocess.run([os.environ["RDMASIM"], "sim", cfg, "--out", out], capture_output=True, text=True,
                           timeout=120)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        check("3 s of RNR wait runs to its end", r.returncode == 0, r.stderr)
        rows = open(os.path.join(out, "rates.csv")).read().splitlines()[1:]
        check("rates.csv has the rows of the whole run (more than spill once)", len(rows) > 3 * 65536,
              str(len(rows)))
        times = [int(x.split(",", 1)[0]) for x in rows]
        check("in time order across the spilled rows", times == sorted(times))
        limit = 40 * (4 if os.environ.get("SANITIZER_FLAGS", "").strip() else 1)
        check(f"peak memory {peak:.0f} MB < {limit} MB (rows on disk, not in memory)", peak < limit)

        src = open(os.path.join(os.environ["TOP_SRCDIR"], "examples", "fabric-incast-pfc.yaml")).read()
        bad = src.replace("pfc: {priorities: [3]}", "pfc: {priorities: [3], refresh: 1ps}")
        check("the example still has the line to change", bad != src)
        path = os.path.join(tmp, "refresh.yaml")
        with open(path, "w") as f:
            f.write(bad)
        line = bad.splitlines().index(next(x for x in bad.splitlines() if "refresh: 1ps" in x)) + 1
        r = subprocess.run([os.environ["RDMASIM"], "sim", path, "--check"], capture_output=True, text=True)
        check("refresh: 1ps is refused at its line", r.returncode == 2 and f"refresh.yaml:{line}:" in r.stderr
              and "pfc refresh" in r.stderr, r.stderr)
        ok = bad.replace("refresh: 1ps", "refresh: 420ps")
        with open(path, "w") as f:
            f.write(ok)
        r = subprocess.run([os.environ["RDMASIM"], "sim", path, "--check"], capture_output=True, text=True)
        check("refresh: 420ps is accepted", r.returncode == 0, r.stderr)
        many = os.path.join(tmp, "many.yaml")
        with open(many, "w") as f:
            f.write("topology:\n  hosts: [h0, h1]\n  links:\n    - {a: h0, b: h1, rate: 100Gbps, delay: 1us}\n"
                    "workload:\n  messages:\n    - {src: h0, dst: h1, op: write, size: 64, repeat: 10000000}\n")
        r = subprocess.run([os.environ["RDMASIM"], "sim", many, "--check", "--max-memory", "1MiB"],
                           capture_output=True, text=True)
        check("the memory refusal names the 10000000 messages asked for",
              r.returncode == 2 and " 10000000 messages " in r.stderr, r.stderr)
        secret = os.path.join(tmp, "secret.txt")
        with open(secret, "w") as f:
            f.write("hunter2 opensesame\n")
        cdf = os.path.join(tmp, "cdf.yaml")
        with open(cdf, "w") as f:
            f.write("topology:\n  hosts: [h0, h1]\n  links:\n    - {a: h0, b: h1, rate: 100Gbps, delay: 1us}\n"
                    "workload:\n  generate:\n    - {kind: random, hosts: all, load: 0.3, cdf: secret.txt, "
                    "duration: 10us, op: write}\n")
        r = subprocess.run([os.environ["RDMASIM"], "sim", cdf, "--check"], capture_output=True, text=True)
        check("a cdf naming another file is refused at its line", r.returncode == 2 and "secret.txt:1:1:" in r.stderr,
              r.stderr)
        check("without printing what the file holds", "hunter2" not in r.stderr and "opensesame" not in r.stderr,
              r.stderr)
    return streams.status()


if __name__ == "__main__":
    streams.script(main)
