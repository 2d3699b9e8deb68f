#!/usr/bin/python3
"""Seed corpora for the fuzz targets, made from the project's captures and
configurations.

    make_seeds.py TOP OUTDIR [GEN_IWARP]

frame: every frame of every capture, prefixed with the fuzz_frame link-type
byte and a zero 'extra wire bytes' byte. pcap: the capture files themselves.
iwarp: the TCP segments of each capture in fuzz_iwarp.c's framing. replay:
the frames of each capture in fuzz_replay.c's framing. config:
each configuration in examples/, tests/*/bad/ and tests/bad/config/ with
the files it includes, in fuzz_config.c's framing.

GEN_IWARP, the capture generator of tests/iwarp, adds iWARP captures made
every way it can (IPv4/IPv6, markers, CRC, MPA revisions, segment layouts,
mid-stream, reordering, each kind of error) to the pcap and iwarp seeds.
The environment's GEN_CAPTURES and GEN_IWARP_STORIES, the story writers of
tests/replay, add the captures the replay tests tell stories with (PSN
gaps, go-back-N, NAKs, RNR, PFC pauses, CM, iWARP Terminates, ...) to the
frame, pcap and replay seeds."""
import glob
import os
import re
import shutil
import struct
import subprocess
import sys

LINKTYPE_INDEX = {1: 0, 113: 1, 276: 2, 247: 3, 197: 4}  # order of fuzz_frame.c
IWARP_FIRST_SEQ = (0xffffff00, 0x7fffff00)             # first_seq() of fuzz_iwarp.c
CONFIG_PARTS = ("topology", "workload", "cdf")           # after the main file, fuzz_config.c
CONFIG_NAMES = ("topology.yaml", "workload.yaml", "sizes.cdf")
GEN_IWARP_RUNS = [
    [], ["-6"], ["-m"], ["-c"], ["-m", "-c"], ["-6", "-m", "-c", "-r", "2"], ["-r", "2"],
    ["-l", "two"], ["-l", "split"], ["-m", "-l", "split"], ["-s", "-m"], ["-s", "-m", "-c"],
    ["-s"], ["-t"], ["-t", "-m", "-c"], ["-e", "crc", "-c"], ["-e", "overrun"],
    ["-e", "marker", "-m"], ["-e", "reserved"],
]


def records(blob, times=None):
    """(linktype, [(caplen bytes, wire length)]) of a little-endian pcap;
    the time of each record in ns is appended to times if given."""
    if blob[:4] not in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        return None, []  # pcapng and big-endian files seed the pcap target only
    frac = 1 if blob[:4] == b"\x4d\x3c\xb2\xa1" else 1000
    linktype = struct.unpack("<I", blob[20:24])[0]
    out, off = [], 24
    while off + 16 <= len(blob):
        sec, sub, caplen, wirelen = struct.unpack("<IIII", blob[off:off + 16])
        out.append((blob[off + 16:off + 16 + caplen], wirelen))
        if times is not None:
            times.append(sec * 10**9 + sub * frac)
        off += 16 + caplen
    return linktype, out


def tcp_segment(frame):
    """(addresses, ports, seq, flags, payload, ipv6) of an Ethernet TCP frame."""
    off, etype = 14, struct.unpack(">H", frame[12:14])[0] if len(frame) >= 14 else 0
    while etype in (0x8100, 0x88a8) and len(frame) >= off + 4:
        etype = struct.unpack(">H", frame[off + 2:off + 4])[0]
        off += 4
    if etype == 0x0800 and len(frame) >= off + 20 and frame[off + 9] == 6:
        ihl = (frame[off] & 15) * 4
        total = struct.unpack(">H", frame[off + 2:off + 4])[0]
        addrs, l4, end, v6 = frame[off + 12:off + 20], off + ihl, off + total, False
    elif etype == 0x86dd and len(frame) >= off + 40 and frame[off + 6] == 6:
        plen = struct.unpack(">H", frame[off + 4:off + 6])[0]
        addrs, l4, end, v6 = frame[off + 8:off + 40], off + 40, off + 40 + plen, True
    else:
        return None
    if len(frame) < l4 + 20 or end > len(frame):
        return None
    sport, dport, seq = struct.unpack(">HHI", frame[l4:l4 + 8])
    doff = (frame[l4 + 12] >> 4) * 4
    flags = struct.unpack(">H", frame[l4 + 12:l4 + 14])[0] & 0xfff
    return addrs, (sport, dport), seq, flags, frame[l4 + doff:end], v6


def iwarp_seed(recs):
    """The capture's TCP segments in fuzz_iwarp.c's framing, or None."""
    conns, nxt, out = {}, {}, bytearray()
    for frame, _ in recs:
        seg = tcp_segment(frame)
        if not seg:
            continue
        addrs, ports, seq, flags, payload, v6 = seg
        half = len(addrs) // 2
        ends = ((addrs[:half], ports[0]), (addrs[half:], ports[1]))
        key = tuple(sorted(ends))
        if key not in conns:
            same_family = sum(1 for k in conns.values() if k[1] == v6)
            conns[key] = ((same_family & 1) | (2 if v6 else 0), v6, ends[0])
        conn, _, first = conns[key]
        d = 0 if ends[0] == first else 1
        expect = nxt.get((conn, d), IWARP_FIRST_SEQ[d])
        syn, fin = flags & 2, flags & 1
        head = d | conn << 1 | (8 if syn else 0) | (16 if fin else 0) | (32 if flags & 4 else 0)
        out += struct.pack(">BIH", head, (seq - expect) & 0xffffffff, len(payload)) + payload
        nxt[(conn, d)] = (seq + len(payload) + (1 if syn else 0) + (1 if fin else 0)) & 0xffffffff
    return bytes(out) if out else None


def replay_seed(linktype, recs, times):
    """The capture's frames in fuzz_replay.c's framing: its link-type byte,
    then per frame its length, the bytes the wire had beyond the capture
    and the microseconds since the previous frame (at most 127)."""
    out = bytearray([LINKTYPE_INDEX[linktype]])
    prev = times[0] if times else 0
    for (data, wirelen), t in zip(recs, times):
        data = data[:0xffff]
        step = min(max(t - prev, 0) // 1000, 127)
        prev = t
        out += struct.pack(">HBB", len(data), min(max(wirelen - len(data), 0), 255), step) + data
    return bytes(out)


def config_seed(path):
    """The configuration and the files it names, NUL-separated, the names
    rewritten to the ones fuzz_config.c gives the parts."""
    with open(path, "rb") as f:
        main = f.read()
    parts = [b""] * len(CONFIG_PARTS)
    for i, key in enumerate(CONFIG_PARTS):
        pattern = re.compile(rb"^([ \t]*%s:[ \t]*)([^\s#]+)[ \t]*$" % key.encode(), re.M)
        m = pattern.search(main)
        if not m:
            continue
        included = os.path.join(os.path.dirname(path), m.group(2).decode())
        if os.path.isfile(included):
            with open(included, "rb") as f:
                parts[i] = f.read()
        main = pattern.sub(lambda mm: mm.group(1) + CONFIG_NAMES[i].encode(), main, count=1)
    if any(b"\0" in p for p in [main] + parts):
        return None
    return b"\0".join([main] + parts)


def write(directory, name, data):
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def main(top, outdir, gen_iwarp=None):
    dirs = {t: os.path.join(outdir, t) for t in ("frame", "pcap", "iwarp", "replay", "config", "captures")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    if gen_iwarp:
        for i, args in enumerate(GEN_IWARP_RUNS):
            subprocess.run([gen_iwarp, *args, os.path.join(dirs["captures"], "iwarp%02d.pcap" % i)],
                           check=True)
    for story_writer in (os.environ.get("GEN_CAPTURES"), os.environ.get("GEN_IWARP_STORIES")):
        if story_writer:
            subprocess.run([story_writer, dirs["captures"]], check=True, stdout=subprocess.DEVNULL)
    captures = sorted(glob.glob(os.path.join(top, "pcaps", "**", "*.pcap*"), recursive=True))
    captures += sorted(glob.glob(os.path.join(dirs["captures"], "*.pcap")))
    counts = dict.fromkeys(("frame", "iwarp", "config"), 0)
    for path in captures:
        shutil.copy(path, dirs["pcap"])
        times = []
        with open(path, "rb") as f:
            linktype, recs = records(f.read(), times)
        if linktype not in LINKTYPE_INDEX:
            continue
        write(dirs["replay"], os.path.basename(path), replay_seed(linktype, recs, times))
        for data, _ in recs:
            write(dirs["frame"], "%06d" % counts["frame"], bytes([LINKTYPE_INDEX[linktype], 0]) + data)
            counts["frame"] += 1
        seed = iwarp_seed(recs) if linktype == 1 else None
        if seed:
            write(dirs["iwarp"], os.path.basename(path), seed)
            counts["iwarp"] += 1
    configs = sorted(glob.glob(os.path.join(top, "examples", "**", "*.yaml"), recursive=True))
    configs += sorted(glob.glob(os.path.join(top, "tests", "*", "bad", "*.yaml")))
    configs += sorted(glob.glob(os.path.join(top, "tests", "bad", "config", "*.yaml")))
    for path in configs:
        seed = config_seed(path)
        if seed:
            write(dirs["config"], "%03d-%s" % (counts["config"], os.path.basename(path)), seed)
            counts["config"] += 1
    print("seeds: %d frames, %d captures, %d TCP streams, %d configurations"
          % (counts["frame"], len(captures), counts["iwarp"], counts["config"]))


if __name__ == "__main__":
    main(*sys.argv[1:4])
