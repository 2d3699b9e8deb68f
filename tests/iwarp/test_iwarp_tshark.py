#!/usr/bin/python3
"""iWARP decode against tshark, on captures tests/iwarp/gen_iwarp writes.

Every RDMAP opcode, markers on and off, CRC on and off, MPA revisions 1
and 2, IPv4 and IPv6, one FPDU per segment (tshark neither reassembles nor
splits segments). For every frame tshark dissects as MPA, each field it
shows must equal the same member of `rdmasim decode --json`.

Where tshark 4.0 is wrong the project is right, and the comparison says so:
  - it reads the CRC field big-endian, so its crc_check is our value with
    the bytes swapped (MPA stores the CRC32c least significant byte first);
  - its iwarp_mpa.privatedata keeps the RFC 6581 IRD/ORD word that we
    decode into fields;
  - for the Swap atomic (RFC 7306 opcode 1) it shows no swap data/mask and
    reads compare_data 16 octets early, so those are not compared;
  - it takes a Terminate's DDP header length from the error type, not from
    the header's T bit; the generated Terminates agree on both.
The RPCoRDMA and SMB-Direct dissectors are turned off: they claim short
Send payloads and mark them malformed.
"""
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.environ.get("TOP_SRCDIR", "."), "tests"))
from testlib import script_limit  # noqa: E402

CASES = [
    ("IPv4, CRC", ["-c"]),
    ("IPv4, markers, CRC", ["-m", "-c"]),
    ("IPv4, markers", ["-m"]),
    ("IPv4, neither", []),
    ("IPv4, revision 2, markers, CRC", ["-r", "2", "-m", "-c"]),
    ("IPv6, CRC", ["-6", "-c"]),
    ("IPv6, revision 2, markers", ["-6", "-r", "2", "-m"]),
    ("IPv6, markers, CRC", ["-6", "-m", "-c"]),
]

# tshark field -> how to find our value in one decoded object
MPA_FIELDS = ["marker_flag", "crc_flag", "rej_flag", "res", "rev", "pdlength"]
DDP_FIELDS = ["tagged_flag", "last_flag", "rsvd", "dv", "stag", "tagged_offset", "qn", "msn", "mo"]
RR_FIELDS = ["sinkstag", "sinkto", "rdmardsz", "srcstag", "srcto"]
ATOMIC_FIELDS = ["reserved", "opcode", "request_identifier", "remote_stag", "remote_tagged_offset",
                 "add_data", "add_mask", "swap_data", "swap_mask", "compare_data", "compare_mask",
                 "original_request_identifier", "original_remote_data_value"]
TERM_FIELDS = ["term_layer", "term_etype_rdma", "term_etype_ddp", "term_etype_llp", "term_etype",
               "term_errcode_rdma", "term_errcode_ddp_tagged", "term_errcode_ddp_untagged",
               "term_errcode_llp", "term_errcode", "term_hdrct_m", "hdrct_d", "hdrct_r", "term_rsvd",
               "term_ddp_seg_len", "term_ddp_h", "term_rdma_h"]
FIELDS = (["frame.number", "iwarp_mpa.crc_check", "iwarp_mpa.crc", "iwarp_mpa.ulpdulength",
           "iwarp_mpa.marker_res", "iwarp_mpa.marker_fpduptr", "iwarp_mpa.privatedata",
           "iwarp_rdma.version", "iwarp_rdma.rsv", "iwarp_rdma.opcode", "iwarp_rdma.inval_stag"]
          + ["iwarp_mpa." + f for f in MPA_FIELDS]
          + ["iwarp_ddp." + f for f in DDP_FIELDS]
          + ["iwarp_rdma." + f for f in RR_FIELDS + TERM_FIELDS]
          + ["iwarp_rdma.atomic." + f for f in ATOMIC_FIELDS])


def tshark_frames(pcap):
    cmd = ["tshark", "-o", "tcp.try_heuristic_first:TRUE", "--disable-protocol", "rpcordma",
           "--disable-protocol", "smb_direct", "-r", pcap, "-T", "fields",
           "-E", "occurrence=a", "-E", "aggregator=;"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    frames = {}
    for line in out.splitlines():
        vals = dict(zip(FIELDS, line.split("\t")))
        frames[int(vals["frame.number"])] = {k: v for k, v in vals.items() if v != ""}
    return frames


def wide_as_int(pairs):
    """64-bit fields (tagged offsets, atomic operands) come as hex strings,
    "0x" and 16 digits; byte strings (private data) are left as they are."""
    return {k: int(v, 16) if isinstance(v, str) and k not in ("privatedata", "term_ddp_h")
            and re.fullmatch(r"0x[0-9a-f]{16}", v) else v for k, v in pairs}


def our_frames(pcap):
    out = subprocess.run([os.environ["RDMASIM"], "decode", "--json", pcap], check=True,
                         capture_output=True, text=True).stdout
    frames = {}
    for line in out.splitlines():
        obj = json.loads(line, object_pairs_hook=wide_as_int)
        frames.setdefault(obj["frame"], []).append(obj)
    return frames


def num(v):
    return int(v, 0) if isinstance(v, str) else int(v)


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def eq(self, where, what, theirs, ours):
        if theirs == ours:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {where}: {what}: tshark {theirs!r}, rdmasim {ours!r}")


def rr_bytes(rr):
    return (rr["sinkstag"].to_bytes(4, "big") + rr["sinkto"].to_bytes(8, "big")
            + rr["rdmardsz"].to_bytes(4, "big") + rr["srcstag"].to_bytes(4, "big")
            + rr["srcto"].to_bytes(8, "big")).hex()


def compare_mpa_frame(ck, where, t, mpa):
    for f in MPA_FIELDS:
        ck.eq(where, f, num(t["iwarp_mpa." + f]), mpa[f])
    pd = mpa.get("privatedata", "0x")[2:]
    if "ird" in mpa:
        word = ((mpa["peer_to_peer"] << 31) | (mpa["rtr_send"] << 30) | (mpa["ird"] << 16)
                | (mpa["rtr_write"] << 15) | (mpa["rtr_read"] << 14) | mpa["ord"])
        pd = word.to_bytes(4, "big").hex() + pd
    ck.eq(where, "privatedata", t.get("iwarp_mpa.privatedata", ""), pd)


def compare_fpdu(ck, where, t, o):
    mpa, ddp, rdmap = o["mpa"], o["ddp"], o["rdmap"]
    ck.eq(where, "ulpdulength", num(t["iwarp_mpa.ulpdulength"]), mpa["ulpdulength"])
    if "mpa_crc" in o:
        ck.eq(where, "crc_check", num(t["iwarp_mpa.crc_check"]), int(o["mpa_crc"]["value"], 16))
        ck.eq(where, "CRC good", o["mpa_crc"]["ok"], True)
    else:
        ck.eq(where, "crc", num(t["iwarp_mpa.crc"]), int(mpa["crc"], 16))
    markers = mpa.get("markers", [])
    ck.eq(where, "marker_fpduptr", t.get("iwarp_mpa.marker_fpduptr", ""),
          ";".join(str(m["marker_fpduptr"]) for m in markers))
    ck.eq(where, "marker_res", t.get("iwarp_mpa.marker_res", ""),
          ";".join(f"0x{m['marker_res']:04x}" for m in markers))
    for f in DDP_FIELDS:
        if f in ddp or "iwarp_ddp." + f in t:
            ck.eq(where, "ddp." + f, num(t.get("iwarp_ddp." + f, "-1")), ddp.get(f, -1))
    for f in ["version", "rsv", "opcode"]:
        ck.eq(where, "rdmap." + f, num(t["iwarp_rdma." + f]), rdmap[f])
    if "inval_stag" in rdmap or "iwarp_rdma.inval_stag" in t:
        ck.eq(where, "inval_stag", num(t.get("iwarp_rdma.inval_stag", "-1")), rdmap.get("inval_stag", -1))
    for f in RR_FIELDS:
        if f in rdmap or "iwarp_rdma." + f in t:
            ck.eq(where, f, num(t.get("iwarp_rdma." + f, "-1")), rdmap.get(f, -1))
    if "term_layer" in rdmap:
        compare_terminate(ck, where, t, rdmap)
    if "atomic" in rdmap:
        a = rdmap["atomic"]
        for f in ATOMIC_FIELDS:
            if a.get("opcode") == 1 and f.startswith(("swap", "compare")):
                continue  # tshark shows no Swap operands and reads compare 16 octets early
            if f in a or "iwarp_rdma.atomic." + f in t:
                ck.eq(where, "atomic." + f, num(t.get("iwarp_rdma.atomic." + f, "-1")), a.get(f, -1))


def compare_terminate(ck, where, t, r):
    layer, etype = r["term_layer"], r["term_etype"]
    ck.eq(where, "term_layer", num(t["iwarp_rdma.term_layer"]), layer)
    etype_field = {0: "term_etype_rdma", 1: "term_etype_ddp", 2: "term_etype_llp"}.get(layer, "term_etype")
    ck.eq(where, etype_field, num(t["iwarp_rdma." + etype_field]), etype)
    if layer == 0:
        err_field = "term_errcode_rdma" if etype else "term_errcode"
    elif layer == 1:
        err_field = {1: "term_errcode_ddp_tagged", 2: "term_errcode_ddp_untagged"}.get(etype, "term_errcode")
    else:
        err_field = "term_errcode" if etype else "term_errcode_llp"
    ck.eq(where, err_field, num(t["iwarp_rdma." + err_field]), r["term_errcode"])
    for f in ["term_hdrct_m", "hdrct_d", "hdrct_r", "term_rsvd"]:
        ck.eq(where, f, num(t["iwarp_rdma." + f]), r[f])
    if r["hdrct_d"]:
        ck.eq(where, "term_ddp_seg_len", num("0x" + t["iwarp_rdma.term_ddp_seg_len"]), r["term_ddp_seg_len"])
        ck.eq(where, "term_ddp_h", t["iwarp_rdma.term_ddp_h"], r["term_ddp_h"][2:])
    if r["hdrct_r"]:
        ck.eq(where, "term_rdma_h", t["iwarp_rdma.term_rdma_h"], rr_bytes(r["term_rdma"]))


def run_case(ck, tmp, name, flags):
    gen = os.path.join(os.environ["TOP_BUILDDIR"], "tests", "iwarp", "gen_iwarp")
    pcap = os.path.join(tmp, "case.pcap")
    subprocess.run([gen] + flags + [pcap], check=True)
    theirs, ours = tshark_frames(pcap), our_frames(pcap)
    seen = set()
    for frame, t in sorted(theirs.items()):
        if "iwarp_mpa.rev" not in t and "iwarp_mpa.ulpdulength" not in t:
            continue
        where = f"{name}, frame {frame}"
        objs = ours.get(frame, [])
        ck.eq(where, "one PDU in the frame", len(objs), 1)
        if len(objs) != 1:
            continue
        o = objs[0]
        ck.eq(where, "no error", o.get("error"), None)
        opcode = num(t["iwarp_rdma.opcode"]) if "iwarp_rdma.opcode" in t else None
        seen.add(opcode)
        if "iwarp_mpa.rev" in t:
            compare_mpa_frame(ck, where, t, o["mpa"])
        else:
            compare_fpdu(ck, where, t, o)
    # tshark must have seen the handshake and every RDMAP opcode.
    ck.eq(name, "opcodes tshark decoded", sorted(x for x in seen if x is not None), list(range(12)))
    ck.eq(name, "MPA Request and Reply", None in seen, True)


def main():
    if not shutil.which("tshark"):
        print("tshark not installed: skipped")
        return 77
    ck = Checker()
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in CASES:
            run_case(ck, tmp, name, flags)
    print(f"iwarp tshark: {ck.passed} passed, {ck.failed} failed")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    script_limit(300)
    sys.exit(main())
