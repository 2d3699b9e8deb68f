"""What the simulator's tests share: `rdmasim sim --check` on a file, the
loader run in one process over many cases (tests/sim/check_configs), the
expectation a bad file states in its first line, the two checks made on
whole directories of bad files and on lists of bad --set overrides, the
bytes of every file a run wrote, and running a configuration and reading
its summary.json and CSV files.

The checks of many cases load them all in one check_configs process,
which calls the loader exactly as `rdmasim sim --check` does and prints
the same message; one case of each batch also goes through the command
itself, so that the two cannot drift apart.

A bad file starts with
    # expect: [FILE |] LINE | TOKEN | MESSAGE
where the column is where TOKEN first occurs on that line of the file (an
empty TOKEN means column 1), FILE names an included file when the error lies
there, and MESSAGE begins the text after the position."""
import csv
import glob
import json
import os
import subprocess

from testlib import seconds

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
CHECK_CONFIGS = os.path.join(os.environ.get("TOP_BUILDDIR", "."), "tests", "sim", "check_configs")
EXIT_USAGE = 2


def check(path, *extra):
    return subprocess.run([RDMASIM, "sim", "--check", *extra, path], capture_output=True,
                          text=True, timeout=60)


class LoaderCrashed(AssertionError):
    pass


def load_many(cases, timeout=120):
    """Load each (path, [KEY=VALUE, ...]) case in one process: a list of
    None (loaded) or the error message, one per case. A case that crashes
    or hangs the loader raises LoaderCrashed naming it."""
    text = "".join("\t".join([path, *sets]) + "\n" for path, sets in cases)
    for path, sets in cases:
        if any("\t" in x or "\n" in x for x in (path, *sets)):
            raise ValueError(f"a case may not hold a TAB or newline: {path} {sets}")
    try:
        p = subprocess.run([CHECK_CONFIGS], input=text.encode(), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        done = (e.stdout or b"").decode(errors="replace").count("\n")
        raise LoaderCrashed(f"the loader hung on case {done}: {cases[done]}") from None
    lines = p.stdout.decode(errors="replace").splitlines()
    if p.returncode != 0 or len(lines) != len(cases):
        at = min(len(lines), len(cases) - 1)
        raise LoaderCrashed(f"check_configs exit {p.returncode} at case {at}: {cases[at]}\n"
                            f"{p.stderr.decode(errors='replace')[-2000:]}")
    out = []
    for line in lines:
        if line == "ok":
            out.append(None)
        else:
            assert line.startswith("error "), line
            msg = line[len("error "):]
            out.append(msg.replace("\\\\", "\0").replace("\\n", "\n").replace("\0", "\\"))
    return out


def expectation(path):
    """(FILE:LINE:COL: prefix, message) the file expects, or None for a file
    that is only included by others."""
    with open(path) as f:
        first = f.readline()
    if not first.startswith("# expect: "):
        return None
    parts = first[len("# expect: "):].rstrip("\n").split(" | ")
    where = path
    if len(parts) == 4:
        where = os.path.join(os.path.dirname(path), parts.pop(0))
    line, token, message = int(parts[0]), parts[1], parts[2]
    with open(where) as f:
        lines = f.read().split("\n")
    col = lines[line - 1].index(token) + 1 if token else 1
    return f"{where}:{line}:{col}: ", message


def assert_bad_files(tc, directory, least):
    """Every bad file of directory (at least `least` of them) is refused
    with exit 2 and exactly the one positioned line it expects."""
    cases = []
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
        exp = expectation(path)
        if exp is not None:
            cases.append((path, exp))
    tc.assertGreaterEqual(len(cases), least)
    for (path, (prefix, message)), err in zip(cases, load_many([(path, []) for path, _ in cases])):
        with tc.subTest(file=os.path.basename(path)):
            tc.assertIsNotNone(err, f"{path} loaded")
            tc.assertNotIn("\n", err)
            tc.assertTrue(err.startswith(prefix + message), f"want {prefix}{message}\ngot  {err}")
    # the command prints the same, alone on stderr, and exits 2
    path, (prefix, message) = cases[0]
    p = check(path)
    tc.assertEqual((p.returncode, p.stdout), (EXIT_USAGE, ""), p.stderr)
    tc.assertEqual(p.stderr.splitlines(), [load_many([(path, [])])[0]])


def assert_set_errors(tc, config, cases):
    """Each (KEY=VALUE, start of the message) override of config is refused
    with exit 2 and one line naming the override."""
    errors = load_many([(config, [setting]) for setting, _ in cases])
    for (setting, want), err in zip(cases, errors):
        with tc.subTest(setting=setting):
            tc.assertIsNotNone(err, f"--set {setting} was accepted")
            tc.assertNotIn("\n", err)
            tc.assertTrue(err.startswith(want), err)
    setting, want = cases[0]
    p = check(config, "--set", setting)
    tc.assertEqual((p.returncode, p.stdout), (EXIT_USAGE, ""), p.stderr)
    tc.assertEqual(p.stderr.splitlines(), [errors[0]])


def output_files(out):
    """Every file under the output directory out: relative path -> bytes."""
    files = {}
    for path in sorted(glob.glob(os.path.join(out, "**", "*"), recursive=True)):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                files[os.path.relpath(path, out)] = f.read()
    return files


def run_sim(config, out, *args, check=True, timeout=120):
    """rdmasim sim CONFIG --out OUT --quiet ARGS; with check, a failure
    raises with the program's stderr. timeout is in seconds, scaled."""
    p = subprocess.run([RDMASIM, "sim", config, "--out", out, "--quiet", *args],
                       capture_output=True, text=True, timeout=seconds(timeout))
    if check and p.returncode != 0:
        raise AssertionError(f"rdmasim sim {config} {args}: {p.returncode}\n{p.stderr}")
    return p


def write_config(tmp, text, name="c.yaml"):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def summary(out):
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def table(out, name):
    """The rows of a CSV output as dictionaries."""
    with open(os.path.join(out, name)) as f:
        return list(csv.DictReader(f))
