#!/bin/sh
# Build the fuzz targets with clang into OUTDIR, one way or the other:
#   build.sh fuzz OUTDIR      libFuzzer + AddressSanitizer + UBSan (run.sh)
#   build.sh coverage OUTDIR  source-based coverage, driven by replay_main.c
#                             over saved inputs (coverage.sh)
# No source is listed here: make passes the lists automake builds
# librdmacodec, librdmasim, the capture reader and the replay analysis from
# (CODEC_SOURCES, SIM_SOURCES, CAPTURE_SOURCES, REPLAY_LIB_SOURCES) and those of
# each target's replay program (FRAME_SOURCES, ...: the target, replay_main.c
# and what else it needs), and the pkg-config flags configure found
# (FUZZ_CFLAGS, FUZZ_LIBS).
set -eu
mode=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CC_FUZZ=${CC_FUZZ:-clang}
: "${CODEC_SOURCES:?run through make fuzz or make fuzz-coverage}"
: "${SIM_SOURCES:?run through make fuzz or make fuzz-coverage}"
: "${CAPTURE_SOURCES:?run through make fuzz or make fuzz-coverage}"
: "${REPLAY_LIB_SOURCES:?run through make fuzz or make fuzz-coverage}"
cflags="-g -std=gnu11 -I$top/codec -I$top/sim -I$top/capture -I$top/replay ${FUZZ_CFLAGS:-}"
case $mode in
fuzz)
    cflags="$cflags -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
    ldflags="-fsanitize=fuzzer,address,undefined"
    driver=no # libFuzzer brings its own main()
    ;;
coverage)
    cflags="$cflags -O0 -fprofile-instr-generate -fcoverage-mapping"
    ldflags="-fprofile-instr-generate"
    driver=yes
    ;;
*)
    echo "build.sh: mode is fuzz or coverage" >&2
    exit 2
    ;;
esac

# Compile each library source once; every target links what it needs.
mkdir -p "$out/obj"
compile() { # library name, sources
    lib=$1
    shift
    objs=""
    for src in "$@"; do
        case $src in *.c) ;; *) continue ;; esac
        obj="$out/obj/$lib-$(basename "$src" .c).o"
        # shellcheck disable=SC2086
        $CC_FUZZ $cflags -c -o "$obj" "$top/$src"
        objs="$objs $obj"
    done
    echo "$objs"
}
# shellcheck disable=SC2086
codec=$(compile codec $CODEC_SOURCES)
# shellcheck disable=SC2086
sim=$(compile sim $SIM_SOURCES)
# shellcheck disable=SC2086
capture=$(compile capture $CAPTURE_SOURCES)
# shellcheck disable=SC2086
replay=$(compile replay $REPLAY_LIB_SOURCES)

for target in frame pcap iwarp config replay; do
    case $target in
    config) objs="$sim $codec" ;;
    pcap) objs="$capture $codec" ;;
    replay) objs="$replay $codec" ;;
    *) objs="$codec" ;;
    esac
    upper=$(echo "$target" | tr a-z A-Z)
    eval "sources=\${${upper}_SOURCES:?run through make fuzz or make fuzz-coverage}"
    files=""
    for src in $sources; do
        case $src in
        */replay_main.c) if [ "$driver" = yes ]; then files="$files $top/$src"; fi ;;
        *.c) files="$files $top/$src" ;;
        esac
    done
    # shellcheck disable=SC2086
    $CC_FUZZ $cflags $ldflags -o "$out/fuzz_$target" $files $objs ${FUZZ_LIBS:-}
done
