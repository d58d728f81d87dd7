"""The Teams & fairness, Report, Capacity planning and Predictors pages in a real Chromium against a
real `streamlit run` server (helpers in browser_helpers.py): the first three share one server, each
Predictors test starts its own on a database it prepares first (the file's one Chromium opens them
all); screenshots to tests/artifacts/."""
from browser_helpers import (  # noqa: F401  (the fixture and the browser marks)
    ARTIFACTS,
    _assert_clean,
    _beside,
    _drawn,
    _enter,
    _metrics,
    _page,
    _sample_days,
    _settle,
    database,
    pytestmark,
    server,
)
from conftest import ALL_CHARTS_DRAWN

from engine.predict.failure import FailureSettings
from engine.predict.registry import ModelRegistry
from engine.predict.runtime import RuntimeSettings
from engine.telemetry.sample import ensure_sample
from engine.telemetry.store import Store


def test_teams_and_fairness_page_opens_a_job_in_the_job_view(server):  # noqa: F811
    with _page(server, "/fairness", 4200) as page:
        _drawn(page, 2, 180_000)
        assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
        metrics = _metrics(page)
        assert {"Jain's index", "Deadlines met", "Within max wait", "Starved jobs"} <= set(metrics)
        body = page.inner_text("body")
        assert "Each team's share against its entitlement" in body and " of team " in body and "mostly (" in body
        page.screenshot(path=str(ARTIFACTS / "fairness.png"), full_page=True)
        page.get_by_role("button", name="in the job view").click()
        page.wait_for_url("**/job", timeout=60_000)
        page.get_by_text("Priority under multifactor").wait_for(timeout=180_000)
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=1, timeout=180_000)   # its priority factors
        _settle(page, timeout_ms=180_000)
        _assert_clean(page)
        body = page.inner_text("body")
        assert "Why it waited:" in body and "Priority under multifactor" in body and "Starts (UTC)" in _metrics(page)
        page.screenshot(path=str(ARTIFACTS / "job-from-fairness.png"), full_page=True)


def test_report_page_builds_a_day_of_the_sample_and_previews_it(server):  # noqa: F811
    errors = []
    with _page(server, "/report", 2600, errors) as page:
        _sample_days(page, "Build the report", "First N days of the dataset (0 = all)").click()
        page.get_by_role("button", name="Download HTML").wait_for(timeout=300_000)
        _settle(page)
        preview = page.frame_locator('iframe[title^="Executive report: follow-the-sun against recorded"]')
        preview.locator(".main-svg").first.wait_for(timeout=60_000)
        page.wait_for_timeout(1500)   # plotly draws the report's remaining charts
        _assert_clean(page)
        body = page.inner_text("body")
        assert "follow-the-sun against recorded" in body and "Idle reserved GPUs cost" in body
        assert "at recorded's service level" in body   # the headline leads with capacity
        assert page.get_by_role("button", name="Prepare PDF").count() == 1
        assert errors == []
        page.screenshot(path=str(ARTIFACTS / "report_page.png"), full_page=True)


def test_capacity_planning_finds_a_fleet_for_two_days_of_the_sample(server):  # noqa: F811
    with _page(server, "/capacity", 3000) as page:
        button = page.get_by_role("button", name="Find the cheapest fleet")
        button.wait_for(timeout=120_000)
        _settle(page)
        for label, value in (("Plan on the last N days", "2"), ("Warm-up days", "1")):
            _enter(page, label, value)
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


def test_predictors_page_scores_the_models_and_estimates_the_queue(server, database, tmp_path):  # noqa: F811
    store = Store.open(database)
    ensure_sample(store)
    jobs, regions = store.jobs("sample"), store.regions("sample")
    store.close()
    ModelRegistry.beside(database).train("sample", jobs, regions, runtime=RuntimeSettings(max_iter=20),
                                         failure=FailureSettings(max_iter=20))
    with _beside(server, database, tmp_path / "server.log") as own, _page(own, "/predictors", 3400) as page:
        _drawn(page, 5, 180_000)
        metrics = _metrics(page)
        assert {"Mean absolute log error", "Inside P10-P90", "Jobs over-asking", "GPU-hours that would be freed"} \
            <= set(metrics)
        page.get_by_role("button", name="Estimate the starts").click()
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=6, timeout=180_000)
        _settle(page, timeout_ms=180_000)
        _assert_clean(page)
        body = page.inner_text("body")
        assert "jobs were waiting" in body and "When will the queued jobs start?" in body
        assert "Why: " in body
        page.screenshot(path=str(ARTIFACTS / "predictors.png"), full_page=True)
        page.get_by_role("button", name="in the job view").click()   # a queued job, at the queue's instant
        page.wait_for_url("**/job", timeout=60_000)
        # the job view simulates the job's window before it offers the prediction
        page.get_by_role("button", name="Predict its start").click(timeout=180_000)
        page.get_by_text("of its run left").wait_for(timeout=180_000)
        _settle(page, timeout_ms=180_000)
        _assert_clean(page)
        assert {"Most likely start", "Interval width", "Why it waits then"} <= set(_metrics(page))
        assert "of its run left" in page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / "job-from-predictors.png"), full_page=True)


def test_predictors_page_classifies_the_sample_and_draws_its_confusion_matrix(server, database,  # noqa: F811
                                                                              tmp_path):
    store = Store.open(database)
    ensure_sample(store)
    store.close()
    with _beside(server, database, tmp_path / "server.log") as own, _page(own, "/predictors", 2600) as page:
        _drawn(page, 0, 180_000)
        page.get_by_role("button", name="Classify the workload").wait_for(timeout=180_000)
        page.get_by_text("later jobs", exact=True).click()   # the time split: one fit, not three
        _settle(page)
        page.get_by_role("button", name="Classify the workload").click()
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=2, timeout=300_000)
        _settle(page, timeout_ms=300_000)
        _assert_clean(page)
        metrics = _metrics(page)
        assert float(metrics["Accuracy"].rstrip("%")) >= 98.0 and metrics["Held-out jobs"] == "27,702"
        assert "Lowest recall" in metrics and "Workload classes" in page.inner_text("body")
        assert page.locator('[data-testid="stPlotlyChart"] .heatmaplayer').count() == 1   # the confusion matrix
        page.screenshot(path=str(ARTIFACTS / "predictors_classes.png"), full_page=True)
