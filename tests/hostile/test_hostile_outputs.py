#!/usr/bin/python3
"""Outputs nobody else can redirect or mix, for `rdmasim sim --out` and
`rdmasim replay --timeline`.

Before: a symbolic link planted at out/summary.json.tmp (or CSV.tmp, or
out/pcap) made the run overwrite its target; two runs into one --out mixed
their rows; "outputs DIR" was printed when writing had failed. Now
temporary files are created with O_CREAT|O_EXCL|O_NOFOLLOW (a link or file
left there is removed first, not followed), output directories must not be
symbolic links, the output directory is locked (flock) for the whole run,
and "outputs" is printed only once they exist.
"""
import fcntl
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hostile_streams as streams  # noqa: E402
from test_hostile_streams import check, gen  # noqa: E402

EXAMPLES = os.path.join(os.environ["TOP_SRCDIR"], "examples")
SMALL = os.path.join(EXAMPLES, "dumbbell-incast.yaml")
TRACED = os.path.join(EXAMPLES, "every-operation.yaml")


def sim(config, out):
    return subprocess.run([os.environ["RDMASIM"], "sim", config, "--out", out], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        victim = os.path.join(tmp, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")

        out = os.path.join(tmp, "planted")
        os.mkdir(out)
        for name in ("summary.json.tmp", "messages.csv.tmp", "pfc.csv.tmp", "ports.csv.tmp"):
            os.symlink(victim, os.path.join(out, name))
        r = sim(SMALL, out)
        check("sim with planted links exits 0", r.returncode == 0, r.stderr)
        check("the links' target is untouched", open(victim).read() == "precious\n")
        check("the outputs are files of their own",
              all(not os.path.islink(os.path.join(out, n)) for n in os.listdir(out)) and
              os.path.isfile(os.path.join(out, "summary.json")), str(os.listdir(out)))

        real = os.path.join(tmp, "real")
        os.mkdir(real)
        link = os.path.join(tmp, "link")
        os.symlink(real, link)
        r = sim(SMALL, link)
        check("--out through a symbolic link is refused", r.returncode == 2 and "symbolic link" in r.stderr,
              r.stderr)
        check("nothing written through it", os.listdir(real) == [], str(os.listdir(real)))
        check("no 'outputs' line when refused", "outputs" not in r.stdout, r.stdout)

        out = os.path.join(tmp, "pcaplink")
        os.mkdir(out)
        os.symlink(real, os.path.join(out, "pcap"))
        r = sim(TRACED, out)
        check("a symbolic link at out/pcap is refused", r.returncode == 2 and "symbolic link" in r.stderr,
              r.stderr)
        check("no pcap written through it", os.listdir(real) == [], str(os.listdir(real)))

        out = os.path.join(tmp, "busy")
        os.mkdir(out)
        fd = os.open(out, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a run in progress holds it
        r = sim(SMALL, out)
        os.close(fd)
        check("a second run into a busy --out is refused", r.returncode == 2 and "another run" in r.stderr,
              r.stderr)
        check("and writes nothing there", os.listdir(out) == [], str(os.listdir(out)))
        r = sim(SMALL, out)
        check("once free, the run goes ahead", r.returncode == 0 and "outputs" in r.stdout, r.stderr)

        out = os.path.join(tmp, "fails")
        os.makedirs(os.path.join(out, "summary.json"))  # renaming onto it fails
        r = sim(SMALL, out)
        check("writing that fails exits 2", r.returncode == 2, r.stderr)
        check("and prints no 'outputs' line", "outputs" not in r.stdout, r.stdout)

        pcap = gen(tmp, "qps", 10)
        csv = os.path.join(tmp, "tl.csv")
        os.symlink(victim, csv + ".tmp")
        r = subprocess.run([os.environ["RDMASIM"], "replay", "--timeline", csv, pcap], capture_output=True, text=True)
        check("replay --timeline with a planted CSV.tmp exits 0", r.returncode == 0, r.stderr)
        check("the link's target is untouched", open(victim).read() == "precious\n")
        check("the timeline is a file of its own", os.path.isfile(csv) and not os.path.islink(csv))

        csv2 = os.path.join(tmp, "tl2.csv")
        fd = os.open(csv2 + ".tmp", os.O_WRONLY | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another replay writing it
        r = subprocess.run([os.environ["RDMASIM"], "replay", "--timeline", csv2, pcap], capture_output=True, text=True)
        os.close(fd)
        check("a timeline another run is writing is refused", r.returncode == 2 and "another run" in r.stderr,
              r.stderr)
    return streams.status()


if __name__ == "__main__":
    streams.script(main)
