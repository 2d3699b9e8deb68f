#!/usr/bin/python3
"""InfiniBand, RoCEv2, iWARP and TCP side by side: run every
examples/compare-*.yaml scenario through `rdmasim compare` and write
docs/transports.md from the tables the runs produce.

    scripts/transports_doc.py [--rdmasim PATH] [--runs DIR] [--out docs/transports.md]

Every number in the document is read from a scenario's compare.json,
which `rdmasim compare` derives from each transport's own summary.json
and messages.csv; the runs stay in DIR (default compare-doc/) for
`rdmasim report`, `rdmasim replay` of their pcaps, or a second look. The
closing note's sentences are chosen by comparing those numbers, so that a
change in the model that turns a finding around turns the sentence too.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, file, the question it answers, the metrics of its table, what the
# rows show and where the model's assumptions bound them
SCENARIOS = [
    ("latency", "compare-latency.yaml", "Latency of 64 B operations on an idle fabric",
     ["small_p50_us", "small_p99_us", "cpu_us_per_GB", "copies_per_byte"],
     "Each row is a 64-byte write's completion time: the request's trip through two switches, "
     "the acknowledgement's way back, and for `tcp` the `send()` system call, the copy and the "
     "kernel's processing of the data segment at the receiver and of the ACK at the sender. "
     "InfiniBand is faster than RoCEv2 here because its packets are shorter (LRH and BTH against "
     "Ethernet, IP, UDP and BTH) and its switches forward with less latency (130 ns, the "
     "InfiniBand default, against 300 ns). The model has no PCIe here (`pcie` absent: the NIC "
     "reaches memory at once), no interrupt moderation and no scheduler wake-up of the "
     "receiving process: real TCP round trips are longer still."),
    ("long", "compare-long.yaml", "Goodput of one long transfer (64 MiB, 100 Gb/s)",
     ["fct_p50_us", "goodput_gbps", "cpu_us_per_GB", "copies_per_byte"],
     "Goodput is 64 MiB x 8 over the completion time. The RDMA transports lose only their "
     "headers (and iWARP its TCP start-up); `tcp` is held to one receiving core, which spends "
     "the kernel's segment work and the application's copy on every segment: 42 Gb/s, the "
     "one-core figure of Cai et al. (SIGCOMM 2021) that `nic.host_cost`'s defaults come from. "
     "One core per role is the model's assumption: spreading flows over cores (RSS, aRFS) lifts "
     "the bound per host but not per flow, and costs the same CPU time per GB, which the last "
     "columns count."),
    ("incast", "compare-incast.yaml", "32 -> 1 incast (512 KiB each) with a bystander's 64 B writes",
     ["small_p50_us", "small_p99_us", "fct_p99_us", "goodput_gbps", "slowdown_le_1MiB_p99",
      "tail_drops", "pfc_pauses", "retransmitted", "timeouts"],
     "Thirty-two senders share the receiver's 100 Gb/s link; the small messages come from a host "
     "beside the receiver, whose port the incast fills. Lossless fabrics (InfiniBand credits, "
     "RoCEv2 with PFC) drop nothing and push back on the senders; without PFC RoCEv2 recovers "
     "each drop by going back N packets; TCP (NewReno, no ECN) fills the shared buffer, which is "
     "what the bystander waits behind. The CPU rows are as in the long transfer and left out."),
    ("websearch-30", "compare-websearch-30.yaml", "WebSearch sizes at 30% load, k=8 fat-tree",
     ["fct_p50_us", "fct_p99_us", "slowdown_le_4KiB_p50", "slowdown_le_4KiB_p99",
      "slowdown_gt_1MiB_p99", "tail_drops", "pfc_pauses", "retransmitted"],
     "Random arrivals at every one of the 128 hosts for 1 ms, sizes from the WebSearch "
     "distribution. Scaled down from the usual seconds of arrivals so that `make compare-doc` "
     "runs in minutes: a few hundred messages, and only a handful above 1 MiB, so the p99 rows "
     "rest on few samples."),
    ("websearch-70", "compare-websearch-70.yaml", "WebSearch sizes at 70% load, k=8 fat-tree",
     ["fct_p50_us", "fct_p99_us", "slowdown_le_4KiB_p50", "slowdown_le_4KiB_p99",
      "slowdown_gt_1MiB_p99", "tail_drops", "pfc_pauses", "retransmitted"],
     "The same at 70% load: queues build at the fabric's core and at the receivers."),
    ("loss", "compare-loss.yaml", "Random loss of 1 frame in 10,000 on every link",
     ["small_p50_us", "small_p99_us", "fct_p99_us", "goodput_gbps", "link_losses",
      "retransmitted", "timeouts"],
     "Eight 8 MiB transfers and a stream of 64 B writes across a leaf-spine fabric whose links "
     "lose frames at random. Go-back-N (InfiniBand, RoCEv2) resends everything after a lost "
     "packet; TCP with SACK resends the one segment. Goodput here is the eight transfers' "
     "bytes over the time the last one took, so a single slow transfer (InfiniBand's p99) "
     "lowers it; the lossy transports also overflow queues with their retransmissions and "
     "windows (`tail_drops` in compare-doc/loss/*/summary.json)."),
    ("wan", "compare-wan.yaml", "A 10 ms, 0.01%-loss wide-area link (100 Gb/s)",
     ["fct_p50_us", "fct_p99_us", "goodput_gbps", "link_losses", "retransmitted", "timeouts"],
     "Two 64 MiB transfers over one 100 Gb/s link with 5 ms of delay each way that loses 1 frame "
     "in 10,000. PFC across it would need 125 MB of headroom per port and priority (the switch "
     "buffers are made large enough to hold it, which no switch has), InfiniBand as many credits "
     "(range extenders supply them); TCP needs a window of the bandwidth-delay product (256 MiB "
     "here, CUBIC). Each RDMA loss costs a round trip of packets resent. InfiniBand's row is "
     "its link-level credits: the 12-bit counters let a VL's sender run at most 2048 blocks "
     "(128 KiB) ahead of its receiver's acknowledged buffer (IBA vol. 1, 7.9.4.3), one "
     "window per 10 ms round trip of the long link, about 105 Mb/s for both transfers "
     "together; their packets wait for credit in the NIC longer than the 40 ms timeout, "
     "which then fires with nothing lost (`timeouts_without_loss`) and sends them again. "
     "With `--set nic.timeout=1s` no timeout fires and the two transfers take 10.6 s, "
     "128 MiB at 101 Mb/s; with InfiniBand's congestion control off it is the same. Range "
     "extenders, which end flow control on each side of the long link with deep buffers, "
     "are what InfiniBand needs here; they are not modelled."),
]

LABELS = {
    "small_p50_us": "<= 4 KiB p50 (us)", "small_p99_us": "<= 4 KiB p99 (us)",
    "fct_p50_us": "FCT p50 (us)", "fct_p99_us": "FCT p99 (us)", "goodput_gbps": "goodput (Gb/s)",
    "slowdown_le_4KiB_p50": "slowdown <= 4 KiB p50", "slowdown_le_4KiB_p99": "slowdown <= 4 KiB p99",
    "slowdown_le_1MiB_p99": "slowdown <= 1 MiB p99", "slowdown_gt_1MiB_p99": "slowdown > 1 MiB p99",
    "tail_drops": "tail drops", "link_losses": "link losses", "pfc_pauses": "PFC pauses",
    "retransmitted": "retransmitted", "timeouts": "timeouts", "cpu_us_per_GB": "CPU us per GB",
    "copies_per_byte": "copies per byte",
}


def fmt(v):
    if v is None:
        return "-"
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v)}"
    return f"{v:.1f}" if abs(v) >= 100 else f"{v:.3g}"


def run(rdmasim, runs, name, path, figures):
    out = os.path.join(runs, name)
    # from the source tree, so that the tables and figures name the
    # example as examples/NAME, wherever the tree is
    p = subprocess.run([rdmasim, "compare", path, "--out", out], capture_output=True, text=True, cwd=TOP)
    if p.returncode not in (0, 1):
        sys.exit(f"rdmasim compare {path}: exit status {p.returncode}\n{p.stderr}")
    shutil.copyfile(os.path.join(out, "compare.svg"), os.path.join(figures, f"{name}.svg"))
    with open(os.path.join(out, "compare.json")) as f:
        return json.load(f)


def table(result, metrics):
    lines = ["| transport | " + " | ".join(LABELS[m] for m in metrics) + " |",
             "|---|" + "---|" * len(metrics)]
    for t in result["transports"]:
        lines.append(f"| {t['name']} | " + " | ".join(fmt(t["values"][m]) for m in metrics) + " |")
    return "\n".join(lines)


def value(results, scenario, transport, metric):
    for t in results[scenario]["transports"]:
        if t["name"] == transport:
            return t["values"][metric]
    raise KeyError(transport)


def closing(r):
    v = lambda s, t, m: value(r, s, t, m)  # noqa: E731
    out = []
    # RDMA against TCP/IP: latency, bandwidth, CPU, copies
    lat = {t: v("latency", t, "small_p50_us") for t in ("ib", "roce", "iwarp", "tcp")}
    agree = lat["tcp"] > max(lat["ib"], lat["roce"], lat["iwarp"])
    out.append(
        f"* **RDMA against TCP/IP, latency.** A 64 B write completes in {fmt(lat['ib'])} us over "
        f"InfiniBand, {fmt(lat['roce'])} over RoCEv2 and {fmt(lat['iwarp'])} over iWARP, against "
        f"{fmt(lat['tcp'])} us over TCP sockets: "
        + ("the claim holds, " if agree else "the claim does not hold here, ")
        + f"though by {fmt(lat['tcp'] / lat['roce'])}x over RoCEv2, less than the \"order of "
        "magnitude\" the claim usually quotes: the model charges TCP a system call, a copy and the "
        "kernel's segment work at both ends, not the scheduler's wake-up of a blocked receiver, "
        "interrupt moderation or cache misses, which make up much of a real kernel's round trip.")
    gp = {t: v("long", t, "goodput_gbps") for t in ("ib", "roce", "iwarp", "tcp")}
    out.append(
        f"* **Bandwidth.** One long transfer reaches {fmt(gp['ib'])} Gb/s over InfiniBand, "
        f"{fmt(gp['roce'])} over RoCEv2, {fmt(gp['iwarp'])} over iWARP and {fmt(gp['tcp'])} over "
        "TCP: " + ("as claimed, RDMA runs at line rate and TCP is held below it by one receiving "
                   "core's segment work and copy" if gp["tcp"] < min(gp["ib"], gp["roce"]) else
                   "TCP keeps up here, unlike the claim") + ".")
    cpu = {t: v("long", t, "cpu_us_per_GB") for t in ("roce", "tcp")}
    cp = v("long", "tcp", "copies_per_byte")
    out.append(
        f"* **CPU and copies.** Moving a GB costs the hosts {fmt(cpu['tcp'])} us of CPU over TCP "
        f"and {fmt(cpu['roce'])} us over RoCEv2 (a post and a poll per message), "
        f"{fmt(cpu['tcp'] / cpu['roce'])}x less; TCP copies every byte {fmt(cp)} times, RDMA none. "
        "This row agrees with the claim by construction: the costs are the model's parameters "
        "(`nic.host_cost`, sourced in docs/config.md), and the run only counts them.")
    # InfiniBand against RoCE against iWARP
    inc = {t: v("incast", t, "fct_p99_us") for t in ("ib", "roce", "roce-lossy", "iwarp", "tcp")}
    small = {t: v("incast", t, "small_p99_us") for t in ("ib", "roce", "roce-lossy", "iwarp", "tcp")}
    out.append(
        f"* **InfiniBand best, RoCE close.** In the incast the last message completes after "
        f"{fmt(inc['ib'])} us over InfiniBand and {fmt(inc['roce'])} us over RoCEv2 with PFC: "
        + ("as close as claimed" if abs(inc["roce"] / inc["ib"] - 1) < 0.1 else "not as close as claimed")
        + f"; the bystander's 64 B writes wait {fmt(small['ib'])} us (p99) behind the credits "
        f"against {fmt(small['roce'])} us behind PFC"
        + (", InfiniBand ahead" if small["ib"] < small["roce"] else ", RoCE ahead") + ". "
        f"Without PFC RoCEv2 takes {fmt(inc['roce-lossy'])} us "
        f"({fmt(v('incast', 'roce-lossy', 'retransmitted'))} packets resent): RoCE's weakness at "
        "scale is the fabric it needs, lossless and tuned, which is where the claim puts it.")
    ws = {t: v("websearch-70", t, "slowdown_le_4KiB_p99") for t in ("ib", "roce", "iwarp", "tcp")}
    best = min(ws, key=lambda t: ws[t])
    out.append(
        f"* **Under load.** At 70% WebSearch load on the k=8 fat-tree, the p99 slowdown of messages "
        f"up to 4 KiB is {fmt(ws['ib'])} over InfiniBand, {fmt(ws['roce'])} over RoCEv2, "
        f"{fmt(ws['iwarp'])} over iWARP and {fmt(ws['tcp'])} over TCP; the best is {best}"
        + (", as the claimed ranking has it." if best == "ib" else
           ", which the claimed ranking does not predict; few samples (1 ms of arrivals) and "
           "congestion control settings left at their defaults bound this row."))
    iw_gap = v("long", "iwarp", "goodput_gbps") / v("long", "roce", "goodput_gbps")
    out.append(
        f"* **iWARP behind because of TCP.** On a clean fabric iWARP's long transfer runs at "
        f"{fmt(iw_gap * 100)}% of RoCEv2's goodput and its 64 B latency is "
        f"{fmt(lat['iwarp'] / lat['roce'])}x RoCEv2's: the model's RNIC does TCP in hardware, so "
        "the claim that TCP itself makes iWARP slower shows only as start-up (slow start) and "
        "as TCP's reaction to loss and queues (the incast, where it fills buffers), not as a "
        "per-packet cost. Where real iWARP NICs lag is their implementations, which the model "
        "does not have.")
    wan = {t: v("wan", t, "fct_p99_us") for t in ("ib", "roce", "roce-lossy", "iwarp", "tcp")}
    best = min(wan, key=lambda t: wan[t])
    out.append(
        f"* **The wide-area link.** Over 10 ms and 0.01% loss the slower transfer completes after "
        f"{fmt(wan['iwarp'] / 1000)} ms over iWARP and {fmt(wan['tcp'] / 1000)} ms over TCP, "
        f"{fmt(wan['roce'] / 1000)} ms over RoCEv2 (with a PFC headroom no switch has), "
        f"{fmt(wan['roce-lossy'] / 1000)} ms without PFC and {fmt(wan['ib'] / 1000)} ms over "
        f"InfiniBand. The fastest is {best}: "
        + ("the claim that iWARP is the choice for wide-area links holds."
           if best in ("iwarp", "tcp") else
           "at this loss rate go-back-N over a round trip still beats TCP's window growth, so "
           "the claim that iWARP is the choice for wide-area links holds for its other reason, "
           "that it needs nothing of the network (no PFC headroom, no credits across the link), "
           "not for speed."))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rdmasim", default=os.path.join(os.getcwd(), "src", "rdmasim"))
    ap.add_argument("--runs", default="compare-doc")
    ap.add_argument("--out", default=os.path.join(TOP, "docs", "transports.md"))
    args = ap.parse_args()
    results = {}
    figures = os.path.join(os.path.dirname(os.path.abspath(args.out)), "transports")
    os.makedirs(figures, exist_ok=True)
    for name, path, *_ in SCENARIOS:
        print(f"  compare {path}", file=sys.stderr)
        results[name] = run(args.rdmasim, os.path.abspath(args.runs), name, f"examples/{path}", figures)
    doc = [
        "# InfiniBand, RoCEv2, iWARP and TCP, measured",
        "",
        "Written by `make compare-doc` (scripts/transports_doc.py): each scenario below is an "
        "`examples/compare-*.yaml` configuration run by `rdmasim compare` once per transport, and "
        "every number is what that transport's run wrote (`summary.json`, `messages.csv`); the "
        "runs stay in `compare-doc/SCENARIO/TRANSPORT/` of the build directory, and each scenario's "
        "figure (`compare.svg`) is copied to `docs/transports/`.",
        "",
        "The transports, each the same configuration with these overrides after the file's own:",
        "",
        "| transport | keys `rdmasim compare` sets |",
        "|---|---|",
        "| ib | `topology.fabric=infiniband`, `nic.transport=roce`, `infiniband.cc.enable=true` |",
        "| roce | `topology.fabric=roce`, `nic.transport=roce` (PFC and DCQCN as the file has them) |",
        "| roce-lossy | as roce, and `nic.pfc=false`, `topology.switch_defaults.pfc.enable=false` |",
        "| iwarp | as roce-lossy, with `nic.transport=iwarp` (RDMAP/DDP/MPA over TCP) |",
        "| tcp | as roce-lossy, with `nic.transport=tcp` (plain sockets, host costs) |",
        "",
        "Columns: completion times (FCT) of messages up to 4 KiB and of all messages, p50 and p99 "
        "(nearest rank); goodput, the bytes completed x 8 over the time from the first start to "
        "the last end; slowdown, completion time over the time alone on the network, by size; "
        "frames dropped by full queues and lost on links; PFC pause frames sent; packets or "
        "segments sent again; retransmission timeouts; the hosts' CPU time per GB delivered and "
        "bytes copied per byte (docs/config.md, \"Plain TCP and host costs\").",
        "",
        "What bounds every row: one run per scenario and seed; TCP is NewReno (CUBIC on the "
        "wide-area link) without ECN, and RoCEv2 runs DCQCN with the project's defaults, none "
        "tuned for the scenario; an RNIC's TCP costs the host nothing; `tcp` receives on one core "
        "per host and counts the `recv()` system call without spending it; no "
        "scenario models PCIe (see README, \"PCIe and GPUDirect\", for what it adds).",
        "",
    ]
    for name, path, title, metrics, text in SCENARIOS:
        doc += [f"## {title}", "", f"`rdmasim compare examples/{path}`", "", table(results[name], metrics),
                "", text, "", f"The scenario's figure: [transports/{name}.svg](transports/{name}.svg).", ""]
    doc += ["## What the measurements say about the claims", "",
            "The claims are the usual ones: RDMA beats TCP/IP in latency, bandwidth, CPU use and "
            "copies; InfiniBand performs best, RoCE comes close but is weaker at scale, iWARP "
            "lags because of TCP and is the choice for wide-area links. The rows on cost and "
            "deployment (switches, NICs, the skills a lossless fabric needs) are outside what a "
            "simulator measures; below, the rest.", "",
            closing(results), ""]
    with open(args.out, "w") as f:
        f.write("\n".join(doc))
    print(f"  wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
