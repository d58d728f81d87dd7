"""write_pdf: print the report's HTML to PDF with headless Chromium (vector, A4, charts drawn).

The HTML is written next to the PDF in a temporary folder and printed by
`chromium --headless=new --print-to-pdf`; `--virtual-time-budget` lets plotly draw before the page
is printed. No network is needed: plotly.js is inline.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from engine.service.report.builder import Report
from engine.service.report.html import render_html

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
TIMEOUT_S = 120


class ChromiumMissing(RuntimeError):
    """No Chromium to print with."""


def chromium_path() -> str:
    """$MERIDIAN_CHROMIUM, else the first Chromium found (Debian's /usr/bin/chromium first)."""
    for name in (os.environ.get("MERIDIAN_CHROMIUM"), *CHROMIUM_CANDIDATES):
        found = name and shutil.which(name)
        if found:
            return found
    raise ChromiumMissing("printing the report to PDF needs Chromium: install it (Debian: apt-get install "
                          "chromium) or set MERIDIAN_CHROMIUM, or write the report as .html")


def html_to_pdf(html_path: Path, pdf_path: Path) -> Path:
    """Print an HTML file to `pdf_path` with headless Chromium."""
    with tempfile.TemporaryDirectory(prefix="meridian-chromium-") as profile:
        command = [chromium_path(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   f"--user-data-dir={profile}", "--no-pdf-header-footer", "--virtual-time-budget=15000",
                   f"--print-to-pdf={pdf_path}", html_path.resolve().as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0 or not pdf_path.exists() or pdf_path.stat().st_size == 0:
        raise RuntimeError(f"Chromium could not print {html_path}: {done.stderr.strip()[-500:]}")
    return pdf_path


def write_pdf(report: Report, path: str | Path) -> Path:
    """The report as a PDF at `path` (its folder must exist); returns the path."""
    path = Path(path)
    chromium_path()
    with tempfile.TemporaryDirectory(prefix="meridian-report-") as folder:
        html = Path(folder) / "report.html"
        html.write_text(render_html(report), encoding="utf-8")
        path.unlink(missing_ok=True)
        return html_to_pdf(html, path.resolve())
