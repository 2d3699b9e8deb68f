#!/bin/sh
# The lines of codec/, replay/ and capture/ (and of the configuration
# loader in sim/) that the fuzz inputs reach: every target built for
# source-based coverage (build.sh coverage) and run over its seed corpus,
# its saved regressions and, when FUZZ_WORKDIR holds one from `make fuzz`,
# the corpus fuzzing grew; then llvm-profdata merge and llvm-cov report.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tool() { # the versioned name Debian installs, else the plain one
    command -v "$1-14" || command -v "$1" || { echo "coverage.sh: $1 not found" >&2; exit 2; }
}
LLVM_PROFDATA=${LLVM_PROFDATA:-$(tool llvm-profdata)}
LLVM_COV=${LLVM_COV:-$(tool llvm-cov)}

/usr/bin/python3 "$here/make_seeds.py" "$top" "$work/seeds" ${GEN_IWARP:-}
"$here/build.sh" coverage "$work"
mkdir -p "$work/prof"
objects=""
for target in frame pcap iwarp config replay; do
    inputs="$work/seeds/$target $here/regressions/$target"
    if [ -n "${FUZZ_WORKDIR:-}" ] && [ -d "$FUZZ_WORKDIR/corpus/$target" ]; then
        inputs="$inputs $FUZZ_WORKDIR/corpus/$target"
    fi
    # shellcheck disable=SC2086
    LLVM_PROFILE_FILE="$work/prof/$target-%p.profraw" "$work/fuzz_$target" $inputs |
        sed "s/^/fuzz_$target: /"
    # the first binary is llvm-cov's argument, the others -object options
    objects="${objects:+$objects -object }$work/fuzz_$target"
done
"$LLVM_PROFDATA" merge -sparse "$work"/prof/*.profraw -o "$work/all.profdata"
# shellcheck disable=SC2086
"$LLVM_COV" report -instr-profile "$work/all.profdata" $objects "$top"/codec/*.c
echo
# shellcheck disable=SC2086
"$LLVM_COV" report -instr-profile "$work/all.profdata" $objects "$top"/replay/*.c "$top"/capture/*.c
echo
# shellcheck disable=SC2086
"$LLVM_COV" report -instr-profile "$work/all.profdata" $objects \
    "$top"/sim/config/*.c "$top"/sim/engine/units.c
