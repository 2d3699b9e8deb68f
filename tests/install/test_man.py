#!/usr/bin/python3
"""The manual pages as built: rdmasim(1) has a section for every command
`rdmasim --help` lists, holding every option of that command's --help;
rdmasim-config(5) holds every key the YAML blocks of docs/config.md show;
both render with groff without a warning. `rdmasim help COMMAND` is
`rdmasim COMMAND --help`, and `rdmasim --help` names --version."""
import os
import re
import shutil
import subprocess
import sys
import unittest

TOP = os.environ.get("TOP_SRCDIR", ".")
BUILD = os.environ.get("TOP_BUILDDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from testlib import RDMASIM, main  # noqa: E402


def run(*args):
    p = subprocess.run([RDMASIM, *args], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout


def render(page):
    """The page as a reader sees it (groff, plain text), and its warnings."""
    p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-P-cbou", os.path.join(BUILD, "man", page)],
                       capture_output=True, text=True, timeout=30)
    # undo the hyphenation and line filling that would hide a key
    text = re.sub(r"\u2010\n\s*|-\n\s*", "", p.stdout)
    return re.sub(r"\s+", " ", text), p.stderr


COMMANDS = re.findall(r"^  (\w+) ", run("--help").split("commands:", 1)[1], re.M)


@unittest.skipUnless(shutil.which("groff"), "groff is not installed")
class Pages(unittest.TestCase):
    def test_a_section_per_command_with_its_options(self):
        self.assertEqual(COMMANDS, ["decode", "replay", "sim", "report", "compare"])
        text, warnings = render("rdmasim.1")
        self.assertEqual(warnings, "")
        for name in COMMANDS:
            start = text.index(f"RDMASIM {name.upper()} ")
            section = text[start:start + len(run(name, "--help")) * 2]
            for option in sorted(set(re.findall(r"--[a-z][a-z0-9-]*", run(name, "--help")))):
                self.assertIn(option, section, f"{name} {option}")

    def test_every_configuration_key(self):
        with open(os.path.join(TOP, "docs", "config.md")) as f:
            blocks = re.findall(r"^```yaml\n(.*?)^```", f.read(), re.S | re.M)
        keys = set()
        for block in blocks:
            keys |= set(re.findall(r"(?:^|[\s{,])([a-z_][a-z0-9_]*):", block, re.M))
        self.assertGreater(len(keys), 100)
        text, warnings = render("rdmasim-config.5")
        self.assertEqual(warnings, "")
        for key in sorted(keys):
            self.assertRegex(text, r"\b" + key + ":", key)


class Help(unittest.TestCase):
    def test_help_command_is_command_help(self):
        for name in COMMANDS:
            self.assertEqual(run("help", name), run(name, "--help"))
        p = subprocess.run([RDMASIM, "help", "nosuch"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.startswith("rdmasim: unknown command 'nosuch'\n"))

    def test_help_names_version(self):
        self.assertIn("rdmasim --version", run("--help"))
        self.assertRegex(run("--version"), r"^rdmasim \d+\.\d+\.\d+\n$")


if __name__ == "__main__":
    main(default_limit=60)
