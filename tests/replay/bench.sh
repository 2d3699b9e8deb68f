#!/bin/sh
# bench.sh RDMASIM GEN_BENCH PCAP - whole-process speed of `rdmasim replay`
# (text report) on a 1,000,000-frame RoCEv2 capture over 1,000 queue pairs:
# first with whole frames (ICRC checked on every frame), then with the same
# frames cut to 128 bytes, as `tcpdump -s 128` or a truncating mirror port
# captures them. The capture is removed afterwards.
#
# Each is run once to bring the file into the page cache, then five times;
# the run with the least CPU time counts. Printed: wall time and frames/s,
# and the CPU time (user + system) with frames per CPU second, the rate per
# core. Run it through `libtool --mode=execute` (as `make bench-replay`
# does) so that the programs are measured, not libtool's wrapper scripts.
#
# The system time is mostly the kernel mapping the file's page-cache pages,
# and depends on how the file was written: gen_bench writes in 8 MiB
# pieces, as cp or a capture tool writing large blocks does. The same file
# written in 4 KiB pieces (libpcap's pcap_dump through stdio's default
# buffer) sits in small page-cache folios and costs about twice the system
# time to map.
set -e
rdmasim=$1
gen=$2
pcap=$3
frames=1000000
qps=1000
runs=5
trap 'rm -f "$pcap"' EXIT
for snaplen in 0 128; do
    "$gen" "$pcap" $frames $qps $snaplen
    size=$(wc -c < "$pcap")
    if [ $snaplen -eq 0 ]; then what="whole frames"; else what="snap length $snaplen"; fi
    /usr/bin/python3 - "$runs" "$frames" "$qps" "$what" "$size" "$rdmasim" replay "$pcap" <<'EOF'
import resource, subprocess, sys, time
runs, frames, qps, what, size, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6:]
best = None
for run in range(runs + 1):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, sys_ = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    if run and (best is None or user + sys_ < best[1] + best[2]):
        best = (wall, user, sys_)
wall, user, sys_ = best
print("rdmasim replay: %d frames, %s queue pairs, %s, %d MB written in 8 MiB pieces:"
      % (frames, qps, what, size // 1000000))
print("  wall %.0f ms, %.2f M frames/s; CPU %.3f s user + %.3f s sys = %.3f s, %.2f M frames/s per core"
      % (wall * 1e3, frames / wall / 1e6, user, sys_, user + sys_, frames / (user + sys_) / 1e6))
EOF
done
