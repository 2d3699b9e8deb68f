#!/bin/sh
# dist_list.sh - write dist.am, the files `make dist` puts in the release
# tarball: every file git tracks (Makefile.am includes it as EXTRA_DIST).
# Naming files, not directories, keeps build products out of the tarball
# when the tree was built in place. Run it after adding or removing a
# file; tests/install/test_dist_list.sh fails while dist.am is stale.
#   scripts/dist_list.sh [OUT]     (default: dist.am at the top of the tree)
set -eu
out=$(cd "$(dirname "${1:-.}")" && pwd)/$(basename "${1:-dist.am}")
cd "$(dirname "$0")/.."
{
    echo "# dist.am - written by scripts/dist_list.sh: every file git tracks."
    printf 'dist_tracked ='
    git ls-files | grep -v -e '^\.gitignore$' -e '^dist\.am$' | LC_ALL=C sort |
        awk '{ printf " \\\n\t%s", $0 } END { print "" }'
} > "$out.tmp"
mv "$out.tmp" "$out"
