#!/usr/bin/python3
"""iWARP decode throughput: `rdmasim decode` (text and --json, output to
/dev/null) over a large capture from gen_iwarp, with markers and CRC on, in
frames/s and MB/s of capture. Best of three runs. Used by `make bench-iwarp`.
"""
import argparse
import os
import struct
import subprocess
import tempfile
import time


def capture_size(path):
    """Frames and octets of frame data in a pcap file."""
    frames = octets = 0
    with open(path, "rb") as f:
        f.read(24)
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            caplen = struct.unpack("<IIII", h)[2]
            f.seek(caplen, os.SEEK_CUR)
            frames += 1
            octets += caplen
    return frames, octets


def best_of(cmd, runs=3):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rdmasim", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--rounds", type=int, default=20000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for layout in ["one", "two", "split"]:
            pcap = os.path.join(tmp, f"iwarp-{layout}.pcap")
            subprocess.run([a.gen, "-m", "-c", "-l", layout, "-n", str(a.rounds), pcap], check=True)
            frames, octets = capture_size(pcap)
            for mode in [[], ["--json"]]:
                dt = best_of([a.rdmasim, "decode", *mode, pcap])
                print(f"iwarp decode {'json' if mode else 'text'} -l {layout}: {frames} frames, "
                      f"{octets / 1e6:.1f} MB in {dt:.3f} s: {frames / dt / 1e6:.2f} M frames/s, "
                      f"{octets / dt / 1e6:.0f} MB/s")


if __name__ == "__main__":
    main()
