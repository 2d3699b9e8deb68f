#!/usr/bin/python3
"""rdmasim beside ns-3 on the fat-tree workload of docs/performance.md.

usage: vs_ns3.py RDMASIM NS3_PROGRAM [RUNS]
For k=4 and k=8 with 10 MiB per flow: runs bench/ns3/fattree.cc's program
and `rdmasim sim` on the configuration bench/fattree_shift.py writes
(routing: dmodk), RUNS times each (default 2), and prints the CPU time of
the whole process (user + system; the least of the runs), packet-hops per
CPU second and their ratio. It fails when the two do not deliver the same
data packets over the same number of link transmissions, when ns-3 loses
a packet or its last datagram arrives later than the analytic time, or
when a rdmasim message completes later than its ideal time (observe/
ideal.c) plus one data frame: the last acknowledgement shares its links
with the opposite flow's data and may wait behind one frame.

rdmasim also sends acknowledgements (one per 64 packets, nic.
ack_request_every); its data frames are told from them on every port by
their sizes: a data frame carries 4096 bytes of payload."""
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fattree_shift import config  # noqa: E402

MIB = 1 << 20
CASES = [(4, 10 * MIB), (8, 10 * MIB)]
PAYLOAD = 4096
# RoCEv2 frame without FCS: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4
DATA_FRAME = 14 + 20 + 8 + 12 + PAYLOAD + 4
ACK_FRAME = 14 + 20 + 8 + 12 + 4 + 4  # and the AETH
RETH = 16  # on the first packet of each WRITE


def timed(cmd):
    """Run cmd; its output and the CPU seconds (user + system) it took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return out, cpu


def data_frames(port):
    """Of a port's frames, those carrying data: each is DATA_FRAME bytes
    (RETH bytes more on a first packet), each acknowledgement ACK_FRAME."""
    frames, size = port["tx_frames"], port["tx_bytes"]
    data, extra = divmod(size - frames * ACK_FRAME, DATA_FRAME - ACK_FRAME)
    if extra % RETH:
        sys.exit("vs_ns3: %s: %d frames of %d bytes are not data and acknowledgement frames"
                 % (port["port"], frames, size))
    return data


def run_rdmasim(rdmasim, k, size):
    with tempfile.TemporaryDirectory() as tmp:
        path, out = os.path.join(tmp, "shift.yaml"), os.path.join(tmp, "out")
        with open(path, "w") as f:
            f.write(config(k, "%dB" % size))
        _, cpu = timed([rdmasim, "sim", path, "--out", out, "--quiet"])
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        late = 0
        with open(os.path.join(out, "messages.csv")) as f:
            head = f.readline().strip().split(",")
            for line in f:
                row = dict(zip(head, line.strip().split(",")))
                late = max(late, int(row["end_ps"]) - int(row["start_ps"]) - int(row["ideal_ps"]))
    hops = sum(data_frames(p) for p in summary["ports"])
    packets = sum(data_frames(p) for p in summary["ports"] if p["peer"].startswith("h"))
    t = summary["totals"]
    if t["completed"] != t["messages"] or t["retransmitted"]:
        sys.exit("vs_ns3: rdmasim: %d of %d messages completed, %d packets sent again"
                 % (t["completed"], t["messages"], t["retransmitted"]))
    return {"cpu": cpu, "packets": packets, "hops": hops, "events": t["events"],
            "end_ps": t["end_time_ps"], "late_ps": late}


def run_ns3(program, k, size):
    out, cpu = timed([program, "--k=%d" % k, "--bytes=%d" % size])
    r = {key: int(v) for key, v in (item.split("=") for item in out.split())}
    r["cpu"] = cpu
    return r


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__.split("\n\n")[1])
    rdmasim, program = argv[1], argv[2]
    runs = int(argv[3]) if len(argv) == 4 else 2
    print("%-12s %10s %10s %9s %9s %12s %12s %6s"
          % ("workload", "packets", "hops", "ns-3 s", "rdmasim s", "ns-3 hops/s", "rdmasim h/s", "ratio"))
    failed = False
    for k, size in CASES:
        ns3 = min((run_ns3(program, k, size) for _ in range(runs)), key=lambda r: r["cpu"])
        sim = min((run_rdmasim(rdmasim, k, size) for _ in range(runs)), key=lambda r: r["cpu"])
        datagrams = size // PAYLOAD
        # ns-3: 4126 bytes a datagram (4096 + UDP 8 + IPv4 20 + PPP 2) at
        # 100 Gb/s is 330.08 ns; six store-and-forward hops of 1 us each
        ser = (PAYLOAD + 30) * 80
        analytic = (datagrams - 1) * ser + 6 * (ser + 1000000)
        # rdmasim: a data frame and the preamble, FCS and gap (24 bytes)
        frame_ps = (DATA_FRAME + 24) * 80
        problems = []
        if (ns3["packets"], ns3["hops"]) != (sim["packets"], sim["hops"]):
            problems.append("ns-3 delivered %d packets over %d hops, rdmasim %d over %d"
                            % (ns3["packets"], ns3["hops"], sim["packets"], sim["hops"]))
        if ns3["drops"] or ns3["last_ps"] != analytic:
            problems.append("ns-3: %d drops, last datagram at %d ps, analytic %d ps"
                            % (ns3["drops"], ns3["last_ps"], analytic))
        if not 0 <= sim["late_ps"] <= frame_ps:
            problems.append("rdmasim: a message completed %d ps after its ideal time" % sim["late_ps"])
        print("k=%d %3d MiB %10d %10d %9.2f %9.2f %12.0f %12.0f %5.1fx"
              % (k, size // MIB, sim["packets"], sim["hops"], ns3["cpu"], sim["cpu"],
                 ns3["hops"] / ns3["cpu"], sim["hops"] / sim["cpu"], ns3["cpu"] / sim["cpu"]))
        print("  ns-3 last datagram %.3f us (analytic %.3f us), %d events; rdmasim %d events,"
              " last completion %.3f us, at most %d ps after its ideal time"
              % (ns3["last_ps"] / 1e6, analytic / 1e6, ns3["events"], sim["events"],
                 sim["end_ps"] / 1e6, sim["late_ps"]))
        for p in problems:
            print("  FAILED: " + p)
        failed = failed or bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv)
