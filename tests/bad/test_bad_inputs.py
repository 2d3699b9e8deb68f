#!/usr/bin/python3
"""Hostile inputs and the outcome each must have (tests/bad/expected.tsv):
an exit status, and exactly one error line on stderr naming the file and
saying what is wrong; never a crash or a hang."""
import os
import subprocess
import sys

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
HERE = os.path.join(os.environ.get("TOP_SRCDIR", "."), "tests", "bad")


def cases():
    with open(os.path.join(HERE, "expected.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, options, status, message = line.rstrip("\n").split("\t")
            yield name, options.split(), int(status), message


def main():
    failures = 0
    for name, options, status, message in cases():
        path = os.path.join(HERE, name)
        p = subprocess.run([RDMASIM, "decode", *options, path], capture_output=True,
                           text=True, timeout=30)
        errors = p.stderr.strip().splitlines()
        problems = []
        if p.returncode != status:
            problems.append("exit %d, expected %d" % (p.returncode, status))
        if len(errors) != 1:
            problems.append("%d stderr lines, expected 1: %r" % (len(errors), errors))
        elif message not in errors[0] or (status == 2 and path not in errors[0]):
            problems.append("stderr %r lacks %r or the file name" % (errors[0], message))
        print("%s %s" % ("FAIL" if problems else "ok  ", name))
        for problem in problems:
            print("     " + problem)
        failures += bool(problems)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
