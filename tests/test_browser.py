"""The main journey in a real Chromium against a real `streamlit run` server.

Opens the Overview, uploads a CSV on the Data page, sees the Overview change, finds no
exception on any page, and saves full-page screenshots to tests/artifacts/.
"""
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ALL_CHARTS_DRAWN, CHROMIUM, CHROMIUM_ARGS, streamlit_server
from test_app_pages import GOOD_CSV, TINY

from engine.predict.failure import FailureSettings
from engine.predict.registry import ModelRegistry
from engine.predict.runtime import RuntimeSettings
from engine.telemetry.sample import ensure_sample
from engine.telemetry.store import Store

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium")]

ARTIFACTS = Path(__file__).parent / "artifacts"
EXCEPTION = '[data-testid="stException"]'


def _settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until Streamlit has finished the current script run."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms)
    page.wait_for_timeout(300)


def _wait_for_overview(page) -> None:
    page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
    page.wait_for_function(ALL_CHARTS_DRAWN, arg=6, timeout=120_000)
    _settle(page)


def _metrics(page) -> dict[str, str]:
    labels = page.locator('[data-testid="stMetricLabel"]').all_inner_texts()
    values = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
    return {label.strip(): value.strip() for label, value in zip(labels, values)}


def _assert_clean(page) -> None:
    assert page.locator(EXCEPTION).count() == 0
    assert "Traceback" not in page.inner_text("body")

@contextmanager
def _served(database, tmp_path, path: str, height: int):
    """A fresh server on `database` and a browser page opened at `path` (nothing awaited yet)."""
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(database, tmp_path / "server.log") as url, playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": height})
            page.goto(url + path)
            yield page
        finally:
            browser.close()


@contextmanager
def _opened(database, tmp_path, path: str, height: int, charts: int, timeout_ms: int = 120_000):
    """A fresh server on `database` and a page at `path`, once `charts` charts are drawn and the
    page is clean (no exception, no error); the browser closes on exit."""
    with _served(database, tmp_path, path, height) as page:
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=charts, timeout=timeout_ms)
        _settle(page, timeout_ms=timeout_ms)
        _assert_clean(page)
        yield page


def _go(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
    _settle(page)


@pytest.fixture
def database(tmp_path):
    db = tmp_path / "meridian.duckdb"
    store = Store.open(db)
    store.add_import("tiny", TINY, "tiny.csv", "sha-tiny")
    store.close()
    return db


def test_upload_on_the_data_page_changes_the_overview(database, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    upload = tmp_path / "gpu-jobs.csv"
    upload.write_bytes(GOOD_CSV)
    with streamlit_server(database, tmp_path / "server.log") as url, playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 2400})
            page.goto(url)
            _wait_for_overview(page)
            _assert_clean(page)
            before = _metrics(page)
            assert set(before) == {"Utilisation", "Idle GPU-hours", "Idle $ / month", "p95 queue wait"}
            page.screenshot(path=str(ARTIFACTS / "overview-start.png"), full_page=True)

            _go(page, "Data")
            page.set_input_files("input[type=file]", str(upload))
            page.get_by_role("button", name="Import", exact=True).click()
            page.get_by_text("Imported 2 rows (csv) into dataset gpu-jobs").wait_for(timeout=60_000)
            _settle(page)
            _assert_clean(page)
            assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "gpu-jobs"
            page.screenshot(path=str(ARTIFACTS / "data-after-upload.png"), full_page=True)

            _go(page, "Overview")
            _wait_for_overview(page)
            _assert_clean(page)
            after = _metrics(page)
            assert after["Utilisation"] == "58.3%" and after != before
            page.screenshot(path=str(ARTIFACTS / "overview-uploaded.png"), full_page=True)
        finally:
            browser.close()


def test_whatif_compares_two_scenarios_on_one_day_of_the_sample(database, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(database, tmp_path / "server.log") as url, playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 3400})
            page.goto(url + "/whatif")
            page.get_by_role("button", name="Run", exact=True).wait_for(timeout=120_000)
            _settle(page)
            assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
            days = page.get_by_role("spinbutton", name="Simulate the jobs submitted in the first N days")
            days.fill("1")
            days.press("Enter")
            _settle(page)
            page.get_by_role("button", name="Run", exact=True).click()
            page.get_by_text("Why did this job wait?").wait_for(timeout=120_000)
            page.wait_for_function(ALL_CHARTS_DRAWN, arg=3, timeout=120_000)
            _settle(page)
            _assert_clean(page)
            assert "Simulated jobs submitted from" in page.inner_text("body")
            assert "Reason:" in page.inner_text("body")
            labels = page.locator('[data-testid="stMetricLabel"]').all_inner_texts()
            assert labels.count("Utilisation") == 2
            page.screenshot(path=str(ARTIFACTS / "whatif.png"), full_page=True)
        finally:
            browser.close()


def test_fidelity_shows_the_record_and_reruns_both_experiments(database, tmp_path):
    with _opened(database, tmp_path, "/fidelity", 5200, 2) as page:
        metrics = _metrics(page)
        assert metrics["RLScheduler · Lublin-1 · runs within ±0.01"] == "100 of 100"
        assert metrics["FGD · openb default · points within tolerance"] == "42 of 42"
        runs = page.get_by_role("button", name="Run again", exact=True)
        runs.nth(0).click()
        page.get_by_text("identical to the record").wait_for(timeout=60_000)
        _settle(page)
        runs.nth(1).click()
        page.get_by_text("GPU-allocation points within the one-seed allowance").wait_for(timeout=120_000)
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=3, timeout=60_000)
        _settle(page)
        _assert_clean(page)
        assert "FCFS, no backfilling: 10 of 10 sequences within ±0.01 just now" in page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / "fidelity.png"), full_page=True)


def test_timezones_page_draws_bands_handoff_and_holidays(database, tmp_path):
    with _opened(database, tmp_path, "/timezones", 4200, 5) as page:
        assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
        assert set(_metrics(page)) == {"Off-hours idle GPU-hours", "Flexible work queued",
                                       "Lendable GPU-hours (upper bound)", "Residency violations"}
        body = page.inner_text("body")
        assert "Largest hand-offs" in body and "busiest around" in body and "Who is at work" in body
        assert page.locator('[data-testid="stPlotlyChart"] .shapelayer path').count() > 0   # working-hour bands
        page.screenshot(path=str(ARTIFACTS / "timezones.png"), full_page=True)


def test_cost_and_carbon_page_on_a_week_of_the_sample(database, tmp_path):
    with _opened(database, tmp_path, "/cost", 3000, 5, timeout_ms=180_000) as page:
        assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
        assert set(_metrics(page)) == {"Spend", "Idle spend (reserved)", "Effective $/GPU-hour",
                                       "Productive $/GPU-hour", "Carbon"}
        body = page.inner_text("body")
        assert "Trade-off across scenarios" in body and "none was assumed" in body
        assert page.locator('[data-testid="stPlotlyChart"] .scatterlayer .point').count() >= 2  # one per scenario
        page.screenshot(path=str(ARTIFACTS / "costcarbon.png"), full_page=True)


def test_teams_and_fairness_page_explains_a_job(database, tmp_path):
    with _opened(database, tmp_path, "/fairness", 4200, 3, timeout_ms=180_000) as page:
        assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
        metrics = _metrics(page)
        assert {"Jain's index", "Deadlines met", "Within max wait", "Starved jobs", "Starts (UTC)"} <= set(metrics)
        body = page.inner_text("body")
        assert "Each team's share against its entitlement" in body and "Why it waited:" in body
        assert "Priority under multifactor" in body
        page.screenshot(path=str(ARTIFACTS / "fairness.png"), full_page=True)


def test_report_page_builds_a_day_of_the_sample_and_previews_it(database, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(database, tmp_path / "server.log") as url, playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 2600})
            errors = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url + "/report")
            build = page.get_by_role("button", name="Build the report")
            build.wait_for(timeout=120_000)
            _settle(page)
            assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
            days = page.get_by_role("spinbutton", name="First N days of the dataset (0 = all)")
            days.fill("1")
            days.press("Enter")
            _settle(page)
            build.click()
            page.get_by_role("button", name="Download HTML").wait_for(timeout=120_000)
            _settle(page)
            preview = page.frame_locator('iframe[title^="Executive report: data-local against fifo"]')
            preview.locator(".main-svg").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)   # plotly draws the report's remaining charts
            _assert_clean(page)
            body = page.inner_text("body")
            assert "data-local against fifo" in body and "Idle reserved GPUs cost" in body
            assert page.get_by_role("button", name="Prepare PDF").count() == 1
            assert errors == []
            page.screenshot(path=str(ARTIFACTS / "report_page.png"), full_page=True)
        finally:
            browser.close()


def test_capacity_planning_finds_a_fleet_for_two_days_of_the_sample(database, tmp_path):
    with _served(database, tmp_path, "/capacity", 3000) as page:
        button = page.get_by_role("button", name="Find the cheapest fleet")
        button.wait_for(timeout=120_000)
        _settle(page)
        for label, value in (("Plan on the last N days", "2"), ("Warm-up days", "1")):
            field = page.get_by_role("spinbutton", name=label)
            field.fill(value)
            field.press("Tab")
        button.click()
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=3, timeout=300_000)
        _settle(page, timeout_ms=300_000)
        _assert_clean(page)
        metrics = {label.split(" (today")[0]: value for label, value in _metrics(page).items()}
        assert {"GPUs (plan)", "Cost per year (plan)", "Utilisation (plan)", "Targets met"} <= set(metrics)
        assert metrics["Targets met"].endswith("(plan)")
        body = page.inner_text("body")
        assert "the cheapest fleet found that keeps every class under its target" in body
        assert "As the fleet grows" in body
        page.screenshot(path=str(ARTIFACTS / "capacity.png"), full_page=True)


def test_predictors_page_scores_the_models_and_estimates_the_queue(database, tmp_path):
    store = Store.open(database)
    ensure_sample(store)
    jobs, regions = store.jobs("sample"), store.regions("sample")
    store.close()
    ModelRegistry.beside(database).train("sample", jobs, regions, runtime=RuntimeSettings(max_iter=20),
                                         failure=FailureSettings(max_iter=20))
    with _opened(database, tmp_path, "/predictors", 3400, charts=5, timeout_ms=180_000) as page:
        metrics = _metrics(page)
        assert {"Mean absolute log error", "Inside P10-P90", "Jobs over-asking", "GPU-hours that would be freed"} \
            <= set(metrics)
        page.get_by_role("button", name="Estimate the starts").click()
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=6, timeout=180_000)
        _settle(page, timeout_ms=180_000)
        _assert_clean(page)
        body = page.inner_text("body")
        assert "jobs were waiting" in body and "When will the queued jobs start?" in body
        page.screenshot(path=str(ARTIFACTS / "predictors.png"), full_page=True)
