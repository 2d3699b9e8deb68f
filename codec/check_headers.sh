#!/bin/sh
# check_headers.sh - the codec's users include only its installed headers.
# The public/private split is deliberate: what sim/, src/, capture/,
# replay/ and bench/ may include from codec/ is what `make install` puts
# in the include directory (INSTALLED, automake's include_HEADERS), and
# nothing else; tests may reach inside. Prints each offending line.
set -eu
src=${TOP_SRCDIR:-.}
: "${INSTALLED:?run through make check}"
installed=""
for h in $INSTALLED; do
    installed="$installed $(basename "$h")"
done
private=""
for h in "$src"/codec/*.h; do
    name=$(basename "$h")
    case " $installed " in *" $name "*) ;; *) private="$private $name" ;; esac
done
status=0
for name in $private; do
    if grep -rn --include='*.c' --include='*.h' "^#[[:space:]]*include[[:space:]]*\"\(.*/\)\?$name\"" \
        "$src/sim" "$src/src" "$src/capture" "$src/replay" "$src/bench"; then
        status=1
    fi
done
[ $status -eq 0 ] || echo "check_headers.sh: the lines above include codec-private headers" >&2
exit $status
