#!/usr/bin/python3
"""Run the rdmasim benchmarks and print the figures against their targets.

1. bench_codec: rdma_decode() and the ICRC in process, one core.
2. A capture of --frames RoCEv2 frames written by bench_gencap into a
   temporary directory, then whole-process timings of `rdmasim decode --json`,
   `rdmasim decode` (text) and tshark printing opcode, QP and PSN, with
   hyperfine when it is installed (else each command is timed once).
3. The same for `rdmasim decode --json` and tshark on a capture of
   --small-frames small frames (bench_gencap --small: single-packet
   messages of at most 200 bytes, ACKs, READ requests and CNPs; 62-274
   bytes), where the cost per frame, not per byte, decides.

Usage: bench/run.py [--builddir DIR] [options]; `make bench` runs it.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (figure, unit) as bench_codec prints them, label in the table, target (None: none)
CODEC_TARGETS = [
    (("decode.crc_off", "frames/s"), "header decode, ICRC off (frames/s/core)", 20e6),
    (("decode.crc_on", "frames/s"), "decode, ICRC on (frames/s/core)", None),
    (("decode.crc_on", "GB/s"), "ICRC verification in rdma_decode (GB/s)", 10.0),
    (("icrc.rocev2", "GB/s"), "rdma_icrc_rocev2 alone (GB/s)", 10.0),
    (("icrc.isal", "GB/s"), "ISA-L CRC-32, same bytes unmasked (GB/s)", None),
]
SPEEDUP_TARGET = 100.0


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builddir", default=os.path.dirname(HERE),
                    help="top build directory (default: the source tree)")
    ap.add_argument("--no-build", action="store_true", help="do not run make first")
    ap.add_argument("--frames", type=int, default=1000000, help="frames in the capture")
    ap.add_argument("--small-frames", type=int, default=1000000,
                    help="frames in the capture of small frames")
    ap.add_argument("--codec-frames", type=int, default=8192,
                    help="frames bench_codec cycles through")
    ap.add_argument("--repetitions", type=int, default=7, help="bench_codec repetitions")
    ap.add_argument("--seconds", type=float, default=0.2,
                    help="least duration of one bench_codec repetition")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each rdmasim command")
    ap.add_argument("--tshark-runs", type=int, default=1, help="timed runs of tshark")
    ap.add_argument("--no-tshark", action="store_true", help="skip tshark")
    ap.add_argument("--tmpdir", default=None, help="where the capture is written")
    ap.add_argument("--keep", action="store_true", help="keep the capture")
    return ap.parse_args()


def build(builddir):
    targets = ["bench/bench_codec", "bench/bench_gencap", "src/rdmasim"]
    print("+ make -C %s %s" % (builddir, " ".join(targets)), flush=True)
    subprocess.run(["make", "-s", "-C", builddir] + targets, check=True)


def run_codec(builddir, args):
    cmd = [os.path.join(builddir, "bench", "bench_codec"), "-n", str(args.codec_frames),
           "-r", str(args.repetitions), "-t", str(args.seconds)]
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    sys.stdout.write(out)
    figures = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and not line.startswith("#") and f[0] != "figure":
            figures[(f[0], f[1])] = (float(f[2]), float(f[3]))
    return figures


def rdmasim_command(builddir):
    """The shell words that run the built rdmasim. In a shared-library build
    src/rdmasim is libtool's wrapper script, which costs some 20 ms a run;
    the program behind it is run directly, as it runs once installed."""
    q = shlex.quote
    real = os.path.join(builddir, "src", ".libs", "rdmasim")
    if os.path.exists(real):
        return "LD_LIBRARY_PATH=%s %s" % (q(os.path.join(builddir, "codec", ".libs")), q(real))
    return q(os.path.join(builddir, "src", "rdmasim"))


def count_lines(cmd):
    """Run the shell command cmd, return (exit status, lines it printed)."""
    p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE)
    lines = 0
    for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
        lines += chunk.count(b"\n")
    return p.wait(), lines


def time_commands(named, runs, warmup, tmpdir):
    """Mean wall seconds of each (name, shell command)."""
    if shutil.which("hyperfine"):
        out = os.path.join(tmpdir, "hyperfine.json")
        cmd = ["hyperfine", "--style", "basic", "--runs", str(runs), "--warmup", str(warmup),
               "--export-json", out]
        for name, c in named:
            cmd += ["-n", name, c]
        print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
        subprocess.run(cmd, check=True)
        with open(out) as f:
            res = json.load(f)["results"]
        return {r["command"]: r["mean"] for r in res}
    times = {}
    for name, c in named:
        print("+ " + c, flush=True)
        t0 = time.monotonic()
        subprocess.run(c, shell=True, check=True)
        times[name] = time.monotonic() - t0
        print("  %.3f s" % times[name])
    return times


def whole_process(builddir, args, tmpdir):
    cap = os.path.join(tmpdir, "rocev2-%d.pcap" % args.frames)
    gen = [os.path.join(builddir, "bench", "bench_gencap"), cap, str(args.frames)]
    print("+ " + " ".join(shlex.quote(c) for c in gen), flush=True)
    subprocess.run(gen, check=True)
    rdmasim = rdmasim_command(builddir)
    # Every frame must come out, and none may be reported bad.
    for mode in ("--json ", ""):
        st, lines = count_lines("%s decode --strict %s%s" % (rdmasim, mode, shlex.quote(cap)))
        if st != 0 or lines != args.frames:
            sys.exit("rdmasim decode --strict %s: exit %d, %d lines for %d frames"
                     % (mode, st, lines, args.frames))
    q = shlex.quote
    named = [("rdmasim decode --json", "%s decode --json %s > /dev/null" % (rdmasim, q(cap))),
             ("rdmasim decode", "%s decode %s > /dev/null" % (rdmasim, q(cap)))]
    times = time_commands(named, args.runs, 1, tmpdir)
    if not args.no_tshark and shutil.which("tshark"):
        tshark = ("tshark -r %s -T fields -e frame.number -e infiniband.bth.opcode "
                  "-e infiniband.bth.destqp -e infiniband.bth.psn > /dev/null" % q(cap))
        times.update(time_commands([("tshark", tshark)], args.tshark_runs, 0, tmpdir))
    return cap, times


def small_frames(builddir, args, tmpdir):
    """Mean seconds of rdmasim decode --json and of tshark on small frames."""
    cap = os.path.join(tmpdir, "small-%d.pcap" % args.small_frames)
    gen = [os.path.join(builddir, "bench", "bench_gencap"), "--small", cap, str(args.small_frames)]
    print("+ " + " ".join(shlex.quote(c) for c in gen), flush=True)
    subprocess.run(gen, check=True)
    rdmasim, q = rdmasim_command(builddir), shlex.quote
    st, lines = count_lines("%s decode --strict --json %s" % (rdmasim, q(cap)))
    if st != 0 or lines != args.small_frames:
        sys.exit("rdmasim decode --strict --json: exit %d, %d lines for %d small frames"
                 % (st, lines, args.small_frames))
    named = [("small: rdmasim decode --json", "%s decode --json %s > /dev/null" % (rdmasim, q(cap)))]
    times = time_commands(named, args.runs, 1, tmpdir)
    if not args.no_tshark and shutil.which("tshark"):
        tshark = ("tshark -r %s -T fields -e frame.number -e infiniband.bth.opcode "
                  "-e infiniband.bth.destqp -e infiniband.bth.psn > /dev/null" % q(cap))
        times.update(time_commands([("small: tshark", tshark)], args.tshark_runs, 0, tmpdir))
    return times


def met(value, target):
    if target is None:
        return "-", "-"
    return "%.4g" % target, "yes" if value >= target else "NO"


def main():
    args = parse_args()
    builddir = os.path.abspath(args.builddir)
    if not args.no_build:
        build(builddir)
    codec = run_codec(builddir, args)
    tmpdir = tempfile.mkdtemp(prefix="rdmasim-bench-", dir=args.tmpdir)
    try:
        cap, times = whole_process(builddir, args, tmpdir)
        size = os.path.getsize(cap)
        times.update(small_frames(builddir, args, tmpdir))
    finally:
        if args.keep:
            print("capture kept in %s" % tmpdir)
        else:
            shutil.rmtree(tmpdir)

    rows = []
    for key, label, target in CODEC_TARGETS:
        if key in codec:
            best, median = codec[key]
            rows.append((label, "%.4g (median %.4g)" % (best, median)) + met(median, target))
    n = args.frames
    for name in ("rdmasim decode --json", "rdmasim decode", "tshark"):
        if name in times:
            t = times[name]
            rows.append(("%s, %d frames (s)" % (name, n), "%.3f (%.3g frames/s)" % (t, n / t),
                         "-", "-"))
    if "tshark" in times:
        ratio = times["tshark"] / times["rdmasim decode --json"]
        rows.append(("tshark / rdmasim decode --json", "%.1fx" % ratio) + met(ratio, SPEEDUP_TARGET))
        ratio = times["tshark"] / times["rdmasim decode"]
        rows.append(("tshark / rdmasim decode (text)", "%.1fx" % ratio, "-", "-"))
    for name in ("small: rdmasim decode --json", "small: tshark"):
        if name in times:
            t, n = times[name], args.small_frames
            rows.append(("%s, %d frames (s)" % (name, n), "%.3f (%.3g frames/s)" % (t, n / t), "-", "-"))
    if "small: tshark" in times:
        ratio = times["small: tshark"] / times["small: rdmasim decode --json"]
        rows.append(("small frames: tshark / rdmasim decode --json", "%.1fx" % ratio)
                    + met(ratio, SPEEDUP_TARGET))
    print()
    print("capture: %d frames, %.1f MB; targets are judged on the median (codec) or mean (whole"
          " process)" % (n, size / 1e6))
    widths = [max(len(r[i]) for r in rows + [("figure", "measured", "target", "met")])
              for i in range(4)]
    for r in [("figure", "measured", "target", "met")] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    main()
