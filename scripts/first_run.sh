#!/bin/sh
# first_run.sh - what ./quickstart shows once rdmasim is built: simulate a
# bundled example with a pcap trace, decode a few of its frames, replay
# the trace, write the HTML report, and say where to look.
#
#   scripts/first_run.sh [OUTDIR]     (default quickstart.out; RDMASIM names
#                                      the command, default src/rdmasim)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rdmasim=${RDMASIM:-$top/src/rdmasim}
out=${1:-quickstart.out}

step() { printf '\n==> %s\n' "$*"; }

step "simulate: 16 hosts write 1 MiB each to h16 over a PFC fabric; h16's port traced"
"$rdmasim" sim "$top/examples/fabric-incast-pfc.yaml" --out "$out" --set 'trace=[h16]'

step "decode: the first frames of the trace"
"$rdmasim" decode "$out/pcap/h16-0.pcap" | head -n 5

step "replay: the trace as conversations, messages and anomalies"
"$rdmasim" replay --top 4 "$out/pcap/h16-0.pcap"

step "report: one HTML page of the run"
"$rdmasim" report "$out"

cat <<EOT

Where to look:
  the report      $out/report.html (open it in a browser; it needs no network)
  the totals      $out/summary.json
  every message   $out/messages.csv (completion time, ideal time, slowdown)
  the trace       $out/pcap/h16-0.pcap (rdmasim decode, tshark and Wireshark read it)
  configuration   docs/config.md or man rdmasim-config; more runs in examples/
  the tests       make check
EOT
