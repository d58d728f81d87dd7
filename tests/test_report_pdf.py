"""The report printed: the PDF holds the engine's numbers as the report prints them, its pages render
(saved to tests/artifacts/report-page-N.png), and the HTML opens in Chromium offline, cleanly."""
import shutil
import subprocess
import types
from pathlib import Path

import pytest
from conftest import CHROMIUM, CHROMIUM_ARGS

from engine.analysis.runs import catalogue
from engine.cli.common import tables
from engine.core.text import hours
from engine.scenario.spec import Scenario
from engine.service.headroom.measure import HeadroomOptions
from engine.service.report import fmt
from engine.service.report.builder import build_report
from engine.service.report.html import region_rows, render_html
from engine.service.report.pdf import write_pdf

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
ARTIFACTS = Path(__file__).parent / "artifacts"
pytestmark = [pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
              pytest.mark.skipif(not shutil.which("pdftotext"), reason="needs poppler-utils")]


@pytest.fixture(scope="module")
def report(sample_db):
    data = tables(types.SimpleNamespace(trace=None, dataset="sample", db=str(sample_db)))
    return build_report(*data, Scenario.load(SCENARIOS / "fifo.toml"),
                        [Scenario.load(SCENARIOS / "follow-the-sun.toml")], days=2,
                        headroom=HeadroomOptions(seeds=1, workers=2))   # what is printed, not the seeds' spread


@pytest.fixture(scope="module")
def pdf(report, tmp_path_factory):
    return write_pdf(report, tmp_path_factory.mktemp("pdf") / "report.pdf")


def _text(pdf: Path) -> str:
    out = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(out.split())


def test_pdf_text_holds_the_engines_numbers(report, pdf):
    text = _text(pdf)
    assert pdf.stat().st_size < 1_000_000   # vector text and charts, not 5 MB of script
    s, k = report.savings["follow-the-sun"], report.kpis.set_index("kpi")
    for shown in (fmt.pct(s.util_baseline), fmt.pct(s.util_candidate), fmt.usd(s.idle_usd_per_year_baseline),
                  fmt.usd(abs(s.idle_usd_per_year_recovered)), hours(k.loc["wait_p95_s", "fifo"]),
                  hours(k.loc["wait_p95_s", "follow-the-sun"]), fmt.usd(k.loc["cost_usd_per_year", "fifo"]),
                  fmt.tonnes(k.loc["carbon_kg_per_year", "follow-the-sun"]),
                  *(catalogue.shown(key, v) for key, v in k["follow-the-sun"].items()),
                  *(catalogue.heading(key) for key in k.index),
                  *(cell for row in region_rows(report.regions) for cell in row[2:4])):
        assert shown in text, shown
    for words in ("Engine fidelity", "Method", "Assumptions", "Price of one GPU", "$30,000", "first 2 days"):
        assert words in text, words


def test_pdf_pages_render(pdf):
    ARTIFACTS.mkdir(exist_ok=True)
    for old in ARTIFACTS.glob("report-page-*.png"):
        old.unlink()
    subprocess.run(["pdftoppm", "-png", "-r", "60", str(pdf), str(ARTIFACTS / "report-page")], check=True)
    pages = sorted(ARTIFACTS.glob("report-page-*.png"))
    assert 1 <= len(pages) <= 3
    assert all(p.stat().st_size > 20_000 for p in pages)   # drawn pages, not blank ones


def test_html_opens_offline_in_chromium_without_errors_or_requests(report, tmp_path):
    playwright_api = pytest.importorskip("playwright.sync_api")
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    requests, errors = [], []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            page.wait_for_function("document.querySelectorAll('.chart .main-svg').length >= 3", timeout=30_000)
            drawn = page.evaluate("Array.from(document.querySelectorAll('.chart')).map(d => d.querySelectorAll("
                                  "'.heatmaplayer image, .barlayer .point').length)")
        finally:
            browser.close()
    assert requests == [path.as_uri()]
    assert errors == []
    assert all(n > 0 for n in drawn), drawn


MANY = ("easy-backfill", "follow-the-sun", "priority-fairshare", "carbon-aware", "cost-aware", "cheap-eu-follow-the-sun")


@pytest.fixture(scope="module", params=[3, 6], ids=["3-candidates", "6-candidates"])
def many(request, sample_db, tmp_path_factory):
    data = tables(types.SimpleNamespace(trace=None, dataset="sample", db=str(sample_db)))
    report = build_report(*data, Scenario.load(SCENARIOS / "fifo.toml"),
                          [Scenario.load(SCENARIOS / f"{name}.toml") for name in MANY[:request.param]], days=1,
                          headroom=HeadroomOptions(seeds=1, workers=2))
    return report, write_pdf(report, tmp_path_factory.mktemp("pdf-many") / "report.pdf")


def test_a_report_of_many_candidates_leads_with_the_best_and_ranks_the_rest(many):
    report, pdf = many
    n = len(report.candidates)
    more = [report.savings[name].more_work_pct for name in report.candidates]
    assert more == sorted(more, reverse=True) and report.candidate == report.candidates[0]
    text = _text(pdf)
    assert f"{report.candidate}, the best of {n} candidates, vs fifo" in text
    assert f"{n} candidates ranked by the work each serves at fifo's service level" in text
    assert all(name in text for name in report.candidates)


def test_the_pages_of_a_report_of_many_candidates_render_without_overprinting(many):
    report, pdf = many
    n = len(report.candidates)
    ARTIFACTS.mkdir(exist_ok=True)
    for old in ARTIFACTS.glob(f"report-{n}-page-*.png"):
        old.unlink()
    subprocess.run(["pdftoppm", "-png", "-r", "60", str(pdf), str(ARTIFACTS / f"report-{n}-page")], check=True)
    pages = sorted(ARTIFACTS.glob(f"report-{n}-page-*.png"))
    assert 2 <= len(pages) <= 4 and all(p.stat().st_size > 15_000 for p in pages)
    first = subprocess.run(["pdftotext", "-layout", "-f", "1", "-l", "1", str(pdf), "-"], capture_output=True,
                           text=True, check=True).stdout
    assert "By region" in first and "candidates ranked" in first   # page 1 holds the one-pager whole
    appendix = subprocess.run(["pdftotext", "-layout", "-f", "2", "-l", "2", str(pdf), "-"], capture_output=True,
                              text=True, check=True).stdout
    rows = [line for line in appendix.splitlines() if line.strip().startswith("p95 wait ")]
    assert rows and len(rows[0].split()) >= 2 + n + 1   # label, then baseline and every candidate, side by side
