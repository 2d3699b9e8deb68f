#!/bin/sh
# Build the libFuzzer targets with clang (ASan + UBSan, build.sh) and run
# each for FUZZ_SECONDS, from a seed corpus of the project's captures and
# configurations (make_seeds.py). Inputs that crash are saved in
# tests/fuzz/regressions/TARGET/, where `make check` replays them from then
# on. FUZZ_TARGETS picks targets (default: all); FUZZ_WORKDIR keeps the
# binaries, corpora and logs (coverage.sh measures what a corpus reaches).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-frame pcap iwarp config replay}
work=${FUZZ_WORKDIR:-$(mktemp -d)}
mkdir -p "$work"

/usr/bin/python3 "$here/make_seeds.py" "$top" "$work/seeds" ${GEN_IWARP:-}
"$here/build.sh" fuzz "$work"

status=0
for target in $targets; do
    mkdir -p "$work/corpus/$target" "$here/regressions/$target"
    # The configuration loader writes files and builds networks: give it
    # room for ASan's shadow and the networks max_memory admits. It calls
    # libfyaml, whose own leaks (lsan.supp) are only told apart with stacks
    # unwound through the library, which needs the slow unwinder.
    case $target in
    config)
        limits="-rss_limit_mb=4096 -timeout=30"
        env="ASAN_OPTIONS=fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
             LSAN_OPTIONS=suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
        ;;
    *)
        limits="-timeout=10"
        env=""
        ;;
    esac
    echo "fuzz_$target: ${seconds}s"
    # shellcheck disable=SC2086
    if ! env $env "$work/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 $limits \
        -artifact_prefix="$here/regressions/$target/" \
        "$work/corpus/$target" "$work/seeds/$target" >"$work/fuzz_$target.log" 2>&1; then
        status=1
        grep -E "ERROR|SUMMARY|property" "$work/fuzz_$target.log" | head -5
    fi
    grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|DONE" "$work/fuzz_$target.log" || true
done
[ -n "${FUZZ_WORKDIR:-}" ] || rm -rf "$work"
exit $status
