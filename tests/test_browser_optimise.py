"""The Optimise page in a real Chromium against a real `streamlit run` server: a study of one-day
windows on the sample runs from the page, draws its front and hypervolume, and offers the picked point
as a scenario file; screenshot to tests/artifacts/optimise.png."""
from browser_helpers import (  # noqa: F401  (the fixture and the browser marks)
    ARTIFACTS,
    _assert_clean,
    _enter,
    _metrics,
    _served,
    _settle,
    database,
    pytestmark,
)
from conftest import ALL_CHARTS_DRAWN

from dashboard.data.optimise import bundled_studies


def test_optimise_page_runs_a_study_and_offers_the_picked_point(database, tmp_path):  # noqa: F811 (the fixture)
    study = bundled_studies()["priority-weights"].read_text(encoding="utf-8").replace("days = 7", "days = 1")
    with _served(database, tmp_path, "/optimise", 3600) as page:
        run = page.get_by_role("button", name="Run study", exact=True)
        run.wait_for(timeout=120_000)
        _settle(page)
        assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
        text = page.get_by_role("textbox", name="Study file (TOML)")
        text.fill(study)
        text.press("Tab")
        _settle(page)
        for label, value in (("Trials", "8"), ("Per generation", "4")):
            _enter(page, label, value)
        run.click()
        page.get_by_role("button", name="Download scenario TOML").wait_for(timeout=300_000)
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=3, timeout=60_000)
        _settle(page)
        _assert_clean(page)
        metrics = _metrics(page)
        assert metrics["Trials"] == "8" and int(metrics["On the front"]) >= 1
        body = page.inner_text("body")
        assert "The front on the training windows" in body and "Held out" in body and "Pick a point" in body
        assert "Progress: the front's hypervolume by generation" in body
        page.screenshot(path=str(ARTIFACTS / "optimise.png"), full_page=True)
