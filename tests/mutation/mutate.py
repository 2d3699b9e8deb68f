#!/usr/bin/python3
"""Measure what the test suites catch: plant one-line bugs (mutants) one at
a time in a scratch copy of the tree, run the tests each names, and print
CAUGHT or MISSED per mutant and the score.

    tests/mutation/mutate.py [--list FILE] [--only ID[,ID...]] [--keep] [--jobs N]
                             [--timeout SECONDS] [--workdir DIR] [--check-list]

The list (tests/mutation/mutants.txt) holds one mutant a line, fields
separated by a TAB:

    ID  FILE  ORIGINAL  REPLACEMENT  TEST [TEST...]

ORIGINAL must occur exactly once in FILE (a list gone stale after an edit
is reported, not guessed at); in ORIGINAL and REPLACEMENT, \\n stands for a
newline, \\t for a TAB and \\\\ for a backslash. A TEST is a test program or script of
`make check` (tests/sim/test_sim.py), optionally narrowed to unittest
names after a colon (tests/sim/test_sim.py:Loss.test_rnr_nak_waits_for_the_receive,
several joined with '+'). A mutant is CAUGHT when any of its tests fails
or runs past the timeout (a hang is a catch, but a slow one: it is marked),
MISSED when all pass, and INVALID when the mutated tree does not build.

The tree is copied (tracked files as they are in the working tree) into a
scratch directory, configured and built there once; each mutant is
applied, rebuilt incrementally, tested, and reverted in the copy. The
tree itself is never touched."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def unescape(text):
    """\\n is a newline and \\t a TAB in ORIGINAL and REPLACEMENT, \\\\ a backslash."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[text[i + 1]])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def parse(path):
    mutants = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 5:
                sys.exit(f"{path}:{n}: want 5 TAB-separated fields, got {len(fields)}")
            mid, file, orig, repl, tests = fields
            orig, repl = unescape(orig), unescape(repl)
            mutants.append({"id": mid, "file": file, "orig": orig, "repl": repl,
                            "tests": tests.split(), "line": n})
    return mutants


def sh(args, cwd, log, timeout=None, env=None):
    with open(log, "ab") as f:
        f.write(("$ " + " ".join(args) + "\n").encode())
        f.flush()
        try:
            p = subprocess.run(args, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout,
                               env=env, start_new_session=True)
            return p.returncode
        except subprocess.TimeoutExpired:
            return None


def copy_tree(dst):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=TOP, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = os.path.join(TOP, rel)
        if not os.path.lexists(src):
            continue
        os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel), follow_symlinks=False)


def run_test(tree, spec, timeout, log):
    """0 pass, 1 fail, None timeout (77, a skip, counts as not caught)."""
    path, _, names = spec.partition(":")
    env = dict(os.environ, RDMASIM=os.path.join(tree, "src", "rdmasim"), TOP_SRCDIR=tree,
               TOP_BUILDDIR=tree)
    if path.endswith(".py"):
        args = ["/usr/bin/python3", os.path.join(tree, path)] + (names.split("+") if names else [])
    elif path.endswith(".sh"):
        args = ["/bin/sh", os.path.join(tree, path)]
    else:
        args = [os.path.join(tree, path)]
    rc = sh(args, tree, log, timeout=timeout, env=env)
    if rc is None:
        return None
    return 0 if rc in (0, 77) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", default=os.path.join(HERE, "mutants.txt"))
    ap.add_argument("--only", help="comma-separated mutant IDs")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per test run")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--workdir", help="scratch directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--check-list", action="store_true",
                    help="only check that each ORIGINAL occurs once in its FILE of this tree")
    a = ap.parse_args()
    mutants = parse(a.list)
    if a.check_list:
        stale = 0
        for m in mutants:
            try:
                with open(os.path.join(TOP, m["file"])) as f:
                    n = f.read().count(m["orig"])
            except OSError:
                n = None
            if n != 1:
                stale += 1
                print(f"STALE {m['id']}: {m['file']}: " + ("no such file" if n is None else f"original found {n} times"))
        print(f"{len(mutants) - stale} of {len(mutants)} mutants apply")
        return 1 if stale else 0
    if a.only:
        want = set(a.only.split(","))
        unknown = want - {m["id"] for m in mutants}
        if unknown:
            sys.exit(f"unknown mutant ids: {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m["id"] in want]
    work = a.workdir or tempfile.mkdtemp(prefix="rdmasim-mutation.")
    tree = os.path.join(work, "tree")
    log = os.path.join(work, "mutation.log")
    print(f"mutation: {len(mutants)} mutants from {os.path.relpath(a.list, TOP)}; scratch copy {tree}; log {log}",
          flush=True)
    try:
        if not os.path.exists(os.path.join(tree, "Makefile")):
            copy_tree(tree)
            for step in (["autoreconf", "-fi"], ["./configure", "--quiet"],
                         ["make", "-j" + a.jobs], ["make", "-j" + a.jobs, "check", "TESTS="]):
                if sh(step, tree, log) != 0:
                    sys.exit(f"mutation: the unmutated copy failed at {' '.join(step)}; see {log}")
        results = []
        for m in mutants:
            path = os.path.join(tree, m["file"])
            try:
                with open(path) as f:
                    text = f.read()
            except OSError as e:
                results.append((m, "STALE", str(e), 0))
                print(f"STALE    {m['id']}: {e}", flush=True)
                continue
            if text.count(m["orig"]) != 1:
                why = f"original text found {text.count(m['orig'])} times in {m['file']}"
                results.append((m, "STALE", why, 0))
                print(f"STALE    {m['id']}: {why}", flush=True)
                continue
            start = time.monotonic()
            with open(path, "w") as f:
                f.write(text.replace(m["orig"], m["repl"]))
            try:
                with open(log, "a") as f:
                    f.write(f"\n==== mutant {m['id']}: {m['file']}: {m['orig']!r} -> {m['repl']!r}\n")
                built = (sh(["make", "-j" + a.jobs], tree, log) == 0 and
                         sh(["make", "-j" + a.jobs, "check", "TESTS="], tree, log) == 0)
                if not built:
                    verdict, by = "INVALID", "does not build"
                else:
                    verdict, by = "MISSED", ""
                    for spec in m["tests"]:
                        rc = run_test(tree, spec, a.timeout, log)
                        if rc != 0:
                            verdict = "CAUGHT"
                            by = spec + (f" (timeout after {a.timeout:.0f} s)" if rc is None else "")
                            break
            finally:
                with open(path, "w") as f:
                    f.write(text)
            secs = time.monotonic() - start
            results.append((m, verdict, by, secs))
            print(f"{verdict:8} {m['id']:28} {secs:6.1f} s  {m['file']}  {by}", flush=True)
        # leave the copy built as it was
        sh(["make", "-j" + a.jobs], tree, log)
        judged = [r for r in results if r[1] in ("CAUGHT", "MISSED")]
        caught = sum(1 for r in judged if r[1] == "CAUGHT")
        print()
        for m, verdict, by, _ in results:
            if verdict != "CAUGHT":
                print(f"{verdict}: {m['id']} ({m['file']}: {m['orig'].strip()!r} -> {m['repl'].strip()!r}) {by}")
        if judged:
            print(f"mutation score: {caught}/{len(judged)} caught ({100 * caught / len(judged):.0f}%)"
                  + (f", {len(results) - len(judged)} stale or invalid" if len(results) > len(judged) else ""))
        return 0 if caught == len(judged) and len(judged) == len(results) else 1
    finally:
        if not a.keep and not a.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
