#!/bin/sh
# dist.am lists every file git tracks, so that the release tarball holds
# the whole tree and nothing built in it. Skipped outside a git checkout
# (a tarball has no history to compare with, even unpacked inside one).
set -eu
cd "$TOP_SRCDIR"
if ! command -v git >/dev/null ||
   [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
    echo "not a git checkout: skipped"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scripts/dist_list.sh "$tmp/dist.am"
if ! diff -u dist.am "$tmp/dist.am"; then
    echo "dist.am is stale: run scripts/dist_list.sh and commit it"
    exit 1
fi
echo "ok: dist.am lists the $(grep -c '^	' dist.am) tracked files"
