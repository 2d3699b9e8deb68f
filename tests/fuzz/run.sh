#!/bin/sh
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for
# FUZZ_SECONDS. Inputs that crash are saved in tests/fuzz/regressions/TARGET/,
# where `make check` replays them from then on.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seconds=${FUZZ_SECONDS:-60}
work=${FUZZ_WORKDIR:-$(mktemp -d)}
CC_FUZZ=${CC_FUZZ:-clang}
flags="-g -O1 -std=gnu11 -I$top/codec -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
codec="decode.c encode.c icrc.c names.c opcode.c format_json.c format_summary.c"
sources=""
for f in $codec; do sources="$sources $top/codec/$f"; done

/usr/bin/python3 "$here/make_seeds.py" "$top" "$work/seeds"
# shellcheck disable=SC2086
$CC_FUZZ $flags -o "$work/fuzz_frame" "$here/fuzz_frame.c" $sources -lisal
# shellcheck disable=SC2086
$CC_FUZZ $flags -o "$work/fuzz_pcap" "$here/fuzz_pcap.c" $sources -lisal -lpcap

status=0
for target in frame pcap; do
    mkdir -p "$work/corpus/$target" "$here/regressions/$target"
    echo "fuzz_$target: ${seconds}s"
    if ! "$work/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$here/regressions/$target/" \
        "$work/corpus/$target" "$work/seeds/$target" >"$work/fuzz_$target.log" 2>&1; then
        status=1
        grep -E "ERROR|SUMMARY|property" "$work/fuzz_$target.log" | head -5
    fi
    grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|DONE" "$work/fuzz_$target.log" || true
done
[ -n "${FUZZ_WORKDIR:-}" ] || rm -rf "$work"
exit $status
