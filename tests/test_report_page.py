"""The Report page through Streamlit's AppTest on the first day of the sample data: defaults, a built report
whose headline is build_report's for the same inputs, its downloads, and choices that cannot be built."""
from pathlib import Path

import pytest
from conftest import open_page, shown

from engine.scenario.recorded import recorded_baseline
from engine.scenario.spec import Scenario
from engine.service.compare import WORLD_TABLES
from engine.service.report.assumptions import ReportAssumptions
from engine.service.report.builder import build_report
from engine.service.report.html import render_html
from engine.telemetry.store import Store

REPO = Path(__file__).parents[1]
SCENARIOS = REPO / "sample_data" / "scenarios"
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def app(sample_db, monkeypatch):
    return open_page(sample_db, monkeypatch, "app_pages/report.py", rp_days=1.0)


@pytest.fixture(scope="module")
def expected(sample_db):
    """build_report of follow-the-sun against the recorded baseline on the sample's first day, at a GPU
    price of $40K (the page's defaults but the price)."""
    store = Store.open(sample_db)
    try:
        return build_report(store.jobs("sample"), store.fleet("sample"),
                            {name: store.table(name, "sample") for name in WORLD_TABLES},
                            recorded_baseline("per-pool-fifo"), [Scenario.load(SCENARIOS / "follow-the-sun.toml")],
                            ReportAssumptions(gpu_capex_usd=40_000.0), dataset="sample", days=1.0)
    finally:
        store.close()


def _bullets(markdown: str) -> list[str]:
    return [line.removeprefix("- ") for line in markdown.splitlines()]


def test_the_page_opens_on_the_defaults_without_simulating(app):
    assert shown(app.title[0]) == "Executive report"
    assert app.selectbox(key="rp_baseline").value == "recorded"
    assert app.multiselect(key="rp_candidates").value == ["follow-the-sun"]
    assert app.number_input(key="rp_gpu_capex_usd").value == 30_000.0
    assert app.number_input(key="rp_pue").value == 1.2
    assert {f["name"] for f in ReportAssumptions.fields() if f["kind"] == "number"} == \
        {n.key.removeprefix("rp_") for n in app.number_input if n.key != "rp_days"}
    assert "press **Build the report**" in shown(app.info[0])
    assert not app.download_button and "rp_built" not in app.session_state


def test_building_shows_the_engines_headline_downloads_and_the_preview(app, expected):
    app.number_input(key="rp_gpu_capex_usd").set_value(40_000.0).run()
    assert not app.get("iframe")
    app.button(key="rp_build").click().run()
    assert not app.exception, app.exception
    assert not app.error, [shown(e) for e in app.error]
    assert [shown(h) for h in app.subheader][:1] == ["follow-the-sun against recorded"]
    bullets = [shown(m) for m in app.markdown if shown(m).startswith("- ")]
    assert _bullets(bullets[0]) == list(expected.headline)
    assert expected.headline[0].startswith("follow-the-sun serves")
    built = app.session_state["rp_built"]
    assert built["report"].kpis.equals(expected.kpis)
    assert built["html"] == render_html(expected)
    assert [b.label for b in app.download_button] == ["Download HTML"]
    assert len(app.get("iframe")) == 1
    assert [b.label for b in app.button if b.key == "rp_prepare_pdf"] == ["Prepare PDF"]

    # a change of input hides the stale report until it is built again
    app.number_input(key="rp_pue").set_value(1.5).run()
    assert "choices changed" in shown(app.info[0]) and not app.download_button and not app.get("iframe")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")
def test_prepare_pdf_offers_the_printed_report(app):
    app.button(key="rp_build").click().run()
    app.button(key="rp_prepare_pdf").click().run()
    assert not app.exception, app.exception
    assert not app.error and not app.warning, [e.value for e in [*app.error, *app.warning]]
    assert [b.label for b in app.download_button] == ["Download HTML", "Download PDF"]
    assert app.session_state["rp_pdf_bytes"]["pdf"].startswith(b"%PDF")


def test_without_chromium_the_page_warns_and_still_offers_html(app, monkeypatch):
    monkeypatch.delenv("MERIDIAN_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("engine.service.report.pdf.CHROMIUM_CANDIDATES", ())
    app.button(key="rp_build").click().run()
    assert not app.exception, app.exception
    assert [b.label for b in app.download_button] == ["Download HTML"]
    assert [shown(w) for w in app.warning][0].startswith("No PDF: printing the report to PDF needs Chromium")


@pytest.mark.parametrize("candidates, message", [
    ([], "Pick at least one candidate scenario to compare with the baseline."),
    (["recorded", "data-local"], "The baseline recorded is also a candidate: pick candidates other than the baseline."),
])
def test_a_choice_that_cannot_be_built_is_a_message(app, candidates, message):
    app.multiselect(key="rp_candidates").set_value(candidates).run()
    assert not app.exception, app.exception
    assert [shown(w) for w in app.warning] == [message]
    assert not [b for b in app.button if b.key == "rp_build"]


def test_an_invalid_assumption_is_an_error_message(app):
    app.number_input(key="rp_amortisation_years").set_value(0.0).run()
    assert not app.exception, app.exception
    assert [shown(e) for e in app.error] == ["Assumptions: amortisation_years must be positive, got 0.0"]
    assert not [b for b in app.button if b.key == "rp_build"]
