"""The main journey in a real Chromium against a real `streamlit run` server.

Opens the Overview, uploads a CSV on the Data page, sees the Overview change, finds no
exception on any page, and saves full-page screenshots to tests/artifacts/ (helpers in
browser_helpers.py; the fairness, report, planning and predictor pages are in
test_browser_planning.py, so that the two files run on two workers).
"""
from browser_helpers import (  # noqa: F401  (the fixture and the browser marks)
    ARTIFACTS,
    _assert_clean,
    _drawn,
    _enter,
    _go,
    _metrics,
    _page,
    _sample_days,
    _settle,
    _wait_for_overview,
    pytestmark,
    server,
)
from conftest import ALL_CHARTS_DRAWN, FIDELITY_INPUTS, shared
from test_app_pages import GOOD_CSV


def test_upload_on_the_data_page_changes_the_overview(server, tmp_path):  # noqa: F811
    upload = tmp_path / "gpu-jobs.csv"
    upload.write_bytes(GOOD_CSV)
    with _page(server, "", 2400) as page:
        _wait_for_overview(page)
        _assert_clean(page)
        before = _metrics(page)
        assert set(before) == {"Utilisation", "Idle GPU-hours", "Spend a year", "Idle cost a year", "p95 queue wait"}
        assert before["Spend a year"].startswith("$") and before["Idle cost a year"].startswith("$")
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
        _wait_for_overview(page, charts=5)   # no fleet table: no dollars, and no spend chart
        _assert_clean(page)
        after = _metrics(page)
        assert after["Utilisation"] == "58.3%" and after["Spend a year"] == "n/a" and after != before
        page.screenshot(path=str(ARTIFACTS / "overview-uploaded.png"), full_page=True)


def test_whatif_compares_two_scenarios_on_one_day_of_the_sample(server):  # noqa: F811
    with _page(server, "/whatif", 3400) as page:
        page.get_by_role("button", name="Run", exact=True).wait_for(timeout=120_000)
        _settle(page)
        # the headline's searches: one demand resampling (its seeds are test_browser_headroom's)
        _enter(page, "Demand resamplings for the headroom (seeds)", "1")
        _sample_days(page, "Run", "Simulate the jobs submitted in the first N days").click()
        page.get_by_text("Why did this job wait?").wait_for(timeout=120_000)
        page.wait_for_function(ALL_CHARTS_DRAWN, arg=3, timeout=120_000)
        _settle(page)
        _assert_clean(page)
        assert "Simulated jobs submitted from" in page.inner_text("body")
        body = page.inner_text("body")
        assert " waited " in body and "p95 wait" in body
        labels = page.locator('[data-testid="stMetricLabel"]').all_inner_texts()
        assert labels.count("Utilisation") == 2
        page.screenshot(path=str(ARTIFACTS / "whatif.png"), full_page=True)
        page.get_by_role("button", name="in the job view").click()   # the one job view, in this run's window
        page.get_by_text("When will it start? The predicted interval").wait_for(timeout=120_000)
        _settle(page)
        _assert_clean(page)
        assert page.url.endswith("/job") and "Simulated over the first 1 day" in page.inner_text("body")


@shared(*FIDELITY_INPUTS)
def test_fidelity_shows_the_record_and_reruns_both_experiments(server):  # noqa: F811
    with _page(server, "/fidelity", 5200) as page:
        _drawn(page, 2)
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


@shared("traces/swf/CTC-SP2-1996-3.1-cln.swf.gz")
def test_fidelity_shows_the_sc15_backfilling_table_and_reruns_one_scheduler(server):  # noqa: F811
    with _page(server, "/fidelity", 12000) as page:
        _drawn(page, 3)
        assert _metrics(page)["SC'15 backfilling · CTC-SP2 · figures within 0.5 %"] == "5 of 5"
        page.get_by_role("button", name="Run again", exact=True).nth(2).click()   # RLScheduler, FGD, then ours
        page.get_by_text("CTC-SP2, EASY (user estimates), pyss-compatible: average bounded slowdown 49.57 just "
                         "now").wait_for(timeout=60_000)
        _settle(page)
        _assert_clean(page)
        assert "published 49.57: within 0.5 %; identical to the record." in page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / "fidelity-backfill.png"), full_page=True)


def test_timezones_page_draws_bands_handoff_and_holidays(server):  # noqa: F811
    with _page(server, "/timezones", 4200) as page:
        _drawn(page, 5)
        assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
        assert set(_metrics(page)) == {"Off-hours idle GPU-hours", "Flexible work queued",
                                       "Lendable GPU-hours (upper bound)", "Residency violations"}
        body = page.inner_text("body")
        assert "Largest hand-offs" in body and "busiest around" in body and "Who is at work" in body
        assert page.locator('[data-testid="stPlotlyChart"] .shapelayer path').count() > 0   # working-hour bands
        page.screenshot(path=str(ARTIFACTS / "timezones.png"), full_page=True)
        regions = _metrics(page)
        assert "follow each region's own calendar" in page.inner_text("body")
        page.get_by_role("radiogroup", name="Whose hours").get_by_text("teams'", exact=True).click()
        page.get_by_text("follow the teams' calendars").wait_for(timeout=120_000)
        _settle(page)
        _assert_clean(page)
        assert "me-central: teams: arabic-nlp" in page.inner_text("body")
        teams = _metrics(page)
        assert teams["Lendable GPU-hours (upper bound)"] != regions["Lendable GPU-hours (upper bound)"]
        page.screenshot(path=str(ARTIFACTS / "timezones-teams.png"), full_page=True)


def test_cost_and_carbon_page_on_a_week_of_the_sample(server):  # noqa: F811
    with _page(server, "/cost", 3000) as page:
        _drawn(page, 5, 180_000)
        assert page.get_by_role("combobox", name="Dataset", exact=True).input_value() == "sample"
        days = page.get_by_role("spinbutton", name="Simulate the first N days (0 = all)")
        assert days.input_value() == "7"  # not "7.00"
        assert set(_metrics(page)) == {"Spend", "Idle reserved cost", "Effective $/GPU-hour",
                                       "Productive $/GPU-hour", "Carbon (CO2e)"}
        body = page.inner_text("body")
        assert "Trade-off across scenarios" in body and "none was assumed" in body
        assert page.locator('[data-testid="stPlotlyChart"] .scatterlayer .point').count() >= 2  # one per scenario
        page.screenshot(path=str(ARTIFACTS / "costcarbon.png"), full_page=True)
