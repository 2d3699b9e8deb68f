#!/bin/sh
# Replay every saved fuzz input (and the real captures) through the fuzz
# targets built without libFuzzer; any crash or sanitizer report fails.
set -eu
src=${TOP_SRCDIR:-.}
build=${TOP_BUILDDIR:-.}
"$build/tests/fuzz/replay_frame" "$src/tests/fuzz/regressions/frame"
"$build/tests/fuzz/replay_pcap" "$src/tests/fuzz/regressions/pcap" "$src/pcaps/real"
