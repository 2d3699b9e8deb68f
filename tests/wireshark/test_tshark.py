#!/usr/bin/python3
"""test_tshark.py - rdmasim decode against tshark, field by field.

Writes the corpus with make_corpus (every opcode, header and link type the
codec knows), then for each corpus file and each capture in pcaps/real/
decodes every frame twice: with `tshark -T json` and with
`rdmasim decode --json`. Every field tshark shows in the layers the codec
covers (Ethernet, 802.1Q/802.1ad, Linux cooked, ERF, IPv4, IPv6, UDP, MAC
Control, InfiniBand) must equal ours, and every field of ours must be one
tshark showed, unless a table below says why not. tshark must also report no
malformed packet and no expert error for any frame make_corpus wrote.

rdmasim's JSON uses Wireshark's field names without the protocol prefix
(infiniband.bth.psn is bth.psn), so a field whose names agree that way needs
no entry; fields whose names or units differ are in RULES. Where tshark 4.0
is wrong, LIMITATIONS says so, and what can still be checked is checked.

Environment (set by `make check`): RDMASIM, TOP_SRCDIR, TOP_BUILDDIR.
Exit status: 0 all equal, 1 a difference, 77 tshark not installed (skip),
99 the test could not run.
"""
import glob
import ipaddress
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable
sys.path.insert(0, os.path.join(os.environ.get("TOP_SRCDIR", "."), "tests"))
from testlib import script_limit  # noqa: E402

SKIP = 77
HARD_ERROR = 99
MAX_REPORTED = 40
PI_ERROR = 0x00800000  # expert severity "error" (Wireshark epan/proto.h)
ROCEV2_PORT = 4791
LINKTYPE_INFINIBAND = 247
LINKTYPE_USER0 = 147

# ---- how tshark is run -------------------------------------------------------
# Heuristic sub-dissectors that would claim InfiniBand payloads (and CM
# private data) as another protocol. `tshark -G heuristic-decodes` lists them
# by table and protocol but --disable-heuristic wants their internal names,
# which only the dissector sources give; an entry missing here fails the test.
HEURISTICS = {
    ("infiniband.payload", "smc"): "smcr_infiniband",
    ("infiniband.payload", "smb_direct"): "smb_direct_infiniband",
    ("infiniband.payload", "rpcordma"): "rpcrdma_infiniband",
    ("infiniband.payload", "nvme-rdma"): "nvme_rdma",
    ("infiniband.payload", "lnet"): "lnet_ib",
    ("infiniband.payload", "iser"): "iser_infiniband",
    ("infiniband.payload", "ethertype"): "eth_over_ib",
    ("infiniband.payload", "infiniband.eoib"): "mellanox_eoib",
    ("infiniband.payload", "infiniband_sdp"): "sdp_infiniband",
    ("infiniband.payload", "fcoib"): "fc_infiniband",
    ("infiniband.payload", "drbd"): "drbd_rdma",
    ("infiniband.mad.cm.private", "nvme-rdma"): "nvme_rdma_cm_private",
    ("infiniband.mad.cm.private", "lnet"): "lnet_ib_cm_private",
    ("infiniband.mad.cm.private", "iser"): "iser_ib_private",
    ("infiniband.mad.cm.private", "infiniband_sdp"): "sdp_ib_private",
}

# Verify IPv4 and UDP checksums, so that checksum.status is a verdict.
PREFERENCES = ["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"]

# tshark 4.0 reads no LINKTYPE_INFINIBAND (247) pcap; the same bytes under
# USER0 with this table entry go to its InfiniBand dissector.
USER_DLT_INFINIBAND = 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'

# ---- tshark's values ---------------------------------------------------------


def canon(text):
    """Addresses compared as addresses, not as spellings; other text in
    lower case."""
    try:
        return ipaddress.ip_address(text).exploded
    except ValueError:
        return text.lower()


def ts_value(text):
    """A tshark display string as an int (decimal or 0x hex) or text."""
    if re.fullmatch(r"0x[0-9a-fA-F]+", text):
        return int(text, 16)
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return canon(text)


def ts_bytes(text):
    """A byte-string field ("0a:1b:2c", or "0a" for one byte) as bytes."""
    return bytes.fromhex(text.replace(":", ""))


def ts_be(text):
    """A byte-string field that rdmasim holds as a big-endian integer."""
    return int.from_bytes(ts_bytes(text), "big")


# Fields named alike in several headers: they are keyed "container:field",
# the container being the header tree (or layer) they sit in.
QUALIFIED = {
    "infiniband.reserved", "infiniband.reth.va", "infiniband.reth.r_key",
    "infiniband.immdt", "infiniband.ieth", "infiniband.vendor", "ip.version",
}
BYTES_RE = re.compile(r"[0-9a-f]{2}(:[0-9a-f]{2})+")  # two bytes or more


@dataclass
class TsharkFrame:
    fields: dict        # key -> list of display strings, in tree order
    layer: dict         # key -> the protocol layer it belongs to
    severities: list    # expert item severities
    malformed: bool = False


def walk(node, layer, container, out):
    for key, value in node.items():
        for item in value if isinstance(value, list) else [value]:
            if key == "_ws.expert":
                out.severities.extend(as_values(item.get("_ws.expert.severity")))
            elif key == "_ws.malformed":
                out.malformed = True
            elif isinstance(item, dict):
                walk(item, layer or key, key[:-5] if key.endswith("_tree") else key, out)
            elif key.startswith("infiniband.") and f"{key}_tree" in node \
                    and BYTES_RE.fullmatch(item):
                pass  # an InfiniBand header's bytes; its fields follow in its tree
            else:
                name = f"{container}:{key}" if key in QUALIFIED else key
                out.fields.setdefault(name, []).append(item)
                out.layer[name] = layer


def tshark_frames(path, options):
    frames = []
    for packet in json.loads(run(tshark_command(path, options))):
        frame = TsharkFrame({}, {}, [])
        walk(packet["_source"]["layers"], "", "", frame)
        frames.append(frame)
    return frames


# ---- rdmasim's values --------------------------------------------------------
FRAME_MEMBERS = {"frame", "file", "ts", "len", "caplen", "proto", "error", "truncated_in"}
IB_HEADERS = {"lrh", "grh", "bth", "rdeth", "deth", "xrceth", "reth", "atomiceth",
              "aeth", "atomicacketh", "immdt", "ieth", "mad", "cm"}
# The headers this test covers; any other is listed as not compared.
SCOPE = {"eth", "vlan", "sll", "sll2", "erf", "pfc", "pause", "ip", "ipv6", "udp",
         "payload_len", "icrc", "vcrc"} | IB_HEADERS
# Extended transport header sizes (IBA vol. 1, 9.3), for tshark's raw blocks.
EXT_SIZES = {"rdeth": 4, "deth": 8, "xrceth": 4, "reth": 16, "atomiceth": 28,
             "aeth": 4, "atomicacketh": 8, "immdt": 4, "ieth": 4}


def our_keys(obj):
    """Every field of one rdmasim JSON frame as "header.field"; CM fields as
    "cm.<message>.field", the way tshark names them."""
    keys = set()
    for header, value in obj.items():
        if header in FRAME_MEMBERS:
            continue
        if header == "cm":
            msg = value["msg"].lower()
            keys.update(f"cm.{msg}.{k}" for k in value if k != "msg")
        elif header == "vlan":
            keys.update(f"vlan.{k}" for tag in value for k in tag)
        elif isinstance(value, dict):
            keys.update(f"{header}.{k}" for k in value)
        else:
            keys.add(header)
    return keys


def number(value):
    """64-bit values and CRCs, which rdmasim writes as hex strings as tshark
    shows them, as numbers."""
    if isinstance(value, str) and re.fullmatch(r"0x[0-9a-f]+", value):
        return int(value, 16)
    return value


def get(obj, header, name):
    value = obj.get(header, {}).get(name)
    return value if header == "erf" else number(value)


def cm_field(obj, msg, name):
    cm = obj.get("cm")
    return number(cm.get(name)) if cm and cm["msg"].lower() == msg else None


def tags(obj, tpid):
    """The VLAN tags of a frame that follow the given tag protocol ID."""
    result, prev = [], outer_type(obj)
    for tag in obj.get("vlan", []):
        if prev == tpid:
            result.append(tag)
        prev = tag["etype"]
    return result


def outer_type(obj):
    for header, name in (("eth", "type"), ("sll", "etype"), ("sll2", "etype")):
        if header in obj:
            return obj[header][name]
    return None


def cooked(obj):
    return obj.get("sll") or obj.get("sll2") or {}


def mac_control(obj):
    return obj.get("pfc") or obj.get("pause") or {}


# ---- the mapping table -------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    covers: tuple               # rdmasim fields this tshark field checks
    expect: Callable            # rdmasim JSON frame -> value, list of values or None
    parse: Callable = ts_value  # tshark display string -> comparable value


def same(key, convert=lambda v: v, parse=ts_value):
    """A tshark field equal to rdmasim's `key` ("header.field"), after convert."""
    header, _, name = key.partition(".")

    def expect(obj):
        value = get(obj, header, name)
        return None if value is None else convert(value)
    return Rule((key,), expect, parse)


def bits(key, shift, width=1):
    return same(key, lambda v: v >> shift & ((1 << width) - 1))


def each_tag(tpid, name):
    return Rule((f"vlan.{name}",), lambda o: [t[name] for t in tags(o, tpid)])


def udp_checksum_status(obj):
    if "udp" not in obj:
        return None
    if obj["udp"]["checksum"]:
        return 1
    return 4 if "ipv6" in obj else 3


def ipv4_of_gid(gid):
    if gid is None:
        return None
    return str(ipaddress.IPv4Address(ipaddress.IPv6Address(gid).packed[12:]))


AETH_KINDS = {"ACK": 0, "RNR NAK": 1, "Reserved": 2, "NAK": 3}

RULES = {
    # 802.1Q tags are vlan.*; an 802.1ad (0x88a8) service tag is
    # ieee8021ad.*, its EtherType borrowed from 802.1ah.
    **{f"vlan.{n}": each_tag(0x8100, n) for n in ("priority", "dei", "id", "etype")},
    **{f"ieee8021ad.{n}": each_tag(0x88a8, n) for n in ("priority", "dei", "id")},
    "ieee8021ah.etype": each_tag(0x88a8, "etype"),
    # Linux cooked v1 and v2 share tshark's sll.* names. Our sll.src holds
    # the 8-byte address field: the MAC, then unused bytes.
    **{f"sll.{n}": Rule((f"sll.{n}", f"sll2.{n}"), lambda o, n=n: cooked(o).get(n))
       for n in ("pkttype", "hatype", "halen", "etype")},
    "sll.ifindex": same("sll2.ifindex"),
    "sll.src.eth": Rule(("sll.src", "sll2.src"),
                        lambda o: cooked(o).get("src", "")[:17] or None),
    "sll.unused": Rule(("sll.src", "sll2.src"),
                       lambda o: ts_bytes(cooked(o)["src"])[6:] if cooked(o) else None,
                       ts_bytes),
    # ERF: the timestamp is little-endian on the wire (rdmasim shows its
    # bytes); the record type and flags are split into bits.
    "erf.ts": same("erf.ts", lambda v: int.from_bytes(bytes.fromhex(v[2:]), "little")),
    "erf.types": same("erf.type"),
    "erf.types.type": bits("erf.type", 0, 7),
    "erf.types.ext_header": bits("erf.type", 7),
    "erf.flags.cap": bits("erf.flags", 0, 2),
    "erf.flags.vlen": bits("erf.flags", 2),
    "erf.flags.trunc": bits("erf.flags", 3),
    "erf.flags.rxe": bits("erf.flags", 4),
    "erf.flags.dse": bits("erf.flags", 5),
    "erf.flags.res": bits("erf.flags", 6, 2),
    # IPv4: tshark gives the header length in bytes, ours (ihl) in words.
    "ip:ip.version": same("ip.version"),
    "ip.hdr_len": same("ip.ihl", lambda v: v * 4),
    "ip.dsfield": Rule(("ip.dsfield_dscp", "ip.dsfield_ecn"),
                       lambda o: o["ip"]["dsfield_dscp"] << 2 | o["ip"]["dsfield_ecn"]
                       if "ip" in o else None),
    "ip.dsfield.dscp": same("ip.dsfield_dscp"),
    "ip.dsfield.ecn": same("ip.dsfield_ecn"),
    "ip.flags.rb": bits("ip.flags", 2),
    "ip.flags.df": bits("ip.flags", 1),
    "ip.flags.mf": bits("ip.flags", 0),
    # checksum.status: 1 good, 0 bad (tshark's PROTO_CHECKSUM_E_*).
    "ip.checksum.status": same("ip.checksum_ok", int),
    # IPv6 puts ip.version in its layer too; tclass is split like dsfield.
    "ipv6:ip.version": same("ipv6.version"),
    "ipv6.tclass.dscp": bits("ipv6.tclass", 2, 6),
    "ipv6.tclass.ecn": bits("ipv6.tclass", 0, 2),
    # 1: the checksum the sender computed is good; 3: none (0), which IPv4
    # allows; 4: "illegal", a zero checksum over IPv6 (RFC 8200, 8.1).
    "udp.checksum.status": Rule(("udp.checksum",), udp_checksum_status),
    # 802.3x PAUSE and 802.1Qbb PFC (macc.cbfc.* per priority class).
    "macc.opcode": Rule(("pfc.opcode", "pause.opcode"), lambda o: mac_control(o).get("opcode")),
    "macc.pause_time": same("pause.pause_time"),
    "macc.cbfc.enbv": same("pfc.enbv"),
    **{f"macc.cbfc.enbv.c{i}": bits("pfc.enbv", i) for i in range(8)},
    **{f"macc.cbfc.pause_time.c{i}": same("pfc.pause_time", lambda v, i=i: v[i])
       for i in range(8)},
    # BTH byte 4 is one reserved byte to tshark 4.0: FECN, BECN, 6 reserved bits.
    "infiniband.bth:infiniband.reserved": Rule(
        ("bth.fecn", "bth.becn", "bth.reserved6"),
        lambda o: o["bth"]["fecn"] << 7 | o["bth"]["becn"] << 6 | o["bth"]["reserved6"]
        if "bth" in o else None, ts_be),
    "infiniband.rdeth:infiniband.reserved": same("rdeth.reserved", parse=ts_be),
    "infiniband.deth:infiniband.reserved": same("deth.reserved", parse=ts_be),
    "infiniband.mad:infiniband.reserved": same("mad.reserved", parse=ts_be),
    # The AtomicETH reuses the RETH's VA and R_Key fields.
    "infiniband.reth:infiniband.reth.va": same("reth.va"),
    "infiniband.reth:infiniband.reth.r_key": same("reth.r_key"),
    "infiniband.atomiceth:infiniband.reth.va": same("atomiceth.va"),
    "infiniband.atomiceth:infiniband.reth.r_key": same("atomiceth.r_key"),
    # AETH syndrome (IBA 9.7.5.1): bit 7 reserved, 6-5 kind, 4-0 value
    # whose name depends on the kind.
    "infiniband.aeth.syndrome.reserved": bits("aeth.syndrome", 7),
    "infiniband.aeth.syndrome.opcode": same("aeth.kind", AETH_KINDS.get),
    "infiniband.aeth.syndrome.credit_count": same("aeth.credit_count"),
    "infiniband.aeth.syndrome.timer": same("aeth.timer"),
    "infiniband.aeth.syndrome.error_code": same("aeth.error_code"),
    "infiniband.aeth.syndrome.reserved_value": bits("aeth.syndrome", 0, 5),
    # Immediate data and the invalidated R_Key are bytes to tshark.
    "infiniband.immdt:infiniband.immdt": same("immdt.imm", parse=ts_be),
    "infiniband.ieth:infiniband.ieth": same("ieth.r_key", parse=ts_be),
    # tshark 4.0 checks neither CRC and reads both big-endian.
    "infiniband.invariant.crc": same("icrc.value"),
    "infiniband.variant.crc": same("vcrc.value"),
    # Payload no dissector claims is data; tshark counts the pad in it.
    "data.len": Rule(("payload_len",),
                     lambda o: o["payload_len"] + o["bth"]["padcnt"] if "bth" in o else None),
    # CM (IBA 12.6): the REQ and REP local communication IDs are named after
    # the message, DREP is "drsp", and the DREQ's remote QPN/EECN carries a
    # REQ name in tshark 4.0.
    "infiniband.cm.req": Rule(("cm.req.localcommid",),
                              lambda o: cm_field(o, "req", "localcommid")),
    "infiniband.cm.rep": Rule(("cm.rep.localcommid",),
                              lambda o: cm_field(o, "rep", "localcommid")),
    "infiniband.cm.drsp.localcommid": Rule(("cm.drep.localcommid",),
                                           lambda o: cm_field(o, "drep", "localcommid")),
    "infiniband.cm.drsp.remotecommid": Rule(("cm.drep.remotecommid",),
                                            lambda o: cm_field(o, "drep", "remotecommid")),
    "infiniband.cm.req.remoteqpneecn": Rule(("cm.dreq.remoteqpneecn",),
                                            lambda o: cm_field(o, "dreq", "remoteqpneecn")),
    # Over RoCEv2/IPv4 tshark shows a REQ's GIDs as the IPv4 address in
    # their last four bytes.
    **{f"infiniband.cm.req.prim_{side}gid_ipv4": Rule(
        (f"cm.req.prim_{side}gid",),
        lambda o, side=side: ipv4_of_gid(cm_field(o, "req", f"prim_{side}gid")))
       for side in ("local", "remote")},
}


def default_rule(key):
    """Names that agree: tshark's, less "infiniband.", is rdmasim's."""
    name = key.split(":")[-1]
    name = name[len("infiniband."):] if name.startswith("infiniband.") else name
    header, _, rest = name.partition(".")
    if header == "cm":
        msg, _, field = rest.partition(".")
        return Rule((name,), lambda o: cm_field(o, msg, field))
    return same(name)


# tshark fields that are not compared, by prefix, and why.
NOT_COMPARED = {
    ("eth.dst_resolved", "eth.src_resolved", "eth.addr", "eth.dst.", "eth.src.",
     "eth.lg", "eth.ig"): "name resolution and address bits derived from eth.dst/eth.src",
    ("eth.padding",): "Ethernet padding up to 60 bytes, which rdmasim does not report",
    ("ip.addr", "ip.host", "ip.src_host", "ip.dst_host", "ipv6.addr", "ipv6.host",
     "ipv6.src_host", "ipv6.dst_host", "udp.port"): "copies of the source and destination",
    ("ip.checksum_calculated", "udp.checksum_calculated"):
        "tshark's own sum; its verdict, checksum.status, is compared",
    ("udp.stream", "udp.time_", "udp.payload"): "conversation bookkeeping and raw bytes",
    ("ipv6.hopopts", "ipv6.opt"): "IPv6 extension headers, which the codec does not decode",
    ("data.data",): "payload bytes; their length (data.len) is compared",
    ("infiniband.mad.data", "infiniband.smplid.smpdata"):
        "the MAD data block; the CM message in it is compared field by field",
    ("infiniband.cm.req.prim_flowlabel", "infiniband.cm.req.prim_reserved",
     "infiniband.cm.req.prim_pktrate", "infiniband.cm.req.prim_tfcclass",
     "infiniband.cm.req.prim_hoplim", "infiniband.cm.req.prim_sl",
     "infiniband.cm.req.prim_subnetlocal", "infiniband.cm.req.prim_localacktout",
     "infiniband.cm.req.alt_", "infiniband.cm.rep.reserved", "infiniband.cm.rej.reserved",
     "infiniband.cm.rej.ari", "infiniband.smplid.smpdata:infiniband.reserved"):
        "CM path, alternate path and reserved fields the codec does not decode",
    ("infiniband.cm.req.private", "infiniband.cm.rep.private", "infiniband.cm.rtu.private",
     "infiniband.cm.rej.private", "infiniband.cm.dreq.private", "infiniband.cm.drsp.private",
     "infiniband.cm.req.ip_cm", "infiniband.cm.req.serviceid."):
        "CM private data (and the RDMA IP CM service in it), opaque to the codec",
    ("infiniband.smpdirected", "infiniband.smplid.", "infiniband.sminfo", "infiniband.sa.",
     "infiniband.pathrecord", "infiniband.rmpp", "infiniband.classportinfo"):
        "MAD classes other than CM: the codec decodes their common MAD header only",
    ("infiniband.rwh", "infiniband.payload"):
        "raw and IPoIB payload, which the codec keeps as bytes",
}

# rdmasim fields tshark does not always show, and why; compared where it does.
OPTIONAL_OURS = {
    ("bth.opcode_name",): "a name; tshark's opcode number is compared",
    ("aeth.timer_us", "aeth.error"): "the RNR delay and NAK name, derived from the syndrome",
    ("ip.checksum_ok",): "compared as ip.checksum.status",
    ("icrc.ok", "vcrc.ok"): "tshark 4.0 verifies neither CRC",
    ("sll2.reserved",): "tshark 4.0 does not show the SLL2 reserved field",
    ("payload_len",): "tshark shows it (data.len) only for payload no dissector claims",
}

COMPARED_LAYERS = {"eth", "vlan", "ieee8021ad", "sll", "erf", "ip", "ipv6", "udp",
                   "macc", "infiniband", "data"}


def not_compared(key):
    for prefixes, reason in NOT_COMPARED.items():
        if key.startswith(prefixes):
            return reason
    return None


def optional_ours(key):
    return any(key.startswith(p) for prefixes in OPTIONAL_OURS for p in prefixes)


# ---- where tshark 4.0 is wrong ---------------------------------------------
def first(ts, key):
    """The first value of a tshark field, "" (no bytes) if it is absent."""
    return ts.fields.get(key, [""])[0]


def vendor_block_checks(ts, obj):
    """An opcode tshark does not know leaves everything after the BTH, CRCs
    included, in one infiniband.vendor block: check its length, the XRCETH
    at its start and the CRCs at its end."""
    block = ts_bytes(first(ts, "infiniband.vendor:infiniband.vendor"))
    ext = sum(size for header, size in EXT_SIZES.items() if header in obj)
    vcrc = 2 if "vcrc" in obj else 0
    icrc_at = len(block) - vcrc - 4
    checks = [("infiniband.vendor length", len(block),
               ext + obj["payload_len"] + obj["bth"]["padcnt"] + 4 + vcrc),
              ("ICRC in infiniband.vendor", int.from_bytes(block[icrc_at:icrc_at + 4], "big"),
               get(obj, "icrc", "value"))]
    if vcrc:
        checks.append(("VCRC in infiniband.vendor", int.from_bytes(block[-2:], "big"),
                       get(obj, "vcrc", "value")))
    if "xrceth" in obj:
        checks += [("XRCETH reserved in infiniband.vendor byte 0", block[0],
                    obj["xrceth"]["reserved"]),
                   ("XRCETH XRC SRQ in infiniband.vendor bytes 1-3",
                    int.from_bytes(block[1:4], "big"), obj["xrceth"]["xrcsrq"])]
    return checks


def mra_checks(ts, obj):
    data = ts_bytes(first(ts, "infiniband.mad.data"))
    return [("MRA local comm ID in MAD data bytes 0-3", int.from_bytes(data[0:4], "big"),
             obj["cm"]["localcommid"]),
            ("MRA remote comm ID in MAD data bytes 4-7", int.from_bytes(data[4:8], "big"),
             obj["cm"]["remotecommid"])]


def opcode(obj):
    return obj["bth"]["opcode"] if "bth" in obj else None


AFTER_BTH_OURS = tuple(f"{h}." for h in EXT_SIZES) + ("payload_len", "icrc.value", "vcrc.value")
AFTER_BTH_TSHARK = tuple(f"infiniband.{h}" for h in EXT_SIZES) + (
    "infiniband.vendor", "infiniband.mad", "infiniband.cm", "infiniband.smplid",
    "infiniband.payload", "data.")


@dataclass
class Limitation:
    name: str
    text: str
    applies: Callable           # rdmasim JSON frame -> bool
    ours_hidden: tuple = ()     # our fields tshark cannot show on these frames
    tshark_unusable: tuple = () # tshark fields (prefixes) not compared one by one
    checks: Callable = None     # (tshark frame, our frame) -> [(what, tshark, ours)]
    malformed_ok: bool = False


LIMITATIONS = [
    Limitation("CRC", "it verifies neither ICRC nor VCRC and shows them read big-endian "
               "(infiniband.invariant.crc, infiniband.variant.crc); compared byte-swapped",
               lambda o: "icrc" in o or "vcrc" in o),
    Limitation("CNP", "CNP (opcode 0x81) is an unknown opcode to it: the 16 reserved bytes and "
               "the ICRC are shown as infiniband.vendor; checked: the BTH, that block's "
               "length and the ICRC in it",
               lambda o: opcode(o) == 0x81,
               AFTER_BTH_OURS, ("infiniband.vendor",), vendor_block_checks),
    Limitation("XRC", "it does not know the XRC opcodes (0xa0-0xb7): everything after the BTH is "
               "shown as infiniband.vendor; checked: the BTH, that block's length, the "
               "XRCETH at its start and the ICRC at its end",
               lambda o: opcode(o) is not None and 0xa0 <= opcode(o) <= 0xb7,
               AFTER_BTH_OURS, ("infiniband.vendor",), vendor_block_checks),
    Limitation("RD", "it parses RD opcodes (0x40-0x5f) as DCT: 8 more bytes are taken into the "
               "BTH, so RDETH, DETH and what follows are read 8 bytes late and short "
               "packets end malformed; checked: everything up to the BTH, and the ICRC "
               "and VCRC where it still finds them",
               lambda o: opcode(o) is not None and 0x40 <= opcode(o) <= 0x5f,
               AFTER_BTH_OURS, AFTER_BTH_TSHARK, None, True),
    Limitation("MRA", "it does not decode the CM MRA message; checked: the communication IDs at "
               "the start of the MAD data",
               lambda o: o.get("cm", {}).get("msg") == "MRA", ("cm.mra.",), (), mra_checks),
]


# ---- comparing ---------------------------------------------------------------
@dataclass
class Report:
    files: int = 0
    frames: int = 0
    rdma_frames: int = 0
    fields: int = 0

    def __post_init__(self):
        self.problems = []  # (where, field, what is wrong)
        self.limited = {}   # limitation name -> {file name: [frame numbers]}
        self.unscoped = {}  # rdmasim header this test does not cover -> field count

    def compare(self, where, field, tshark, ours):
        self.fields += 1
        if tshark != ours:
            self.problem(where, field, f"tshark {tshark!r}, rdmasim {ours!r}")

    def problem(self, where, field, text):
        self.problems.append((where, field, text))


def as_values(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def one_or_list(values):
    return values[0] if len(values) == 1 else values


def our_value(value):
    return canon(value) if isinstance(value, str) else value


def compare_fields(report, where, ts, obj, layers, unusable):
    """Every tshark field against ours; returns the rdmasim fields covered."""
    covered = set()
    for key, texts in ts.fields.items():
        if ts.layer[key] not in layers or key.startswith(unusable) or not_compared(key):
            continue
        rule = RULES.get(key) or default_rule(key)
        expected = [our_value(v) for v in as_values(rule.expect(obj))]
        got = [rule.parse(t) for t in texts]
        # "(absent)": a header rdmasim did not decode, or a field missing from
        # RULES and NOT_COMPARED.
        ours = one_or_list(expected) if expected else "(absent)"
        report.compare(where, key, one_or_list(got), ours)
        covered.update(rule.covers)
    return covered


def compare_frame(report, path, number, ts, obj, written):
    name = os.path.basename(path)
    where = f"{name} frame {number}"
    limits = [lim for lim in LIMITATIONS if lim.applies(obj)]
    for lim in limits:
        report.limited.setdefault(lim.name, {}).setdefault(name, []).append(number)
    layers = COMPARED_LAYERS if "bth" in obj else COMPARED_LAYERS - {"data"}
    unusable = tuple(p for lim in limits for p in lim.tshark_unusable)
    covered = compare_fields(report, where, ts, obj, layers, unusable)
    for lim in limits:
        for what, tshark, ours in lim.checks(ts, obj) if lim.checks else []:
            report.compare(where, what, tshark, ours)
    hidden = tuple(p for lim in limits for p in lim.ours_hidden)
    for key in sorted(our_keys(obj) - covered):
        header = key.split(".")[0]
        if header not in SCOPE:
            report.unscoped[header] = report.unscoped.get(header, 0) + 1
        elif not optional_ours(key) and not key.startswith(hidden):
            report.compare(where, key, "(not shown)", our_field(obj, key))
    if written:
        check_verdicts(report, where, ts, obj, limits)


def our_field(obj, key):
    """The value of one of our_keys()."""
    header, _, name = key.partition(".")
    value = obj[header]
    if header == "cm":
        name = name.split(".", 1)[1]
    if header == "vlan":
        return [tag[name] for tag in value]
    return value[name] if name else value


def check_verdicts(report, where, ts, obj, limits):
    """Frames make_corpus wrote must be clean to both decoders."""
    if "error" in obj:
        report.problem(where, "rdmasim decode", f"reports {obj['error']!r}")
    if any(lim.malformed_ok for lim in limits):
        return
    if ts.malformed:
        report.problem(where, "_ws.malformed", "tshark reports a malformed packet")
    errors = [s for s in ts.severities if int(s) >= PI_ERROR]
    if errors:
        report.problem(where, "_ws.expert.severity", f"tshark reports {len(errors)} expert errors")


# ---- running the tools -------------------------------------------------------
def fail(message):
    print(message, file=sys.stderr)
    sys.exit(HARD_ERROR)


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(cmd)}: exit status {result.returncode}\n{result.stderr}")
    return result.stdout


def heuristic_options():
    """--disable-heuristic for every heuristic on an InfiniBand table."""
    options = []
    for line in run(["tshark", "-G", "heuristic-decodes"]).splitlines():
        table, proto, _ = line.split("\t")
        if not table.startswith("infiniband"):
            continue
        name = HEURISTICS.get((table, proto))
        if name is None:
            fail(f"tshark has an unknown heuristic '{proto}' on '{table}': "
                 "add its internal name to HEURISTICS")
        options += ["--disable-heuristic", name]
    return options


def tshark_command(path, options):
    return ["tshark", "-r", path, "-T", "json", "--no-duplicate-keys"] + options


def rdmasim_frames(rdmasim, path):
    return [json.loads(line) for line in run([rdmasim, "decode", "--json", path]).splitlines()]


def decode_as_options(frames):
    """tshark tries the lower UDP port first: RoCEv2 frames from a source
    port below 4791 go to whatever owns that port (69 is TFTP) unless the
    port is decoded as InfiniBand."""
    ports = {f["udp"]["srcport"] for f in frames
             if f.get("proto") == "RoCEv2" and f["udp"]["srcport"] < ROCEV2_PORT}
    return [opt for port in sorted(ports) for opt in ("-d", f"udp.port=={port},infiniband")]


def pcap_linktype(path):
    """The link type and byte order of a classic pcap file; None for pcapng."""
    with open(path, "rb") as f:
        header = f.read(24)
    if len(header) < 24:
        return None, None
    for order in ("<", ">"):
        magic, linktype = struct.unpack(order + "I16xI", header)
        if magic in (0xa1b2c3d4, 0xa1b23c4d):  # microsecond, nanosecond
            return linktype, order
    return None, None


def tshark_readable(path, scratch):
    """The file tshark reads for `path`, and the options it then needs."""
    linktype, order = pcap_linktype(path)
    if linktype != LINKTYPE_INFINIBAND:
        return path, []
    print(f"tshark 4.0 limitation: it reads no LINKTYPE_INFINIBAND (247) pcap; "
          f"{os.path.basename(path)} is given to it as USER0 (147) mapped to its "
          "InfiniBand dissector, the frames unchanged")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    struct.pack_into(order + "I", data, 20, LINKTYPE_USER0)
    copy = os.path.join(scratch, "user0-" + os.path.basename(path))
    with open(copy, "wb") as f:
        f.write(data)
    return copy, ["-o", USER_DLT_INFINIBAND]


def check_file(report, tools, path, scratch, written):
    rdmasim, options = tools
    ours = rdmasim_frames(rdmasim, path)
    readable, extra = tshark_readable(path, scratch)
    theirs = tshark_frames(readable, options + extra + decode_as_options(ours))
    name = os.path.basename(path)
    report.files += 1
    if len(theirs) != len(ours):
        report.problem(name, "frame count", f"tshark {len(theirs)}, rdmasim {len(ours)}")
    for number, (ts, obj) in enumerate(zip(theirs, ours), 1):
        report.frames += 1
        report.rdma_frames += "bth" in obj
        compare_frame(report, path, number, ts, obj, written)


def make_corpus(scratch):
    tool = os.path.join(os.environ["TOP_BUILDDIR"], "tests", "wireshark", "make_corpus")
    return [line.split()[0] for line in run([tool, scratch]).splitlines()]


def print_report(report):
    for where, field, text in report.problems[:MAX_REPORTED]:
        print(f"DIFF {where}: {field}: {text}")
    if len(report.problems) > MAX_REPORTED:
        print(f"... and {len(report.problems) - MAX_REPORTED} more differences")
    by_field = {}
    for _, field, _ in report.problems:
        by_field[field] = by_field.get(field, 0) + 1
    for field, count in sorted(by_field.items(), key=lambda item: -item[1]):
        print(f"differences in {field}: {count}")
    cases = []
    for lim in LIMITATIONS:
        files = report.limited.get(lim.name, {})
        frames = sum(len(f) for f in files.values())
        if frames:
            where = ", ".join(f"{name} {len(f)} (first: frame {f[0]})" for name, f in files.items())
            print(f"tshark 4.0 limitation ({lim.name}): {lim.text}. Frames: {where}")
            cases.append(f"{lim.name} {frames}")
    for header, count in sorted(report.unscoped.items()):
        print(f"not compared: rdmasim header '{header}' ({count} fields), outside this test")
    print(f"summary: {report.files} files, {report.frames} frames ({report.rdma_frames} "
          f"with a BTH), {report.fields} fields compared, known tshark 4.0 limitation "
          f"cases: {', '.join(cases) or 'none'}; {len(report.problems)} differences")


def main():
    if shutil.which("tshark") is None:
        print("tshark is not installed: skipping the Wireshark comparison")
        return SKIP
    if not all(os.environ.get(v) for v in ("RDMASIM", "TOP_SRCDIR", "TOP_BUILDDIR")):
        fail("RDMASIM, TOP_SRCDIR and TOP_BUILDDIR must be set (make check sets them)")
    tools = (os.environ["RDMASIM"], heuristic_options() + PREFERENCES)
    report = Report()
    with tempfile.TemporaryDirectory(prefix="rdmasim-tshark-") as scratch:
        for path in make_corpus(scratch):
            check_file(report, tools, path, scratch, written=True)
        real = sorted(glob.glob(os.path.join(os.environ["TOP_SRCDIR"], "pcaps", "real", "*.pcap*")))
        for path in real:
            check_file(report, tools, path, scratch, written=False)
    print_report(report)
    return 1 if report.problems else 0


if __name__ == "__main__":
    script_limit(300)
    sys.exit(main())
