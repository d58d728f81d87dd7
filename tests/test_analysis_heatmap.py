"""The hour-of-week heat map is in each region's local time, across DST changes."""
import pandas as pd
import pytest

from engine.analysis.telemetry.overview import build_overview

NO_ROWS = pd.DataFrame()
FLEET = pd.DataFrame({"region": ["eu"], "node": ["n"], "gpu_type": ["H100"], "gpus": [1], "tier": ["reserved"]})


def _daily_8am_jobs(first_local_monday: str, tz: str) -> pd.DataFrame:
    """One 1-GPU job every day of one local week from 08:00 to 09:00 local time, plus a 0-GPU
    marker job spanning the whole local week (it fixes the analysis window)."""
    days = pd.date_range(first_local_monday, periods=8, freq="D")   # local wall-clock midnights

    def utc(local):
        return local.tz_localize(tz).tz_convert("UTC").tz_localize(None)

    starts = utc(days[:7] + pd.Timedelta(hours=8))
    week_start, week_end = utc(days[:1])[0], utc(days[7:])[0]
    jobs = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(7)] + ["marker"],
        "submit_utc": list(starts) + [week_start], "start_utc": list(starts) + [week_start],
        "end_utc": list(starts + pd.Timedelta(hours=1)) + [week_end],
        "gpus": [1.0] * 7 + [0.0],
    })
    return jobs.assign(workload_class="development", gpu_type="H100", region="eu", status="completed")


@pytest.mark.parametrize("monday, skipped, doubled", [
    ("2024-03-25", (6, 2), None),   # clocks go forward on Sunday 31 March: no 02:00 that day
    ("2024-10-21", None, (6, 2)),   # clocks go back on Sunday 27 October: 02:00 happens twice
])
def test_dst_week_in_berlin_maps_work_to_local_8am(monday, skipped, doubled):
    regions = pd.DataFrame({"region": ["eu"], "timezone": ["Europe/Berlin"]})
    o = build_overview(_daily_8am_jobs(monday, "Europe/Berlin"), FLEET, regions, NO_ROWS)
    cells = o.heatmap.set_index(["weekday", "local_hour"])
    busy_cells = cells[cells["busy_unit_hours"] > 0]
    assert list(busy_cells.index) == [(d, 8) for d in range(7)]
    assert (busy_cells["utilisation_pct"] == 100.0).all()
    assert cells["utilisation_pct"].drop(index=busy_cells.index).eq(0).all()
    assert set(o.heatmap["timezone"]) == {"Europe/Berlin"}
    if skipped:
        assert skipped not in cells.index and len(cells) == 167
    if doubled:
        assert cells.loc[doubled, "capacity_unit_hours"] == 2.0 and len(cells) == 168


def test_half_hour_zone_gets_exact_local_hours():
    regions = pd.DataFrame({"region": ["eu"], "timezone": ["Asia/Kolkata"]})
    o = build_overview(_daily_8am_jobs("2024-01-01", "Asia/Kolkata"), FLEET, regions, NO_ROWS)
    cells = o.heatmap.set_index(["weekday", "local_hour"])
    assert cells.loc[(0, 8), "utilisation_pct"] == 100.0
    assert cells.loc[(0, 7), "utilisation_pct"] == 0.0 and cells.loc[(0, 9), "utilisation_pct"] == 0.0
    # The window is whole UTC hours: the local week (18:30 UTC to 18:30 UTC) widened by half an
    # hour at each end, so 169 GPU-hours of capacity, all of them in some local hour's cell.
    assert cells["capacity_unit_hours"].sum() == pytest.approx(169)
    # Sunday 23:00 local: a whole hour at the week's end plus the half hour before it starts.
    assert cells.loc[(6, 23), "capacity_unit_hours"] == 1.5


def test_region_without_a_time_zone_is_shown_in_utc_and_said_so():
    o = build_overview(_daily_8am_jobs("2024-01-01", "UTC"), FLEET, NO_ROWS, NO_ROWS)
    assert set(o.heatmap["timezone"]) == {"UTC"}
    assert any("No time zone recorded for eu" in note for note in o.assumptions)
