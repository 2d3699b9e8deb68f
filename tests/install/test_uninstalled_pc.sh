#!/bin/sh
# librdmacodec-uninstalled.pc: a program outside the tree builds against the
# library in the build tree through pkg-config alone, and runs.
set -eu
command -v pkg-config >/dev/null || { echo "pkg-config is not installed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PKG_CONFIG_PATH=$TOP_BUILDDIR/codec
export PKG_CONFIG_PATH
pkg-config --exists librdmacodec-uninstalled
# shellcheck disable=SC2046
${CC:-cc} ${SANITIZER_FLAGS:-} -o "$tmp/external" "$TOP_SRCDIR/tests/install/external.c" \
    $(pkg-config --cflags --libs librdmacodec)
"$tmp/external" > "$tmp/out"
cat "$tmp/out"
grep -q '^RC RDMA WRITE Only PSN 9209053 to 0xaaab09dd5000$' "$tmp/out"
grep -q '^encoded again: 94 bytes, PSN 9209054, ICRC 0x[0-9a-f]* ok$' "$tmp/out"
