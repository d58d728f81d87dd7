"""Issue 29 in a real Chromium against a real `streamlit run` server: the Overview's dollars (the recorded history
priced in the background, the same as Cost & carbon's over all of the dataset), importing a file with bad rows
(the valid ones kept, the rest listed), a CPU log counted in processors, and the job view with its predicted
start. Screenshots to tests/artifacts/."""
import re

from browser_helpers import (  # noqa: F401  (the fixture and the browser marks)
    ARTIFACTS,
    _assert_clean,
    _enter,
    _go,
    _metrics,
    _page,
    _settle,
    _wait_for_overview,
    pytestmark,
    server,
)
from test_import_keep_valid import _csv

SWF = "; MaxProcs: 8\n; MaxNodes: 2\n; UnixStartTime: 1700000000\n" + "\n".join(
    f"{i + 1} {i * 3000} {(i % 4) * 60} 2400 {2 + i % 3} -1 -1 {2 + i % 3} 3600 -1 1 {i % 3 + 1} -1 -1 1 -1 -1 -1"
    for i in range(30)) + "\n"


def test_the_overview_prices_the_sample_as_cost_and_carbon_does_over_all_of_it(server):  # noqa: F811
    with _page(server, "", 2600) as page:
        _wait_for_overview(page)
        _assert_clean(page)
        tiles = _metrics(page)
        assert re.fullmatch(r"\$[\d,]+", tiles["Spend a year"]) and re.fullmatch(r"\$[\d,]+", tiles["Idle cost a year"])
        body = page.inner_text("body")
        assert "the recorded history of 92,340 jobs as the recorded baseline replays it" in body
        page.screenshot(path=str(ARTIFACTS / "overview-priced.png"), full_page=True)
        _go(page, "Cost & carbon")
        _enter(page, "Simulate the first N days (0 = all)", "0", timeout_ms=300_000)
        page.get_by_text("a year at this rate").wait_for(timeout=60_000)
        caption = page.inner_text("body")
        assert f"spent, {tiles['Spend a year']} a year at this rate" in caption
        assert f"({tiles['Idle cost a year']} a year)" in caption
        page.screenshot(path=str(ARTIFACTS / "costcarbon-all.png"), full_page=True)


def test_a_file_with_bad_rows_keeps_the_valid_ones_and_lists_the_rest(server, tmp_path):  # noqa: F811
    upload = tmp_path / "jobs.csv"
    upload.write_bytes(_csv(rows=8, gap=2, bad=2))
    with _page(server, "/data", 2400) as page:
        page.locator("input[type=file]").wait_for(state="attached", timeout=120_000)
        _settle(page)
        page.set_input_files("input[type=file]", str(upload))
        zone = page.get_by_role("combobox", name="Time zone of naive timestamps")
        zone.click()
        page.keyboard.type("Europe/Berlin")
        page.keyboard.press("Enter")
        _settle(page)
        page.get_by_text("Import the valid rows and set the rest aside").click()
        _settle(page)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text("Imported 6 rows (csv) into dataset jobs").wait_for(timeout=60_000)
        _settle(page)
        _assert_clean(page)
        body = page.inner_text("body")
        assert "2 row(s) with 2 problem(s) were set aside" in body and "Rows set aside" in body
        assert "fall in the hour skipped when clocks go forward" in body
        page.screenshot(path=str(ARTIFACTS / "data-set-aside.png"), full_page=True)


def test_a_cpu_log_is_counted_in_processors(server, tmp_path):  # noqa: F811
    upload = tmp_path / "log.swf"
    upload.write_text(SWF)
    with _page(server, "/data", 2400) as page:
        page.locator("input[type=file]").wait_for(state="attached", timeout=120_000)
        _settle(page)
        page.set_input_files("input[type=file]", str(upload))
        _settle(page)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text("into dataset log").wait_for(timeout=60_000)
        _settle(page)
        _go(page, "Overview")
        _wait_for_overview(page, charts=5)   # no dollars without the log's own prices
        _assert_clean(page)
        tiles = _metrics(page)
        assert "Idle processor-hours" in tiles and tiles["Spend a year"] == "n/a"
        assert "8 processors (from the fleet table)" in page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / "overview-cpu-log.png"), full_page=True)
        _go(page, "Teams & fairness")
        page.get_by_text("Each team's share against its entitlement").wait_for(timeout=120_000)
        _settle(page)
        _assert_clean(page)
        assert "(none)" not in page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / "fairness-cpu-log.png"), full_page=True)
