#!/bin/sh
# bench.sh RDMASIM GEN_BENCH PCAP - whole-process frames per second of
# `rdmasim replay` (text report) on a 1,000,000-frame RoCEv2 capture over
# 1,000 queue pairs, best of three runs after one that warms the page
# cache: first with whole frames (ICRC checked on every frame), then with
# the same frames cut to 128 bytes, as `tcpdump -s 128` or a truncating
# mirror port captures them. The capture is removed afterwards.
set -e
rdmasim=$1
gen=$2
pcap=$3
frames=1000000
qps=1000
trap 'rm -f "$pcap"' EXIT
for snaplen in 0 128; do
    "$gen" "$pcap" $frames $qps $snaplen
    size=$(wc -c < "$pcap")
    "$rdmasim" replay "$pcap" > /dev/null
    best=0
    for run in 1 2 3; do
        start=$(date +%s%N)
        "$rdmasim" replay "$pcap" > /dev/null
        end=$(date +%s%N)
        ns=$((end - start))
        if [ $best -eq 0 ] || [ $ns -lt $best ]; then
            best=$ns
        fi
    done
    if [ $snaplen -eq 0 ]; then what="whole frames"; else what="snap length $snaplen"; fi
    echo "rdmasim replay: $frames frames, $qps queue pairs, $what, $((size / 1000000)) MB:" \
         "$((best / 1000000)) ms, $((frames * 1000000000 / best)) frames/s"
done
