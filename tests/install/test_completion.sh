#!/bin/sh
# The bash completion as built (completions/rdmasim): commands, each
# command's options, configuration keys after --set, directories after
# `report` and `compare`, transports after `compare --transports`. Each
# case runs the completion function in bash as readline would, with
# COMP_WORDS, and compares COMPREPLY.
set -u
command -v bash >/dev/null || { echo "bash is not installed: skipped"; exit 77; }
comp=${TOP_BUILDDIR:-.}/completions/rdmasim
fail=0

complete_words() # WORD... (the last is the one being completed)
{
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rdmasim
             printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' sh "$comp" "$RDMASIM" "$@"
}

expect() # WANT WORD...
{
    want=$1
    shift
    got=$(complete_words "$@")
    if [ "$got" = "$want" ]; then
        echo "ok: rdmasim $*"
    else
        echo "FAIL: rdmasim $*: got '$got', want '$want'"
        fail=1
    fi
}

expect "--help --version compare decode help replay report sim " ""
expect "replay report " re
expect "sim " help s
expect "--out " sim --o
expect "--quiet " sim c.yaml --q
expect "--json " decode --j
expect "--out " report --o
expect "--transports " compare c.yaml --tr
expect "roce roce-lossy " compare c.yaml --transports ro
expect "nic.max_rd_atomic= nic.mpa_markers= nic.mtu= " sim c.yaml --set nic.m
expect "trace= trace_limit= " sim c.yaml -S trace
tmp=$(mktemp -d)
mkdir "$tmp/run1" && : > "$tmp/run.txt"
expect "$tmp/run1 " report "$tmp/run"
rm -rf "$tmp"
exit $fail
