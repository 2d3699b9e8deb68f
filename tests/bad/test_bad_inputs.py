#!/usr/bin/python3
"""Hostile inputs and the outcome each must have (tests/bad/expected.tsv):
an exit status and exactly one error line on stderr naming the file (and,
for a configuration, the line and column, or the --set override at fault)
and saying what is wrong; never
a crash or a hang, and no output left behind: `rdmasim replay` runs with
--timeline and `rdmasim sim` with --out, and neither may leave its file or
directory."""
import os
import subprocess
import sys
import tempfile

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
HERE = os.path.join(os.environ.get("TOP_SRCDIR", "."), "tests", "bad")


def cases():
    with open(os.path.join(HERE, "expected.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, command, options, status, at_line, token, message = line.rstrip("\n").split("\t")
            yield name, command, options.split(), int(status), at_line, token, message


def position(path, at_line, token):
    """FILE:LINE:COL: with COL where token first occurs on that line."""
    token = token.encode().decode("unicode_escape").encode("latin-1")
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    text = lines[int(at_line) - 1] if int(at_line) <= len(lines) else b""
    col = text.index(token) + 1 if token else 1
    return "%s:%s:%d: " % (path, at_line, col)


def run(name, command, options, status, at_line, token, message, tmp):
    path = os.path.join(HERE, name)
    output = os.path.join(tmp, "out")
    extra = {"replay": ["--timeline", output], "sim": ["--out", output]}.get(command, [])
    p = subprocess.run([RDMASIM, command, *options, *extra, path], capture_output=True,
                       timeout=60, errors="replace")
    errors = p.stderr.strip().splitlines()
    problems = []
    if p.returncode != status:
        problems.append("exit %d, expected %d" % (p.returncode, status))
    if len(errors) != 1:
        problems.append("%d stderr lines, expected 1: %r" % (len(errors), errors))
    elif at_line and not errors[0].startswith(position(path, at_line, token)):
        problems.append("stderr %r does not start with %r" % (errors[0], position(path, at_line, token)))
    elif message not in errors[0] or (status == 2 and path not in errors[0]
                                      and not errors[0].startswith("--set ")):
        problems.append("stderr %r lacks %r or the file (or --set) name" % (errors[0], message))
    left = sorted(os.listdir(tmp))
    if left:
        problems.append("left behind: %s" % left)
    return problems


def main():
    failures = 0
    for case in cases():
        with tempfile.TemporaryDirectory() as tmp:
            problems = run(*case, tmp)
        print("%s %s %s" % ("FAIL" if problems else "ok  ", case[1], case[0]))
        for problem in problems:
            print("     " + problem)
        failures += bool(problems)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
