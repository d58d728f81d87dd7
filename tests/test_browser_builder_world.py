"""The What-if builder's calendar, off-peak, fleet-edit and latency sections in a real Chromium against a real
`streamlit run` server on the sample: each opens and draws its table from the scenario declarations (the
calendar table shows me-central's Sun-Thu week, its country's); a latency SLO typed in reaches the
downloaded TOML. Screenshot to tests/artifacts/whatif_builder_calendars_fleet_latency.png."""
from browser_helpers import ARTIFACTS, _assert_clean, _served, _settle, database, pytestmark  # noqa: F401
from test_browser_scenario_files import download_custom, open_builder

from engine.scenario.spec import Scenario

SECTIONS = (("Calendars and holidays", "When each region's people work"),
            ("Off-peak windows", "Local hours in which on-demand and spot GPU-hours cost less"),
            ("Fleet edits: GPUs added or removed", "Whole nodes added"),
            ("Latency: round trips between regions, the inference SLO", "Round trips between regions"))


def _grid_text(page, caption: str) -> str:
    """The text of the table under `caption` (the data grid's accessible copy of its headings and cells,
    run together)."""
    grid = page.locator('[data-testid="stExpanderDetails"]').filter(has_text=caption).last.locator(
        '[data-testid="stDataFrame"]').first            # in the innermost expander with the caption
    grid.scroll_into_view_if_needed()
    page.wait_for_timeout(500)                          # the grid draws its cells once on screen
    return grid.text_content()


def test_the_builder_draws_its_calendar_off_peak_fleet_and_latency_sections(database, tmp_path):  # noqa: F811
    with _served(database, tmp_path, "/whatif", 3600) as page:
        open_builder(page, SECTIONS)
        _assert_clean(page)
        # the grids' headings come from the declarations; me-central keeps Saudi Arabia's Sun-Thu week
        calendars = _grid_text(page, "When each region's people work")
        assert calendars.startswith("regioncountrycountry's weekWorking daysWork starts (h)Work ends (h)Holidays of")
        assert "me-centralSASun-ThuSun-Thu918SA" in calendars and "eu-westIEMon-FriMon-Fri918IE" in calendars
        assert _grid_text(page, "Local hours in which").startswith(
            "regionOff-peak from (h)Off-peak until (h)Off-peak discount (fraction)")
        assert _grid_text(page, "Whole nodes added").startswith("RegionGPU typeTierAdded, or removed if negative (GPUs)")
        assert _grid_text(page, "Round trips between regions").startswith("regionand regionRound trip (ms)")
        slo = page.get_by_role("spinbutton", name="Inference latency SLO (ms)")
        slo.fill("80")
        slo.press("Enter")
        _settle(page)
        _assert_clean(page)
        page.get_by_text("Calendars and holidays", exact=True).evaluate("element => element.scrollIntoView()")
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "whatif_builder_calendars_fleet_latency.png"), full_page=True)
        assert Scenario.load(download_custom(page, tmp_path)[0]).latency.slo_ms == 80.0
