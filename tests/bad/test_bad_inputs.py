#!/usr/bin/python3
"""Hostile inputs and the outcome each must have (tests/bad/expected.tsv):
an exit status and exactly one error line on stderr, which begins with
where the fault is (FILE:LINE:COL: for a configuration error with a line,
else `rdmasim COMMAND: FILE: ` for a file refused) followed at once by
what is wrong; nothing on stdout but the frames read before a file turned
out damaged; never a crash or a hang, and no output left behind:
`rdmasim replay` runs with --timeline and `rdmasim sim` with --out, and
neither may leave its file or directory. Every case reports every problem
it has."""
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.environ.get("TOP_SRCDIR", "."), "tests"))
from testlib import script_limit  # noqa: E402

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
    if p.returncode < 0:
        problems.append("killed by signal %d" % -p.returncode)
    elif p.returncode != status:
        problems.append("exit %d, expected %d" % (p.returncode, status))
    if at_line:
        want = position(path, at_line, token) + message
    elif message.startswith("--set "):
        want = message  # the override at fault, not the file
    elif status == 2:
        want = "rdmasim %s: %s: %s" % (command, path, message)
    else:
        want = "rdmasim %s: %s" % (command, message)
    if len(errors) != 1:
        problems.append("%d stderr lines, expected 1: %r" % (len(errors), errors))
    if not errors or not errors[0].startswith(want):
        problems.append("stderr %r does not start with %r" % (errors[:1], want))
    # frames read before the damage are listed, and the frames of a file
    # read to its end (status 0 or 1); nothing else is printed
    if p.stdout and not (command in ("decode", "replay") and (message.startswith("frame ") or status != 2)):
        problems.append("stdout not empty: %r" % p.stdout[:200])
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
    script_limit(120)
    sys.exit(main())
