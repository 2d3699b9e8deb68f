#!/usr/bin/python3
"""`rdmasim report DIR`: one HTML page from a run's outputs that needs
nothing but itself, and that draws. Headless Chromium opens it: the DOM
after its script ran must say it drew (body data-drawn="ok", no
data-error) and every chart must hold marks, or say "no data" where the
run has none of that kind; a screenshot must show more than a blank page.
Skipped (77) only when chromium is not installed."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

TOP = os.environ.get("TOP_SRCDIR", ".")
sys.path.insert(0, os.path.join(TOP, "tests"))
from sim_checks import RDMASIM, run_sim  # noqa: E402
from testlib import EXIT_SKIP, main, seconds  # noqa: E402

EXAMPLES = os.path.join(TOP, "examples")
CHROMIUM = shutil.which("chromium")
CHARTS = ["slowdown", "goodput", "queues", "pauses", "pcie"]


def chromium(tmp, *args):
    """Headless Chromium with a profile of its own (tests run in parallel);
    --no-sandbox since the suite may run as root."""
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--user-data-dir=" + os.path.join(tmp, "profile"), *args],
                          capture_output=True, text=True, timeout=seconds(60))


def charts(dom):
    """Chart id -> (marks, why empty or None), from the DOM as drawn."""
    out = {}
    for m in re.finditer(r'<div id="([a-z]+)"><svg class="chart" width="\d+" height="\d+" '
                         r'data-marks="(\d+)"(?: data-empty="([^"]*)")?', dom):
        out[m.group(1)] = (int(m.group(2)), m.group(3))
    return out


def png_colours(path):
    """How many different bytes the image's filtered rows hold: a blank
    page has a handful, a page of charts many."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    return len(set(zlib.decompress(idat)))


class Report(unittest.TestCase):
    def report(self, tmp, example):
        out = os.path.join(tmp, example)
        run_sim(os.path.join(EXAMPLES, example + ".yaml"), out)
        p = subprocess.run([RDMASIM, "report", out], capture_output=True, text=True, timeout=seconds(30))
        self.assertEqual(p.returncode, 0, p.stderr)
        page = os.path.join(out, "report.html")
        self.assertEqual(p.stdout, page + "\n")
        with open(page) as f:
            html = f.read()
        # nothing to fetch: no address, no external script, style or image
        self.assertNotRegex(html, r"https?://|<link|\ssrc=|@import|fetch\(|XMLHttpRequest")
        dom = chromium(tmp, "--dump-dom", "file://" + page)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        body = re.search(r"<body[^>]*>", dom.stdout).group(0)
        self.assertNotIn("data-error", body, body)
        self.assertIn('data-drawn="ok"', body)
        return page, charts(dom.stdout)

    def test_fabric_run_draws_every_chart_but_pcie(self):
        with tempfile.TemporaryDirectory() as tmp:
            page, drawn = self.report(tmp, "fabric-incast-pfc")
            self.assertEqual(sorted(drawn), sorted(CHARTS))
            for name in CHARTS[:-1]:
                self.assertGreater(drawn[name][0], 0, name)
            self.assertEqual(drawn["pcie"], (0, "the run did not model PCIe (no pcie: key)"))
            shot = os.path.join(tmp, "shot.png")
            p = chromium(tmp, "--window-size=1000,2600", "--screenshot=" + shot, "file://" + page)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            self.assertGreater(png_colours(shot), 100)

    def test_pcie_run_draws_the_breakdown(self):
        with tempfile.TemporaryDirectory() as tmp:
            _, drawn = self.report(tmp, "pcie-gpudirect")
            for name in ("slowdown", "goodput", "pcie"):
                self.assertGreater(drawn[name][0], 0, name)
            self.assertEqual(drawn["pauses"], (0, "no port paused its peer"))

    def test_queue_legend_names_both_ends(self):
        with tempfile.TemporaryDirectory() as tmp:
            page, _ = self.report(tmp, "fabric-incast-pfc")
            dom = chromium(tmp, "--dump-dom", "file://" + page).stdout
            queues = dom[dom.index('<div id="queues">'):dom.index('<h2>PFC pauses')]
            self.assertRegex(queues, r"spine0-\d → leaf\d-0")

    def test_a_file_too_large_is_cut_at_a_line_and_said(self):
        """qlen.csv grown past the 16 MiB a page holds of a file: the
        page keeps whole rows up to it, draws them, and says so."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            run_sim(os.path.join(EXAMPLES, "fabric-incast-pfc.yaml"), out)
            row = "1000000,leaf0,leaf0-0,1000,0,0,0,1000,0,0,0,0\n"
            with open(os.path.join(out, "qlen.csv"), "a") as f:
                f.write(row * (17 * 2**20 // len(row)))
            p = subprocess.run([RDMASIM, "report", out], capture_output=True, text=True, timeout=seconds(30))
            self.assertEqual(p.returncode, 0, p.stderr)
            dom = chromium(tmp, "--dump-dom", "file://" + os.path.join(out, "report.html")).stdout
            self.assertIn('data-drawn="ok"', re.search(r"<body[^>]*>", dom).group(0))
            self.assertIn("qlen.csv is larger than the report holds: only its first 16 MiB are shown.", dom)
            self.assertGreater(charts(dom)["queues"][0], 0)

    def test_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([RDMASIM, "report", tmp], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(p.stderr, f"rdmasim report: {tmp}: no summary.json; give the --out directory "
                                       "of a finished `rdmasim sim` run\n")
            self.assertEqual(os.listdir(tmp), [])
            p = subprocess.run([RDMASIM, "report"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertEqual(len(p.stderr.splitlines()), 1)


if __name__ == "__main__":
    if not CHROMIUM:
        print("chromium is not installed: skipped")
        sys.exit(EXIT_SKIP)
    main(default_limit=90)
