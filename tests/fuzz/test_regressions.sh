#!/bin/sh
# Replay every saved fuzz input (and the real captures) through the fuzz
# targets built without libFuzzer; any crash or sanitizer report fails.
set -eu
src=${TOP_SRCDIR:-.}
build=${TOP_BUILDDIR:-.}

"$build/tests/fuzz/replay_frame" "$src/tests/fuzz/regressions/frame"
"$build/tests/fuzz/replay_pcap" "$src/tests/fuzz/regressions/pcap" "$src/pcaps/real"
"$build/tests/fuzz/replay_iwarp" "$src/tests/fuzz/regressions/iwarp"
"$build/tests/fuzz/replay_replay" "$src/tests/fuzz/regressions/replay"
# leaks inside libfyaml itself, told apart by stacks unwound through it
# (lsan.supp); the options matter to sanitizer builds only
ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    LSAN_OPTIONS="suppressions=$src/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
    "$build/tests/fuzz/replay_config" "$src/tests/fuzz/regressions/config"
