#!/usr/bin/python3
"""Seed corpora for the fuzz targets, made from the project's captures.

frame: every frame of every capture, prefixed with the fuzz_frame link-type
byte and a zero 'extra wire bytes' byte. pcap: the capture files themselves."""
import glob
import os
import shutil
import struct
import sys

LINKTYPE_INDEX = {1: 0, 113: 1, 276: 2, 247: 3, 197: 4}  # order of fuzz_frame.c


def frames(path):
    with open(path, "rb") as f:
        blob = f.read()
    magic = blob[:4]
    if magic not in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        return None, []  # pcapng and big-endian files seed the pcap target only
    linktype = struct.unpack("<I", blob[20:24])[0]
    out, off = [], 24
    while off + 16 <= len(blob):
        caplen = struct.unpack("<I", blob[off + 8:off + 12])[0]
        out.append(blob[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return linktype, out


def main(top, outdir):
    captures = sorted(glob.glob(os.path.join(top, "pcaps", "**", "*.pcap*"), recursive=True))
    frame_dir = os.path.join(outdir, "frame")
    pcap_dir = os.path.join(outdir, "pcap")
    for d in (frame_dir, pcap_dir):
        os.makedirs(d, exist_ok=True)
    n = 0
    for path in captures:
        shutil.copy(path, pcap_dir)
        linktype, recs = frames(path)
        if linktype not in LINKTYPE_INDEX:
            continue
        for data in recs:
            with open(os.path.join(frame_dir, "%06d" % n), "wb") as f:
                f.write(bytes([LINKTYPE_INDEX[linktype], 0]) + data)
            n += 1
    print("seeds: %d frames, %d captures" % (n, len(captures)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
