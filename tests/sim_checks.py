"""What the simulator's tests share: `rdmasim sim --check` on a file, the
expectation a bad file states in its first line, the two checks made on
whole directories of bad files and on lists of bad --set overrides, and
the bytes of every file a run wrote.

A bad file starts with
    # expect: [FILE |] LINE | TOKEN | MESSAGE
where the column is where TOKEN first occurs on that line of the file (an
empty TOKEN means column 1), FILE names an included file when the error lies
there, and MESSAGE begins the text after the position."""
import glob
import os
import subprocess

RDMASIM = os.environ.get("RDMASIM", "src/rdmasim")
EXIT_USAGE = 2


def check(path, *extra):
    return subprocess.run([RDMASIM, "sim", "--check", *extra, path], capture_output=True,
                          text=True, timeout=60)


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
    tested = 0
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
        exp = expectation(path)
        if exp is None:
            continue
        prefix, message = exp
        with tc.subTest(file=os.path.basename(path)):
            p = check(path)
            tc.assertEqual(p.returncode, EXIT_USAGE, p.stderr)
            tc.assertEqual(p.stdout, "")
            lines = p.stderr.splitlines()
            tc.assertEqual(len(lines), 1, p.stderr)
            tc.assertTrue(lines[0].startswith(prefix + message),
                          f"want {prefix}{message}\ngot  {lines[0]}")
            tested += 1
    tc.assertGreaterEqual(tested, least)


def assert_set_errors(tc, config, cases):
    """Each (KEY=VALUE, start of the message) override of config is refused
    with exit 2 and one line naming the override."""
    for setting, want in cases:
        with tc.subTest(setting=setting):
            p = check(config, "--set", setting)
            tc.assertEqual(p.returncode, EXIT_USAGE)
            tc.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            tc.assertTrue(p.stderr.startswith(want), p.stderr)


def output_files(out):
    """Every file under the output directory out: relative path -> bytes."""
    files = {}
    for path in sorted(glob.glob(os.path.join(out, "**", "*"), recursive=True)):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                files[os.path.relpath(path, out)] = f.read()
    return files
