#!/usr/bin/python3
"""Hostile captures against replay's flow table and pairing: many request
QPs with one response flow that answers none of them, and a million
distinct QPs.

Before: 80,000 request QPs against one non-matching ACK flow took 54 s
(pairing walked every flow per ACK); a million QPs took 4.0 GB and two
million ended in "out of memory" with no report; one PFC frame with
--interval 1ns made a 24.7 MB timeline (--link-speed 1Kbps: ~2.8 TB). Now pairing backs off in
proportion to what it walked, and replay follows at most as many flows as
--max-memory (default 1GiB, about 4 KiB a flow) holds, then says so; a
timeline that would pass --timeline-max (default 1GiB) stops the run.

Before: 20,000 request QPs and 20,000 distinct ACK flows answering none of
them took 12.8 s (each new ACK flow walked every requester); now 0.5 s:
searches between two hosts with many flows share a budget earned per frame.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_hostile_streams import check, gen, run  # noqa: E402
import test_hostile_streams as streams  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as tmp:
        p = gen(tmp, "ackpair", 80000)
        rc, *_ = run("replay", p)
        check("replay of 80k requesters and one stray ACK flow exits 0", rc == 0, str(rc))

        p = gen(tmp, "ackflows", 20000)
        rc, dt, *_ = run("replay", p, limit_s=3.0)
        check("replay of 20k requesters and 20k stray ACK flows exits 0", rc == 0, str(rc))

        p = gen(tmp, "qps", 1000000)
        rc, _, _, err = run("replay", p, limit_mb=1024)
        check("replay of 1M QPs exits 0", rc == 0, err)
        r = subprocess.run([os.environ["RDMASIM"], "replay", p], capture_output=True, text=True)
        check("the report says the memory limit was reached", "memory limit reached" in r.stdout, r.stdout[:600])

        small = gen(tmp, "qps", 2000)
        r = subprocess.run([os.environ["RDMASIM"], "replay", "--json", "--max-memory", "64KiB", small],
                           capture_output=True, text=True)
        s = json.loads(r.stdout)["summary"]
        check("--max-memory 64KiB: 16 flows followed, the rest counted",
              r.returncode == 0 and s["memory_limit_flows"] == 16 and s["unanalysed_frames"] == 2000 - 16,
              f"{r.returncode} {s}")
        r = subprocess.run([os.environ["RDMASIM"], "replay", "--max-memory", "lots", small],
                           capture_output=True, text=True)
        check("--max-memory that is not a size is a usage error", r.returncode == 2 and "--max-memory" in r.stderr,
              r.stderr)
        pfc = gen(tmp, "pfc", 1)
        csv = os.path.join(tmp, "tl.csv")
        r = subprocess.run([os.environ["RDMASIM"], "replay", "--timeline", csv, "--interval", "1ns",
                            "--link-speed", "1Kbps", "--timeline-max", "1MiB", pfc], capture_output=True, text=True,
                           timeout=60)
        check("a timeline past --timeline-max is an error", r.returncode == 2 and "--timeline-max" in r.stderr,
              r.stderr)
        check("and leaves no CSV, no CSV.tmp", not os.path.exists(csv) and not os.path.exists(csv + ".tmp"))

        # 2000 frames over 2 ms: at 1ns that is 2M intervals, more than
        # 1MiB/48; refused before anything is written (it used to run)
        sa = gen(tmp, "sendack", 1000)
        r = subprocess.run([os.environ["RDMASIM"], "replay", "--timeline", csv, "--interval", "1ns",
                            "--timeline-max", "1MiB", sa], capture_output=True, text=True, timeout=60)
        check("an --interval too short for the capture's span is refused up front",
              r.returncode == 2 and r.stdout == "" and "--timeline-max" in r.stderr
              and "1999001 intervals" in r.stderr and len(r.stderr.splitlines()) == 1, f"{r.returncode} {r.stderr}")
        check("and leaves no CSV, no CSV.tmp", not os.path.exists(csv) and not os.path.exists(csv + ".tmp"))
        r = subprocess.run([os.environ["RDMASIM"], "replay", "--timeline", csv, "--interval", "1us",
                            "--timeline-max", "1MiB", sa], capture_output=True, text=True, timeout=60)
        check("at 1us the same capture's timeline is written", r.returncode == 0 and os.path.exists(csv),
              r.stderr)
    return streams.status()


if __name__ == "__main__":
    streams.script(main)
