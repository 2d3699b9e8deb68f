#!/usr/bin/python3
"""gen_hostile.py - small legal captures that stress the stateful parts of
decode and replay, written at test time (they are too large to keep).

usage: gen_hostile.py KIND N OUT.pcap
  conns  N  N TCP connections, each one segment of one octet (no SYN)
  synscan N N SYNs to distinct ports, no RDMA at all
  ooo    N  one connection (SYN seen) whose first octet is lost, then N
            one-octet segments behind it in order
  times  3  three frames at 10 s, 9.7 s and -0.5 s: times before the first
  pfc    N  N PFC frames pausing every priority for the longest time
  ipv6ext 3 RoCEv2 over IPv6 behind extension headers
  qps    N  N RoCEv2 SEND-only requests, each to a QP of its own
  sendack N N SEND-only requests, each acknowledged (a message completes
            every two frames)
  ackpair N N request QPs between two hosts, each followed by one ACK of a
            flow that answers none of them
  ackflows N N request QPs between two hosts, each followed by an ACK of
            a flow of its own that answers none of them
"""
import struct
import sys
import zlib

PCAP_HDR = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)  # ns pcap


def csum(b):
    if len(b) & 1:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, proto, payload):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, proto, 0, src, dst)
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


ETH = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"


def tcp(src, dst, sport, dport, seq, flags, data=b""):
    h = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 65535, 0, 0)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(h) + len(data))
    c = csum(pseudo + h + data)
    h = h[:16] + struct.pack("!H", c) + h[18:]
    return ETH + ipv4(src, dst, 6, h + data)


def roce(src, dst, opcode, qpn, psn, payload=b""):
    bth = struct.pack("!BBHII", opcode, 0, 0xFFFF, qpn & 0xFFFFFF, psn & 0xFFFFFF)
    if opcode == 0x11:  # ACK: AETH
        bth += struct.pack("!I", 0x1F << 24 | 0)
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(bth) + len(payload) + 4, 0)
    ip = ipv4(src, dst, 17, udp + bth + payload + b"\0\0\0\0")[:20]
    # ICRC: CRC-32 over the invariant fields, the variant ones as ones
    masked = ip[:1] + b"\xff" + ip[2:8] + b"\xff" + ip[9:10] + b"\xff\xff" + ip[12:]
    icrc = zlib.crc32(b"\xff" * 8 + masked + udp[:6] + b"\xff\xff" + bth[:4] + b"\xff" + bth[5:] + payload)
    return ETH + ip + udp + bth + payload + struct.pack("<I", icrc)


def roce6(ext, opcode=0x04, qpn=1, psn=0, payload=b"\0" * 8):
    """RoCEv2 over IPv6 with extension headers `ext` [(type, bytes)] before
    UDP; the ICRC as Linux rxe computes it (extension headers left out)."""
    src, dst = bytes(15) + b"\x01", bytes(15) + b"\x02"
    bth = struct.pack("!BBHII", opcode, 0, 0xFFFF, qpn, psn)
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(bth) + len(payload) + 4, 0)
    types = [t for t, _ in ext] + [17]
    exts = b"".join(bytes([types[i + 1]]) + body for i, (_, body) in enumerate(ext))
    plen = len(exts) + len(udp) + len(bth) + len(payload) + 4
    ip = struct.pack("!IHBB", 6 << 28, plen, types[0], 64) + src + dst
    masked = bytes([ip[0] | 0x0F]) + b"\xff\xff\xff" + ip[4:7] + b"\xff" + ip[8:]
    icrc = zlib.crc32(b"\xff" * 8 + masked + udp[:6] + b"\xff\xff" + bth[:4] + b"\xff" + bth[5:] + payload)
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x86\xdd" + ip + exts + udp + bth + payload + struct.pack("<I", icrc)


HOP_BY_HOP = (0, b"\x00\x01\x04\0\0\0\0")        # PadN: 8 octets with the next-header octet
DEST_OPTS = (60, b"\x01\x01\x0c" + bytes(12))      # PadN: 16 octets
ATOMIC_FRAGMENT = (44, b"\x00\x00\x00\x00\x12\x34\x56")  # offset 0, M 0


def frames(kind, n):
    a, b = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    if kind == "conns":
        for i in range(n):
            src = bytes([10, 1, (i // 60000) & 0xFF, 1])
            yield tcp(src, b, 1024 + i % 60000, 80, 1000, 0x18, b"x")
    elif kind == "synscan":
        for i in range(n):
            dst = bytes([10, 2, (i // 60000) & 0xFF, 1])
            yield tcp(a, dst, 40000, 1 + i % 60000, 7, 0x02)
    elif kind == "ooo":
        yield tcp(a, b, 5000, 6000, 99, 0x02)
        for i in range(n):
            yield tcp(a, b, 5000, 6000, 101 + i, 0x18, b"y")
    elif kind == "times":  # stamped 10 s, 9.7 s and -0.5 s (main() writes the stamps)
        for i in range(3):
            yield roce(a, b, 0x04, 1, i, b"\0" * 8)
    elif kind == "pfc":  # N PFC frames pausing all eight priorities for 65535 quanta
        for i in range(n):
            body = struct.pack("!HH", 0x0101, 0x00FF) + struct.pack("!8H", *[0xFFFF] * 8)
            yield b"\x01\x80\xc2\x00\x00\x01" + b"\x02\0\0\0\0\x09" + b"\x88\x08" + body + b"\0" * 26
    elif kind == "ipv6ext":  # RoCEv2 behind Hop-by-Hop, Destination Options, a whole fragment
        yield roce6([HOP_BY_HOP])
        yield roce6([HOP_BY_HOP, DEST_OPTS], psn=1)
        yield roce6([ATOMIC_FRAGMENT], psn=2)
    elif kind == "qps":
        for i in range(n):
            yield roce(a, b, 0x04, i + 1, 0, b"\0" * 8)
    elif kind == "sendack":
        for i in range(n):
            yield roce(a, b, 0x04, 0x11, i, b"\0" * 64)
            yield roce(b, a, 0x11, 0x22, i)
    elif kind == "ackpair":
        for i in range(n):
            yield roce(a, b, 0x04, i + 1, 100, b"\0" * 8)
            yield roce(b, a, 0x11, 0xABCDEF, 5000 + i)
    elif kind == "ackflows":
        for i in range(n):
            yield roce(a, b, 0x04, i + 1, 100, b"\0" * 8)
            yield roce(b, a, 0x11, 0x100000 + i, 5000 + i)
    else:
        raise SystemExit("unknown kind " + kind)


def main():
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(out, "wb") as f:
        f.write(PCAP_HDR)
        buf = []
        stamps = [(10, 0), (9, 700000000), (-1, 500000000)] if kind == "times" else None
        for i, fr in enumerate(frames(kind, n)):
            sec, ns = stamps[i] if stamps else (1 + i // 1000000, (i % 1000000) * 1000)
            buf.append(struct.pack("<iIII", sec, ns, len(fr), len(fr)) + fr)
            if len(buf) >= 4096:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))


if __name__ == "__main__":
    main()
