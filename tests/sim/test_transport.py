#!/usr/bin/python3
"""The RC transport's timers and failures, run through `rdmasim sim` on
two hosts and one link, with exact times: the retransmission timer when
it fires before its deadline, the RNR wait while new work requests keep
arriving, and every completion error status a run can produce.

Times are derived from the configuration each test writes: a frame of F
bytes costs F + 24 on the wire (preamble and delimiter 8, FCS 4, gap 12),
serialized at the link rate, rounded up to the picosecond; a RoCEv2/IPv4
frame is Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + extended headers +
payload + ICRC 4. The capture stamps a frame sent when it starts and a
frame received when its last bit arrives, in whole nanoseconds."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from testlib import RDMASIM, main, pcap_records, seconds  # noqa: E402

PS, NS, US = 10**12, 1000, 10**6
RATE, DELAY = 100 * 10**9, 1 * US  # every test's link: 100 Gb/s, 1 us


def ser(frame_bytes):
    """Serialization of a frame and its 24 wire bytes at RATE, in ps."""
    return -(-(frame_bytes + 24) * 8 * PS // RATE)


WRITE_ONLY_4K = 14 + 20 + 8 + 12 + 16 + 4096 + 4  # RETH 16
SEND_4K = 14 + 20 + 8 + 12 + 4096 + 4
ACK = 14 + 20 + 8 + 12 + 4 + 4  # AETH 4


def sim(tmp, text, *args):
    path = os.path.join(tmp, "c.yaml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, "out")
    p = subprocess.run([RDMASIM, "sim", path, "--out", out, "--quiet", *args],
                       capture_output=True, text=True, timeout=seconds(10))
    with open(os.path.join(out, "messages.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return p, rows, s, out


def opcodes_sent(out, port, src):
    """(time in ns, BTH opcode, PSN) of the RoCEv2/IPv4 frames `src` sent."""
    return [(t, f[42], int.from_bytes(f[51:54], "big")) for t, f in pcap_records(
        os.path.join(out, "pcap", port + ".pcap"))
        if len(f) > 54 and f[12:14] == b"\x08\x00" and f[23] == 17 and f[26:30] == src]


A = bytes([10, 0, 0, 1])  # the first host's address (docs/config.md)
LINK = "[{a: a, b: b, rate: 100Gbps, delay: 1us}]"


class RetransmissionTimer(unittest.TestCase):
    """The timer is armed when the first request goes (t = 0) and not
    moved when later ones go: it fires early, at T, finds the deadline of
    the request now outstanding later, and must arm itself again for it.
    Message 0 completes at once; message 1 (posted at 5 us) loses its only
    frame to a link fault (down 5.5 us to 5.6 us, while the frame is on the
    link). Nothing but the timer can recover it: no later request makes a
    sequence NAK. So it is sent again at its deadline, 5 us + T, and
    completes one round trip later."""

    def test_timer_that_fires_early_arms_again(self):
        timeout = 20 * US
        with tempfile.TemporaryDirectory() as tmp:
            p, rows, s, out = sim(tmp, f"""
stop: 1ms
nic: {{timeout: 20us}}
topology:
  hosts: [a, b]
  links: {LINK}
faults:
  - {{a: a, b: b, down: 5500ns, up: 5600ns}}
trace: [a]
workload:
  messages:
    - {{src: a, dst: b, op: write, size: 4096}}
    - {{src: a, dst: b, op: write, size: 4096, start: 5us}}
""")
            sent = opcodes_sent(out, "a-0", A)
        self.assertEqual(p.returncode, 0, p.stderr)
        round_trip = ser(WRITE_ONLY_4K) + DELAY + ser(ACK) + DELAY
        self.assertEqual([r["status"] for r in rows], ["ok", "ok"],
                         "the lost request was never sent again: the timer did not fire at its deadline")
        self.assertEqual(int(rows[0]["fct_ps"]), round_trip)
        self.assertEqual(int(rows[1]["end_ps"]), 5 * US + timeout + round_trip,
                         "the retransmission did not go at the request's own deadline")
        self.assertEqual(int(rows[1]["retransmissions"]), 1)
        self.assertEqual(s["totals"]["link_losses"], 1)
        # the capture: PSN 1 sent at 5 us and again at 5 us + T, nothing else
        first = sent[0][2]
        self.assertEqual([(t, psn - first) for t, _, psn in sent],
                         [(0, 0), (5000, 1), ((5 * US + timeout) // NS, 1)])


class RnrWait(unittest.TestCase):
    """A SEND (two 4 KiB packets) finds no receive until 100 us; the
    responder answers its first packet with an RNR NAK asking for 30 us
    (rnr_timer 3, IBA table 45). Twelve WRITEs posted every 5 us on the
    same queue pair wake it during every wait; it must still wait out the
    30 us each time. So the SEND's first packet goes at k x S, where
    S = ser(SEND First) + delay + ser(RNR NAK) + delay + 30 us, and arrives
    at k x S + ser + delay: before 100 us for k = 0..3 (four RNR NAKs), after
    it for k = 4, which completes."""

    def test_rnr_wait_holds_while_new_requests_arrive(self):
        with tempfile.TemporaryDirectory() as tmp:
            p, rows, s, out = sim(tmp, f"""
stop: 1ms
nic: {{rnr_timer: 3}}
topology:
  hosts: [a, b]
  links: {LINK}
trace: [a]
workload:
  messages:
    - {{src: a, dst: b, op: send, size: 8KiB, recv_at: 100us}}
    - {{src: a, dst: b, op: write, size: 1KiB, start: 5us, repeat: 12, interval: 5us}}
""")
            sends = [t for t, op, _ in opcodes_sent(out, "a-0", A) if op == 0x00]  # SEND First
        self.assertEqual(p.returncode, 0, p.stderr)
        S = ser(SEND_4K) + DELAY + ser(ACK) + DELAY + 30 * US
        nak_k = [k for k in range(10) if k * S + ser(SEND_4K) + DELAY < 100 * US]
        self.assertEqual(len(nak_k), 4)
        self.assertEqual(s["flows"][0]["sides"][1]["rnr_naks"], len(nak_k),
                         "RNR NAKs: the requester did not wait out the RNR timer")
        self.assertEqual(len(sends), len(nak_k) + 1)
        for k, t in enumerate(sends):
            self.assertEqual(t, k * S // NS, f"SEND First number {k}: not {S} ps after the last")
        self.assertEqual(int(rows[0]["end_ps"]),
                         len(nak_k) * S + 2 * ser(SEND_4K) + DELAY + ser(ACK) + DELAY)
        self.assertTrue(all(r["status"] == "ok" and r["data"] == "ok" for r in rows))


class CompletionErrors(unittest.TestCase):
    """Each error status a run can end a message with, the time it ends,
    and the messages behind it flushed. Exit status 1: messages failed."""

    def test_rnr_retry_exceeded_and_flushed(self):
        """rnr_retry 0: the first RNR NAK fails the SEND when it arrives,
        and the WRITE with immediate behind it is flushed then."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = subprocess.run([RDMASIM, "sim", os.path.join(TOP, "examples", "rnr.yaml"), "--quiet",
                                "--out", out, "--set", "nic.rnr_retry=0"],
                               capture_output=True, text=True, timeout=seconds(30))
            with open(os.path.join(out, "messages.csv")) as f:
                rows = list(csv.DictReader(f))
        self.assertEqual([r["status"] for r in rows], ["rnr-retry-exceeded", "flushed"])
        self.assertEqual(p.returncode, 1, "exit status when messages failed")
        # examples/rnr.yaml: 100 Gb/s and 1 us (the defaults), 8 KiB SEND at 0
        nak_arrives = ser(SEND_4K) + DELAY + ser(ACK) + DELAY
        self.assertEqual([int(r["end_ps"]) for r in rows], [nak_arrives] * 2)
        self.assertEqual([r["data"] for r in rows], ["unchecked"] * 2)

    def test_retry_exceeded_and_flushed(self):
        """A link that goes down for good before the first frame is on it:
        the timeout expires retry_count + 1 times, and the last ends the
        queue pair: the WRITE fails with retry-exceeded, the READ behind
        it is flushed."""
        with tempfile.TemporaryDirectory() as tmp:
            p, rows, s, _ = sim(tmp, f"""
stop: 1ms
nic: {{timeout: 10us, retry_count: 2}}
topology:
  hosts: [a, b]
  links: {LINK}
faults:
  - {{a: a, b: b, down: 100ns}}
workload:
  messages:
    - {{src: a, dst: b, op: write, size: 4096}}
    - {{src: a, dst: b, op: read, size: 4096}}
""")
        self.assertEqual([r["status"] for r in rows], ["retry-exceeded", "flushed"])
        self.assertEqual(p.returncode, 1, "exit status when messages failed")
        self.assertEqual([int(r["end_ps"]) for r in rows], [3 * 10 * US] * 2)
        self.assertEqual(s["flows"][0]["sides"][0]["timeouts"], 3)
        self.assertEqual(s["totals"]["failed"], 2)


if __name__ == "__main__":
    main(default_limit=30)
