#!/bin/sh
# make installcheck: what `make install` put under DESTDIR works as a user
# meets it: a program outside the tree builds through pkg-config against
# the installed header and library and runs; the installed command runs;
# the manual pages render without a warning; the bash completion loads.
#   installcheck.sh SRCDIR DESTDIR BINDIR LIBDIR MANDIR COMPLETIONDIR
set -eu
srcdir=$1 destdir=$2 bindir=$2$3 libdir=$2$4 mandir=$2$5 compdir=$2$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$destdir PKG_CONFIG_DISABLE_UNINSTALLED=1
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_DISABLE_UNINSTALLED
# shellcheck disable=SC2046
${CC:-cc} ${SANITIZER_FLAGS:-} -o "$tmp/external" "$srcdir/tests/install/external.c" \
    $(pkg-config --cflags --libs librdmacodec)
LD_LIBRARY_PATH=$libdir "$tmp/external"
echo "ok: a program built with pkg-config --cflags --libs librdmacodec runs"

LD_LIBRARY_PATH=$libdir "$bindir/rdmasim" --version
LD_LIBRARY_PATH=$libdir "$bindir/rdmasim" help report > /dev/null
echo "ok: the installed rdmasim runs"

for page in man1/rdmasim.1 man5/rdmasim-config.5; do
    test -s "$mandir/$page"
    if command -v groff > /dev/null; then
        groff -man -Tutf8 -ww -z "$mandir/$page" 2> "$tmp/warnings"
        if [ -s "$tmp/warnings" ]; then cat "$tmp/warnings"; exit 1; fi
    fi
    echo "ok: $page"
done

bash -n "$compdir/rdmasim"
bash -c '. "$1" && complete -p rdmasim' sh "$compdir/rdmasim"
echo "ok: the bash completion loads"
