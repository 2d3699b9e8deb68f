#!/usr/bin/python3
"""test_replay.py - `rdmasim replay --json` on the real captures, checked
against facts re-derived here from their frames (through `rdmasim decode
--json`), and on crafted captures whose story gen_captures.c (RoCE, PFC)
and gen_iwarp_stories.c (iWARP) tell: each must produce exactly the
conversations, messages and anomalies it was built with.

Environment: RDMASIM (the binary), TOP_SRCDIR, TOP_BUILDDIR.
"""
import json
import os
import subprocess
import sys
import tempfile

RDMASIM = os.environ["RDMASIM"]
TOP_SRCDIR = os.environ.get("TOP_SRCDIR", ".")
TOP_BUILDDIR = os.environ.get("TOP_BUILDDIR", ".")
REAL = os.path.join(TOP_SRCDIR, "pcaps", "real")
sys.path.insert(0, os.path.join(os.environ.get("TOP_SRCDIR", "."), "tests"))
from testlib import script_limit  # noqa: E402
PSN_MOD = 1 << 24

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def replay(path, *opts):
    return json.loads(run([RDMASIM, "replay", "--json", *opts, path]))


def frames(path):
    """Frame number -> decoded frame, with its time in ns since frame 1."""
    out = [json.loads(line) for line in run([RDMASIM, "decode", "--json", path]).splitlines()]
    def ns(ts):
        sec, frac = ts.split(".")
        return int(sec) * 10**9 + int(frac.ljust(9, "0"))
    t0 = ns(out[0]["ts"])
    for f in out:
        f["t"] = ns(f["ts"]) - t0
    return {f["frame"]: f for f in out}


def opname(f):
    return (f.get("bth") or {}).get("opcode_name", "")


def addrs(f):
    ip = f.get("ip") or f.get("ipv6")
    if ip:
        return ip["src"], ip["dst"]
    if f.get("grh"):
        return f["grh"]["sgid"], f["grh"]["dgid"]
    return "LID %d" % f["lrh"]["slid"], "LID %d" % f["lrh"]["dlid"]


def psn_ge(a, b):
    return (a - b) % PSN_MOD < PSN_MOD // 2


def anomaly_table(doc):
    """(kind, detail) -> [count, [frames of each kept occurrence]]"""
    t = {}
    for a in doc["anomalies"]:
        e = t.setdefault((a["kind"], a["detail"]), [0, []])
        e[0] += a["count"]
        e[1] += [ev["frames"] for ev in a["events"]]
    return t


def expected_completion(fr, msg):
    """The frame that completes a SEND/WRITE message, found independently:
    the first acknowledgement or READ response after its last request
    packet, going the other way, whose PSN covers the message's last PSN."""
    last_psn = (msg["psn"] + msg["psn_count"] - 1) % PSN_MOD
    req = fr[msg["last_request_frame"]]
    src, dst = addrs(req)
    for n in range(msg["last_request_frame"] + 1, max(fr) + 1):
        f = fr[n]
        if "aeth" not in f or addrs(f) != (dst, src):
            continue
        kind = f["aeth"]["kind"]
        covered = f["bth"]["psn"] if kind == "ACK" else (f["bth"]["psn"] - 1) % PSN_MOD
        if psn_ge(covered, last_psn):
            return n
    return None


def check_messages_against_frames(name, doc, fr):
    for m in doc["messages"]:
        if m["kind"] == "RDMA READ":
            # the last response packet completes it
            last = m["completion_frame"]
            check(opname(fr[last]).endswith(("READ Response Last", "READ Response Only")),
                  "%s: READ at frame %d completed by a last response" % (name, m["first_frame"]))
            resp = [n for n in range(m["first_frame"] + 1, last + 1) if "READ Response" in opname(fr[n])
                    and psn_ge(fr[n]["bth"]["psn"], m["psn"])]
            check(m["response_packets"] == len(resp), "%s: READ response packets %d" % (name, len(resp)))
            check(m["bytes"] == sum(fr[n]["payload_len"] for n in resp), "%s: READ bytes" % name)
            check(m["bytes"] == int(fr[m["first_frame"]]["reth"]["dmalen"]), "%s: READ bytes = DMA length" % name)
        elif m["status"] == "ok" and m["latency_ns"] is not None:
            check(m["completion_frame"] == expected_completion(fr, m),
                  "%s: message at frame %d completed by frame %s, expected %s"
                  % (name, m["first_frame"], m["completion_frame"], expected_completion(fr, m)))
        if m["latency_ns"] is not None:
            want = fr[m["completion_frame"]]["t"] - fr[m["first_frame"]]["t"]
            check(m["latency_ns"] == max(want, 0),
                  "%s: latency of the message at frame %d: %d, frames say %d"
                  % (name, m["first_frame"], m["latency_ns"], want))


def test_rxe_write_read(name):
    path = os.path.join(REAL, name)
    doc, fr = replay(path), frames(path)
    req = next(f for f in fr.values() if (f.get("cm") or {}).get("msg") == "REQ")
    rep = next(f for f in fr.values() if (f.get("cm") or {}).get("msg") == "REP")
    write = next(f for f in fr.values() if opname(f) == "RC RDMA WRITE Only")
    read = next(f for f in fr.values() if opname(f) == "RC RDMA READ Request")
    # CM: the active side's first request carries the REP's starting PSN
    check(len(doc["connections"]) == 1, name + ": one CM connection")
    c = doc["connections"][0]
    check(c["active"] == req["ip"]["src"] and c["passive"] == req["ip"]["dst"], name + ": CM endpoints")
    check(c["active_qpn"] == req["cm"]["localqpn"] and c["passive_qpn"] == rep["cm"]["localqpn"],
          name + ": CM QPNs")
    check(c["active_start_psn"] == rep["cm"]["startpsn"] == write["bth"]["psn"], name + ": starting PSN")
    check(c["frames"]["req"] == req["frame"] and c["frames"]["rep"] == rep["frame"], name + ": CM frames")
    rc = [v for v in doc["conversations"] if v["transport"] == "RC"]
    check(len(rc) == 1, name + ": one RC conversation")
    v = rc[0]
    check(v["pairing"] == "CM", name + ": paired through CM")
    check(v["a"] == {"address": write["ip"]["src"], "qpn": req["cm"]["localqpn"]}, name + ": end a")
    check(v["b"] == {"address": write["ip"]["dst"], "qpn": rep["cm"]["localqpn"]}, name + ": end b")
    check(write["bth"]["destqp"] == rep["cm"]["localqpn"], name + ": WRITE goes to the passive QP")
    kinds = {m["kind"]: m for m in doc["messages"]}
    check(sorted(kinds) == ["RDMA READ", "RDMA WRITE"] and len(doc["messages"]) == 2, name + ": one WRITE, one READ")
    w, r = kinds["RDMA WRITE"], kinds["RDMA READ"]
    check(w["bytes"] == write["payload_len"] == write["reth"]["dmalen"], name + ": WRITE bytes")
    check(w["first_frame"] == write["frame"] and w["completion_frame"] == write["frame"] + 1, name + ": WRITE frames")
    check(w["remote_address"] == write["reth"]["va"] and w["rkey"] == "0x%08x" % write["reth"]["r_key"],
          name + ": WRITE remote address and key")
    check(r["first_frame"] == read["frame"] and r["response_packets"] == 4 and r["bytes"] == 4096,
          name + ": READ with four response packets")
    check(r["latency_ns"] == fr[r["completion_frame"]]["t"] - read["t"], name + ": READ latency")
    check_messages_against_frames(name, doc, fr)
    check(doc["anomalies"] == [], name + ": no anomalies")
    check(doc["summary"]["frames"] == len(fr) and doc["summary"]["cm_messages"] == 5, name + ": totals")


def test_port69():
    name = "rxe-rocev2-send-port69.pcap"
    path = os.path.join(REAL, name)
    doc, fr = replay(path), frames(path)
    sends = [f for f in fr.values() if "SEND" in opname(f)]
    ends = [f for f in sends if opname(f).endswith("with Immediate")]
    check(len(doc["messages"]) == len(ends) == 35, name + ": one message per SEND ...with Immediate")
    check(all(m["kind"] == "SEND with Immediate" and m["status"] == "ok" for m in doc["messages"]),
          name + ": all SEND with Immediate, acknowledged")
    check(sum(m["bytes"] for m in doc["messages"]) == sum(f["payload_len"] for f in sends), name + ": SEND bytes")
    check(len(doc["conversations"]) == 1, name + ": one conversation")
    v = doc["conversations"][0]
    first, ack = sends[0], next(f for f in fr.values() if opname(f) == "RC Acknowledge")
    # no CM in this capture: the ACK of the first SEND names the other QP
    check(v["pairing"] == "ACK", name + ": paired by ACK")
    ends_seen = {(v["a"]["address"], v["a"]["qpn"]), (v["b"]["address"], v["b"]["qpn"])}
    check(ends_seen == {(first["ip"]["dst"], first["bth"]["destqp"]), (ack["ip"]["dst"], ack["bth"]["destqp"])},
          name + ": QPNs of both ends")
    check(doc["summary"]["other_frames"] == sum(1 for f in fr.values() if f["proto"] == "other"), name + ": other")
    check_messages_against_frames(name, doc, fr)
    check(doc["anomalies"] == [], name + ": no anomalies")


def test_ib_erf():
    name = "ib-native-erf.pcap"
    path = os.path.join(REAL, name)
    doc, fr = replay(path), frames(path)
    reqs = [f for f in fr.values() if (f.get("cm") or {}).get("msg") == "REQ"]
    check(len(doc["connections"]) == len(reqs) == 3, name + ": three CM connections")
    for c in doc["connections"]:
        first = next(f for f in fr.values() if opname(f) == "RC SEND Only" and f["bth"]["destqp"] == c["passive_qpn"])
        check(first["bth"]["psn"] == c["active_start_psn"], name + ": active side starts at the REP PSN")
    rc = [v for v in doc["conversations"] if v["transport"] == "RC"]
    check(len(rc) == 3 and all(v["pairing"] == "CM" for v in rc), name + ": three RC conversations via CM")
    rc_sends = [f for f in fr.values() if opname(f) == "RC SEND Only"]
    ud = [f for f in fr.values() if opname(f) == "UD SEND Only" and "mad" not in f]
    mads = [f for f in fr.values() if "mad" in f]
    msgs = doc["messages"]
    check(sum(1 for m in msgs if m["first_frame"] in {f["frame"] for f in rc_sends}) == len(rc_sends),
          name + ": every RC SEND is a message")
    check(len(msgs) == len(rc_sends) + len(ud), name + ": RC SENDs and UD datagrams, MADs apart")
    check(doc["summary"]["management_frames"] == len(mads), name + ": management datagrams")
    unacked = [n for n, f in fr.items() if opname(f) == "RC SEND Only"
               and not any(opname(g) == "RC Acknowledge" and g["bth"]["psn"] == f["bth"]["psn"] for g in fr.values())]
    t = anomaly_table(doc)
    check(t.get(("missing acknowledgement", "no response"), [0, []])[1] == [[n] for n in unacked],
          name + ": unacknowledged SEND frames %s" % unacked)
    check_messages_against_frames(name, doc, fr)


def test_cx4():
    name = "hw-cx4-cnp-rocev1.pcap"
    path = os.path.join(REAL, name)
    doc, fr = replay(path), frames(path)
    cnp = next(f for f in fr.values() if opname(f) == "CNP")
    t = anomaly_table(doc)
    check(t.get(("CNP", "")) == [1, [[cnp["frame"]]]], name + ": one CNP")
    flows = [fl for v in doc["conversations"] for fl in v["flows"] if fl["cnp"]]
    check(len(flows) == 1, name + ": CNPs on one flow")
    conv = next(v for v in doc["conversations"] if flows[0] in v["flows"])
    check(conv["b"]["qpn"] == cnp["bth"]["destqp"], name + ": CNP to its QP")
    write = next(f for f in fr.values() if opname(f) == "RC RDMA WRITE Only")
    ack = next(f for f in fr.values() if opname(f) == "RC Acknowledge")
    # the ACK names a PSN the WRITE did not use: nothing pairs them
    check(t.get(("missing acknowledgement", "no response"), [0, []])[1] == [[write["frame"]]], name + ": WRITE unacked")
    check(t.get(("response without request", ""), [0, []])[1] == [[ack["frame"]]], name + ": orphan ACK")


def crafted(tmp):
    gen = os.path.join(TOP_BUILDDIR, "tests", "replay", "gen_captures")
    run([gen, tmp])
    docs = {}
    for story in ("gap_gbn", "nak_seq", "rnr", "out_of_order", "pfc_storm", "cnp_burst", "bad_frames"):
        docs[story] = replay(os.path.join(tmp, story + ".pcap"))
    return docs


def expect_anomalies(story, doc, want):
    got = anomaly_table(doc)
    check(got == want, "%s: anomalies\n  got  %s\n  want %s" % (story, sorted(got.items()), sorted(want.items())))


def test_crafted(tmp):
    d = crafted(tmp)
    expect_anomalies("gap_gbn", d["gap_gbn"], {
        ("PSN gap", "requests"): [1, [[3, 4]]],
        ("NAK", "PSN sequence error"): [1, [[6]]],
        ("go-back-N episode", "NAK PSN sequence error"): [1, [[7, 9, 6]]],
        ("retransmitted packets", ""): [3, [[7], [8], [9]]],
    })
    gbn = next(a for a in d["gap_gbn"]["anomalies"] if a["kind"] == "go-back-N episode")
    check((gbn["packets"], gbn["events"][0]["psn"], gbn["events"][0]["psn_end"]) == (3, 103, 105), "gap_gbn: episode")
    msgs = d["gap_gbn"]["messages"]
    check(sorted(m["psn"] for m in msgs) == list(range(100, 106)) and all(m["status"] == "ok" for m in msgs),
          "gap_gbn: six WRITEs acknowledged")
    check([m["completion_frame"] for m in sorted(msgs, key=lambda m: m["psn"])] == [6, 6, 6, 10, 10, 10],
          "gap_gbn: 100-102 acknowledged by the NAK, 103-105 by the ACK")

    expect_anomalies("nak_seq", d["nak_seq"], {
        ("NAK", "PSN sequence error"): [1, [[4, 2]]],
        ("go-back-N episode", "NAK PSN sequence error"): [1, [[5, 6, 4]]],
        ("retransmitted packets", ""): [2, [[5], [6]]],
    })

    expect_anomalies("rnr", d["rnr"], {
        ("RNR NAK", "timer 14"): [1, [[2, 1]]],
        ("go-back-N episode", "RNR NAK"): [1, [[3, 2]]],
        ("retransmitted packets", ""): [1, [[3]]],
    })
    rnr = next(a for a in d["rnr"]["anomalies"] if a["kind"] == "RNR NAK")
    check(rnr["value_max"] == 1280000, "rnr: timer 14 is 1.28 ms (IBA table 45)")
    gbn = next(a for a in d["rnr"]["anomalies"] if a["kind"] == "go-back-N episode")
    check(gbn["value_max"] == 1280000, "rnr: retried 1.28 ms after the RNR NAK")
    m = d["rnr"]["messages"]
    check(len(m) == 1 and m[0]["completion_frame"] == 4 and m[0]["retransmitted_packets"] == 1
          and m[0]["latency_ns"] == 1290000, "rnr: one SEND, frames 1 to 4")

    expect_anomalies("out_of_order", d["out_of_order"], {
        ("out-of-order response", ""): [3, [[7, 6], [8, 7], [9, 8]]],
        ("missing acknowledgement", "no response"): [1, [[10]]],
    })
    by_kind = {}
    for m in d["out_of_order"]["messages"]:
        by_kind.setdefault(m["kind"], []).append(m)
    check(sorted((m["bytes"], m["completion_frame"]) for m in by_kind["RDMA READ"]) == [(1000, 6), (2048, 8)],
          "out_of_order: two READs")
    check([(m["bytes"], m["completion_frame"], m["latency_ns"]) for m in by_kind["SEND"]] == [(2148, 6, 11000)],
          "out_of_order: the SEND, acknowledged by the READ response's AETH")
    check([m["status"] for m in by_kind["RDMA WRITE"]] == ["no acknowledgement"], "out_of_order: the last WRITE")

    expect_anomalies("pfc_storm", d["pfc_storm"], {
        ("PFC pause", "priority 3"): [100, [[n] for n in range(1, 17)]],
        ("PFC pause", "priority 5"): [1, [[102]]],
    })
    pfc = {p["priority"]: p for p in d["pfc_storm"]["pfc"]}
    check((pfc[3]["frames"], pfc[3]["resume_frames"], pfc[3]["paused_ns"]) == (101, 1, 1040000),
          "pfc_storm: priority 3 paused from frame 1 to the resume at frame 101")
    check(pfc[3]["requested_ns"] == 100 * (65535 * 512 * 10**9 // 10**11), "pfc_storm: 100 x 65535 quanta at 100 Gb/s")
    check(pfc[5]["paused_ns"] == 5120, "pfc_storm: 1000 quanta at 100 Gb/s is 5.12 us")
    # the text row says the time paused, as --json does, beside the requested sum
    text = run([RDMASIM, "replay", os.path.join(tmp, "pfc_storm.pcap")])
    check("1.04 ms paused (" in text and "5.12 us paused (" in text, "pfc_storm: text gives the time paused")
    for opt, bare in (("--interval", "5"), ("--link-speed", "25")):
        p = subprocess.run([RDMASIM, "replay", opt, bare, os.path.join(tmp, "pfc_storm.pcap")],
                           capture_output=True, text=True)
        check(p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1
              and "write a number and one of" in p.stderr
              and "--help" in p.stderr, f"{opt} {bare} without a unit is refused in one line: {p.stderr!r}")
    slow = replay(os.path.join(tmp, "pfc_storm.pcap"), "--link-speed", "25Gbps")
    check({p["priority"]: p["paused_ns"] for p in slow["pfc"]} == {3: 1040000, 5: 20480},
          "pfc_storm: at 25 Gb/s the same 1000 quanta last 20.48 us")

    cnp = d["cnp_burst"]
    expect_anomalies("cnp_burst", cnp, {
        ("CNP", ""): [4, [[41], [42], [43], [44]]],
        ("ECN-CE marked", ""): [5, [[21], [23], [25], [27], [29]]],
    })
    flows = [f for v in cnp["conversations"] for f in v["flows"] if f["cnp"]]
    check(len(flows) == 1 and flows[0]["cnp"] == 4 and flows[0]["cnp_min_gap_ns"] == 50000, "cnp_burst: 50 us apart")
    v = cnp["conversations"][0]
    check(v["pairing"] == "ACK" and v["a"]["qpn"] == 0x101 and v["b"]["qpn"] == 0x202, "cnp_burst: pairing")
    check(len(cnp["messages"]) == 20 and all(m["latency_ns"] == 1000 for m in cnp["messages"]),
          "cnp_burst: 20 WRITEs, each acknowledged 1 us later")

    bad = d["bad_frames"]
    expect_anomalies("bad_frames", bad, {
        ("bad ICRC", "bad ICRC"): [1, [[2]]],
        ("bad frame", "truncated"): [1, [[3]]],
    })
    check(bad["summary"]["snapped_frames"] == 1 and bad["summary"]["bad_frames"] == 1, "bad_frames: totals")
    check(sorted((m["psn"], m["bytes"], m["status"]) for m in bad["messages"])
          == [(600, 64, "ok"), (601, 64, "ok"), (602, 1024, "ok")], "bad_frames: three WRITEs")


# ---- iWARP ---------------------------------------------------------------
# What each story of gen_iwarp_stories.c was built with, restated from its
# comment: MPA framing adds ULPDU_Length (2) and the CRC (4) to a ULPDU of a
# DDP header (tagged 14, untagged 18) and the payload, padded to 4 octets.

def fpdu_len(header, payload):
    ulpdu = header + payload
    return 2 + ulpdu + (-(2 + ulpdu)) % 4 + 4


def iw_messages(doc):
    """(kind, requester:port, bytes, first frame, last frame) -> message"""
    return {(m["kind"], "%s:%d" % (m["requester"], m["requester_port"]), m["bytes"], m["first_frame"],
             m["last_frame"]): m for m in doc["messages"]}


def expect_iw_messages(story, doc, want):
    got = iw_messages(doc)
    check(sorted(got) == sorted(want), "%s: messages\n  got  %s\n  want %s" % (story, sorted(got), sorted(want)))
    return got


def test_iwarp_write_read(tmp, name, a, b):
    doc = replay(os.path.join(tmp, name + ".pcap"))
    s = doc["summary"]
    check((s["frames"], s["rdma_frames"], s["other_frames"], s["bad_frames"]) == (18, 15, 3, 0),
          name + ": 18 frames, the TCP handshake's three not iWARP")
    check(len(doc["conversations"]) == 1, name + ": one conversation")
    v = doc["conversations"][0]
    check((v["pairing"], v["transport"], v["protocol"]) == ("TCP", "TCP", "iWARP"), name + ": an iWARP conversation")
    check(v["a"] == {"address": a, "port": 5000} and v["b"] == {"address": b, "port": 6000}, name + ": its ends")
    check(v["packets"] == 15 and v["goodput_bytes"] == 3000 + 2500 + 100 + 64 + 200 + 50, name + ": packets, goodput")
    mpa = v["mpa"]
    check((mpa["request"]["frame"], mpa["request"]["from"], mpa["reply"]["frame"], mpa["reply"]["from"]) == (4, "a", 5, "b")
          and mpa["request"]["crc"] and not mpa["request"]["markers"], name + ": MPA Request and Reply")
    A, B = a + ":5000", b + ":6000"
    got = expect_iw_messages(name, doc, [
        ("iWARP RDMA Write", A, 3000, 6, 8),
        ("iWARP RDMA Read", A, 2500, 9, 12),
        ("iWARP Send", A, 100, 13, 13),
        ("iWARP Send with Invalidate", B, 64, 14, 14),
        ("iWARP Send with SE", A, 200, 15, 15),
        ("iWARP Send with SE and Invalidate", A, 50, 16, 16),
    ])
    w = got.get(("iWARP RDMA Write", A, 3000, 6, 8), {})
    check((w.get("request_segments"), w.get("stag"), w.get("tagged_offset"), w.get("latency_ns"))
          == (3, "0x00001000", "0x%016x" % 0x10000, None), name + ": the Write's segments, STag and offset")
    r = got.get(("iWARP RDMA Read", A, 2500, 9, 12), {})
    check((r.get("request_segments"), r.get("response_segments"), r.get("completion_frame"), r.get("latency_ns"))
          == (1, 3, 12, 30000), name + ": the Read, its three response segments, 30 us")
    check((r.get("stag"), r.get("tagged_offset"), r.get("sink_stag"), r.get("sink_tagged_offset"), r.get("read_size"))
          == ("0x00003000", "0x%016x" % 0x30000, "0x00002000", "0x%016x" % 0x20000, 2500), name + ": the Read's buffers")
    inv = {m["kind"]: m.get("invalidate_stag") for m in doc["messages"]}
    check(inv["iWARP Send with Invalidate"] == "0x00002000" and inv["iWARP Send with SE and Invalidate"] == "0x00004000"
          and inv["iWARP Send"] is None, name + ": invalidated STags")
    check([m["msn"] for m in doc["messages"] if m["kind"].startswith("iWARP Send") and m["requester"] == a]
          == [1, 2, 3], name + ": A's Sends carry MSN 1, 2, 3")
    check(all(m["status"] == "ok" for m in doc["messages"]), name + ": all complete")
    check(doc["anomalies"] == [], name + ": no anomalies")
    return doc


def test_iwarp(tmp):
    run([os.path.join(TOP_BUILDDIR, "tests", "replay", "gen_iwarp_stories"), tmp])
    test_iwarp_write_read(tmp, "iw_write_read", "10.0.0.1", "10.0.0.2")
    test_iwarp_write_read(tmp, "iw_write_read6", "fd00::1", "fd00::2")

    # the text report: both ends with their ports, and every kind by name
    text = run([RDMASIM, "replay", os.path.join(tmp, "iw_write_read.pcap")])
    conv = [line.split() for line in text.splitlines() if "10.0.0.1:5000" in line]
    check(len(conv) == 1 and conv[0][1:4] == ["10.0.0.1:5000", "10.0.0.2:6000", "TCP"], "iw_write_read: text conversation")
    for kind in ("iWARP RDMA Write ", "iWARP RDMA Read ", "iWARP Send with SE and Invalidate "):
        check(any(line.strip().startswith(kind) for line in text.splitlines()), "iw_write_read: text row " + kind)

    # the timeline: one flow per direction, every iWARP frame and byte
    csv = os.path.join(tmp, "iw.csv")
    run([RDMASIM, "replay", "--timeline", csv, "--interval", "10us", os.path.join(tmp, "iw_write_read.pcap")])
    rows = [line.split(",") for line in open(csv).read().splitlines()]
    col = {n: i for i, n in enumerate(rows[0])}
    flows = [r for r in rows[1:] if r[col["kind"]] == "flow"]
    check({r[col["label"]] for r in flows} == {"10.0.0.1:5000 > 10.0.0.2:6000 TCP", "10.0.0.2:6000 > 10.0.0.1:5000 TCP"},
          "iw timeline: both directions")
    check(sum(int(r[col["packets"]]) for r in flows) == 15, "iw timeline: packets")
    check(sum(int(r[col["goodput_bytes"]]) for r in flows) == 5914, "iw timeline: goodput")

    doc = replay(os.path.join(tmp, "iw_split.pcap"))
    A = "10.0.0.1:5000"
    got = expect_iw_messages("iw_split", doc, [
        ("iWARP Send", A, 3000, 3, 5),
        ("iWARP RDMA Write", A, 500, 6, 8),
        ("iWARP Send", A, 10, 9, 9),
        ("iWARP RDMA Read", A, 100, 9, 10),
    ])
    check(got.get(("iWARP Send", A, 3000, 3, 5), {}).get("request_segments") == 1,
          "iw_split: one DDP segment over three TCP segments")
    check(got.get(("iWARP RDMA Read", A, 100, 9, 10), {}).get("latency_ns") == 4000, "iw_split: the Read, 4 us")
    check(doc["anomalies"] == [] and doc["summary"]["rdma_frames"] == 10, "iw_split: no anomalies")

    doc = replay(os.path.join(tmp, "iw_errors.pcap"))
    expect_anomalies("iw_errors", doc, {
        ("bad MPA CRC", ""): [1, [[4]]],
        ("TCP retransmission", ""): [1, [[6]]],
        ("TCP out of order", ""): [1, [[7]]],
        ("bad frame", "malformed"): [1, [[9]]],
        ("unanswered request", "iWARP RDMA Read"): [1, [[10]]],
        ("iWARP Terminate", "DDP / Tagged Buffer Error / Invalid STag"): [1, [[11]]],
    })
    by = {a["kind"]: a for a in doc["anomalies"]}
    check(by["iWARP Terminate"]["events"][0].get("text") == "RDMA Write", "iw_errors: the Terminate names the Write")
    check(by["bad MPA CRC"]["value_sum"] == fpdu_len(18, 40), "iw_errors: the bad FPDU's length")
    check(by["TCP retransmission"]["value_sum"] == fpdu_len(14, 200), "iw_errors: the resent segment's length")
    check(by["bad frame"]["events"][0].get("text") == "DDP reserved field set", "iw_errors: why frame 9 is bad")
    got = expect_iw_messages("iw_errors", doc, [
        ("iWARP Send", A, 100, 3, 3),
        ("iWARP RDMA Write", A, 200, 5, 5),
        ("iWARP Send", A, 300, 8, 8),
        ("iWARP RDMA Read", A, 0, 10, 10),
    ])
    check([m["status"] for m in doc["messages"] if m["kind"] == "iWARP RDMA Read"] == ["no response"],
          "iw_errors: the Read is never answered")
    flows = doc["conversations"][0]["flows"]
    check([(f["bad_mpa_crc"], f["tcp_retransmissions"], f["tcp_out_of_order"], f["terminates"]) for f in flows]
          == [(1, 1, 1, 0), (0, 0, 0, 1)], "iw_errors: counts per direction")

    doc = replay(os.path.join(tmp, "iw_two_conns.pcap"))
    check(sorted((v["a"]["port"], v["b"]["port"], v["messages"]) for v in doc["conversations"])
          == [(5001, 6000, 2), (5002, 6000, 2)], "iw_two_conns: two conversations, one per connection")
    got = expect_iw_messages("iw_two_conns", doc, [
        ("iWARP RDMA Write", "10.0.0.1:5001", 64, 3, 3),
        ("iWARP RDMA Read", "10.0.0.1:5001", 48, 7, 8),
        ("iWARP RDMA Read", "10.0.0.1:5002", 32, 6, 9),
        ("iWARP Send", "10.0.0.1:5002", 16, 10, 10),
    ])
    check(sorted(m["latency_ns"] for m in doc["messages"] if m["kind"] == "iWARP RDMA Read") == [1000, 3000],
          "iw_two_conns: each Read answered on its own connection")
    check(doc["anomalies"] == [], "iw_two_conns: no anomalies")


def test_usage(tmp):
    p = subprocess.run([RDMASIM, "replay", os.path.join(tmp, "missing.pcap")], capture_output=True, text=True)
    check(p.returncode == 2 and "missing.pcap" in p.stderr, "unreadable file: exit 2 naming it")
    p = subprocess.run([RDMASIM, "replay", "--interval", "soon", "x"], capture_output=True, text=True)
    check(p.returncode == 2, "bad --interval: exit 2")
    # a file damaged part-way: the report covers the frames before the
    # damage, and the exit status and one stderr line say where it is
    src = os.path.join(REAL, "rxe-rocev2-read-write-ecn.pcap")
    cut = os.path.join(tmp, "cut.pcap")
    data = open(src, "rb").read()
    offsets = [24]
    while offsets[-1] < len(data):
        caplen = int.from_bytes(data[offsets[-1] + 8:offsets[-1] + 12], "little")
        offsets.append(offsets[-1] + 16 + caplen)
    open(cut, "wb").write(data[:offsets[6] + 20])
    p = subprocess.run([RDMASIM, "replay", "--json", cut], capture_output=True, text=True)
    errors = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(errors) == 1 and cut in errors[0] and "frame 7" in errors[0],
          "damaged file: exit 2, one line naming the file and frame 7: %r" % errors)
    check(json.loads(p.stdout)["summary"]["frames"] == 6, "damaged file: the six frames before the damage")
    p = subprocess.run([RDMASIM, "replay", "--help"], capture_output=True, text=True)
    check(p.returncode == 0 and "--timeline" in p.stdout and "--link-speed" in p.stdout, "--help")


def test_timeline(tmp):
    csv = os.path.join(tmp, "t.csv")
    run([RDMASIM, "replay", "--timeline", csv, "--interval", "10us", os.path.join(tmp, "cnp_burst.pcap")])
    rows = [line.split(",") for line in open(csv).read().splitlines()]
    head, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(head)}
    flows = [r for r in rows if r[col["kind"]] == "flow"]
    check(sum(int(r[col["packets"]]) for r in flows) == 44, "timeline: every packet in some interval")
    check(sum(int(r[col["goodput_bytes"]]) for r in flows) == 20 * 256, "timeline: goodput bytes")
    check(sum(int(r[col["cnp"]]) for r in flows) == 4, "timeline: CNPs")
    check(all(int(r[col["start_ns"]]) % 10000 == 0 for r in rows), "timeline: 10 us intervals")
    run([RDMASIM, "replay", "--timeline", csv, "--interval", "100us", os.path.join(tmp, "pfc_storm.pcap")])
    rows = [line.split(",") for line in open(csv).read().splitlines()][1:]
    paused = sum(int(r[col["paused_ns"]]) for r in rows if r[col["kind"]] == "pfc" and r[col["id"]] == "3")
    check(paused == 1040000, "timeline: priority 3 paused time adds up (%d)" % paused)


def test_sim_capture_gaps(tmp):
    """A second witness for the PSN gap, from a capture `rdmasim sim`
    writes: a 64 KiB WRITE is 16 request packets (MTU 4096) and one ACK on
    the requester's port. With request packet 5 cut out, replay must see a
    gap of exactly one PSN (5 to 5) between frames 5 and 6 of the new file;
    with packets 9 and 10 cut out as well, a second gap of two."""
    sys.path.insert(0, os.path.join(TOP_SRCDIR, "tests"))
    from testlib import pcap_records, write_pcap
    cfg = os.path.join(tmp, "gap.yaml")
    with open(cfg, "w") as f:
        f.write("payload: none\ntopology: {hosts: [a, b], links: [{a: a, b: b}]}\ntrace: [a]\n"
                "workload: {messages: [{src: a, dst: b, op: write, size: 64KiB}]}\n")
    out = os.path.join(tmp, "gap-out")
    run([RDMASIM, "sim", cfg, "--out", out, "--quiet"])
    recs = pcap_records(os.path.join(out, "pcap", "a-0.pcap"))
    check(len(recs) == 17, "sim capture: 16 requests and an ACK (%d frames)" % len(recs))
    first_psn = int.from_bytes(recs[0][1][51:54], "big")
    for cut, want in (([5], [(5, 5, 1, [5, 6])]), ([5, 9, 10], [(5, 5, 1, [5, 6]), (9, 10, 2, [8, 9])])):
        path = os.path.join(tmp, "gap-%d.pcap" % len(cut))
        write_pcap(path, [r for i, r in enumerate(recs) if i not in cut])
        gaps = [a for a in replay(path)["anomalies"] if a["kind"] == "PSN gap"]
        got = [(e["psn"] - first_psn, e["psn_end"] - first_psn, e["value"], e["frames"][:2])
               for a in gaps for e in a["events"]]
        check(got == want, "sim capture without request packets %s: PSN gaps %s, want %s" % (cut, got, want))


def main():
    for name in ("rxe-rocev2-read-write-ecn.pcap", "rxe-rocev2-write-read-arp.pcap"):
        test_rxe_write_read(name)
    test_port69()
    test_ib_erf()
    test_cx4()
    with tempfile.TemporaryDirectory() as tmp:
        test_crafted(tmp)
        test_iwarp(tmp)
        test_usage(tmp)
        test_timeline(tmp)
        test_sim_capture_gaps(tmp)
    if failures:
        sys.exit("%d checks failed" % len(failures))
    print("all replay checks passed")


script_limit(120)
main()
