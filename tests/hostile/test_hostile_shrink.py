#!/usr/bin/python3
"""A capture that shrinks while decode or replay reads it through its
mapping: before, SIGBUS (exit 135) and, with --timeline, a CSV.tmp left
behind; now one line naming the file, the frame and the sizes, exit 2, and
no temporary file.

Deterministic: the command's output goes to a pipe nobody reads, so it
stops once the pipe is full, well inside the capture; the file is cut
then, and the pipe drained.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hostile_streams as streams  # noqa: E402
from test_hostile_streams import check, gen  # noqa: E402

CUT = 4 << 20


def shrink_under(args, path):
    p = subprocess.Popen([os.environ["RDMASIM"], *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)  # it reads, fills the pipe and waits
    os.truncate(path, CUT)
    out, err = p.communicate(timeout=60)
    return p.returncode, out, err.decode(errors="replace")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src = gen(tmp, "sendack", 200000)
        check("the capture is larger than the cut", os.path.getsize(src) > 4 * CUT, str(os.path.getsize(src)))
        with open(src, "rb") as f:
            data = f.read()

        path = os.path.join(tmp, "shrinking.pcap")
        with open(path, "wb") as f:
            f.write(data)
        rc, out, err = shrink_under(["decode", path], path)
        check("decode of a shrinking capture exits 2, not by SIGBUS", rc == 2, f"{rc} {err}")
        check("decode names the file, the frame and the shrink",
              "shrinking.pcap: frame " in err and "shrank" in err, err)

        with open(path, "wb") as f:
            f.write(data)
        csv = os.path.join(tmp, "tl.csv")
        rc, out, err = shrink_under(["replay", "--json", "--timeline", csv, path], path)
        check("replay of a shrinking capture exits 2, not by SIGBUS", rc == 2, f"{rc} {err}")
        check("replay names the file, the frame and the shrink",
              "shrinking.pcap: frame " in err and "shrank" in err, err)
        check("no timeline and no CSV.tmp left", not os.path.exists(csv) and not os.path.exists(csv + ".tmp"),
              str(os.listdir(tmp)))
    return streams.status()


if __name__ == "__main__":
    streams.script(main)
