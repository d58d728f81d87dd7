"""Time zones analysis: demand and utilisation by UTC hour, working-hour bands (DST, holidays), the
follow-the-sun hand-off bound and the residency audit.

The tiny dataset, worked out by hand: Monday 2024-03-04 08:00-11:00 UTC (3 hours). Region ap (Tokyo,
JST = UTC+9, 4 GPUs) is at work 08:00-09:00 UTC (17:xx local) and off after 18:00 local; region eu
(Berlin, CET = UTC+1, 2 GPUs) is at work all three hours (09-12 local).
  a  eu training   2 GPUs runs 08:00-11:00          -> eu busy 2, 2, 2 (full)
  b  eu batch      2 GPUs waits 08:00-11:00 (pending)
  d  eu hpo        3 GPUs waits 09:30-11:00, tag EU -> may not go to ap
  c  ap inference  1 GPU  runs 08:00-11:00, tag EU  -> a residency violation (ap is in JP)
  e  ap development 2 GPUs waits 08:00-08:30, runs 08:30-09:30
ap busy 2, 2, 1 -> idle 2, 2, 3; eu flexible waiting 2, 3.5, 5, of which b's 2 may go to ap.
ap -> eu lends min(2, 2) + min(3, 2) = 4 GPU-hours in the two off-hours (min(2, 3.5) + min(3, 5) = 5
without the EU tag).
"""
import numpy as np
import pandas as pd
import pytest

from engine.analysis.telemetry import handoff, workhours
from engine.analysis.telemetry.overview import build_overview
from engine.analysis.telemetry.timezones import build_timezones
from engine.core.vocabulary import FLEXIBLE_CLASSES, WORKLOAD_CLASSES
from engine.telemetry.sample import read_bundle

T = pd.Timestamp
NAT = pd.NaT
REGIONS = pd.DataFrame({"region": ["ap", "eu"], "timezone": ["Asia/Tokyo", "Europe/Berlin"],
                        "country": ["JP", "DE"], "jurisdiction": ["JP", "EU"]})
TEAMS = pd.DataFrame({"team": ["tokyo-dev", "riyadh-nlp"], "timezone": ["Asia/Tokyo", "Asia/Riyadh"],
                      "work_start_hour": [9, 8], "work_end_hour": [18, 17], "working_days": ["Mon-Fri", "Sun-Thu"],
                      "holiday_country": ["JP", "SA"], "home_region": ["ap", None]})
FLEET = pd.DataFrame({"region": ["ap", "eu"], "node": ["n1", "n2"], "gpu_type": ["H100", "H100"], "gpus": [4, 2],
                      "tier": ["reserved", "reserved"]})
JOBS = pd.DataFrame({
    "job_id": ["a", "b", "c", "d", "e"],
    "workload_class": ["training", "batch", "inference", "hpo", "development"],
    "submit_utc": [T("2024-03-04 08:00"), T("2024-03-04 08:00"), T("2024-03-04 08:00"), T("2024-03-04 09:30"),
                   T("2024-03-04 08:00")],
    "start_utc": [T("2024-03-04 08:00"), NAT, T("2024-03-04 08:00"), NAT, T("2024-03-04 08:30")],
    "end_utc": [T("2024-03-04 11:00"), NAT, T("2024-03-04 11:00"), NAT, T("2024-03-04 09:30")],
    "gpus": [2.0, 2.0, 1.0, 3.0, 2.0], "gpu_type": "H100", "region": ["eu", "eu", "ap", "eu", "ap"],
    "status": ["completed", "pending", "completed", "pending", "completed"],
    "residency": [None, None, "EU", "EU", None]})


def utc(text: str) -> float:
    return pd.Timestamp(text, tz="UTC").timestamp()


@pytest.fixture(scope="module")
def tiny():
    return build_timezones(JOBS, FLEET, REGIONS, TEAMS)


def test_hourly_busy_queued_idle_and_calendar_state(tiny):
    ap = tiny.hourly[tiny.hourly["region"] == "ap"]
    eu = tiny.hourly[tiny.hourly["region"] == "eu"]
    assert list(ap["bin_start_utc"]) == [T("2024-03-04 08:00"), T("2024-03-04 09:00"), T("2024-03-04 10:00")]
    assert list(ap["busy_gpu_hours"]) == [2.0, 2.0, 1.0] and list(ap["idle_gpu_hours"]) == [2.0, 2.0, 3.0]
    assert list(ap["queued_gpu_hours"]) == [1.0, 0.0, 0.0] and list(ap["submitted_gpus"]) == [3.0, 0.0, 0.0]
    assert list(ap["at_work"]) == [True, False, False] and list(ap["local_hour"]) == [17, 18, 19]
    assert list(ap["off_reason"]) == ["", "after hours", "after hours"]
    assert list(eu["busy_gpu_hours"]) == [2.0, 2.0, 2.0] and list(eu["queued_gpu_hours"]) == [2.0, 3.5, 5.0]
    assert list(eu["flexible_queued_gpu_hours"]) == [2.0, 3.5, 5.0] and list(eu["submitted_gpus"]) == [4.0, 3.0, 0.0]
    assert list(eu["at_work"]) == [True, True, True] and list(eu["local_hour"]) == [9, 10, 11]


def test_profiles_by_utc_hour_of_day_and_week(tiny):
    eu10 = tiny.by_hour[(tiny.by_hour["region"] == "eu") & (tiny.by_hour["utc_hour"] == 10)].iloc[0]
    assert eu10["utilisation_pct"] == 100.0 and eu10["demand_pct"] == 350.0 and eu10["demand_gpus"] == 7.0
    ap8 = tiny.by_hour[(tiny.by_hour["region"] == "ap") & (tiny.by_hour["utc_hour"] == 8)].iloc[0]
    assert ap8["utilisation_pct"] == 50.0 and ap8["at_work_pct"] == 100.0 and ap8["off_idle_gpus"] == 0.0
    assert list(tiny.by_hour_of_week["utc_hour_of_week"].unique()) == [8, 9, 10]   # Monday 08-10 UTC
    assert tiny.daily["utilisation_pct"].round(4).tolist() == [round(100 * 5 / 12, 4), 100.0]


def test_handoff_respects_residency_and_stays_below_idle(tiny):
    assert tiny.pairs[["from_region", "to_region", "lendable_gpu_hours", "hours", "after_hours_pct",
                       "peak_utc_hour", "from_local_hour", "to_local_hour"]].values.tolist() == [
        ["ap", "eu", 4.0, 2, 100.0, 9, 18, 10]]
    assert tiny.lendable_gpu_hours == 4.0 and tiny.off_hours_idle_gpu_hours == 5.0 and tiny.idle_gpu_hours == 7.0
    assert tiny.flexible_queued_gpu_hours == 10.5
    assert tiny.handoff_by_hour["lendable_gpus"].tolist() == [0.0, 2.0, 2.0]
    text = handoff.describe(tiny.pairs.iloc[0])
    assert text.startswith("From ap's evening (18:00 local) to eu's morning (10:00 local), busiest around "
                           "09:00 UTC: up to 4 GPU-hours over 2 hours (lender off: after hours 100%)")
    untagged = build_timezones(JOBS.assign(residency=None), FLEET, REGIONS, TEAMS)
    assert untagged.pairs["lendable_gpu_hours"].tolist() == [5.0] and untagged.lendable_gpu_hours == 5.0


def test_fleet_bound_is_the_smallest_of_three_upper_bounds():
    # two lenders off, one borrower: borrower s=2 has 5 GPU-hours waiting; lenders idle 3 and 4
    idle = np.array([[3.0], [4.0], [0.0]])
    off = np.array([[True], [True], [False]])
    waiting_by_tag = np.zeros((3, 1, 1))
    waiting_by_tag[2, 0, 0] = 5.0
    allowed = np.ones((1, 3), dtype=bool)
    waiting = np.einsum("sch,cr->srh", waiting_by_tag, allowed.astype(float))
    pairs = handoff.pair_bounds(idle, off, waiting)
    assert pairs[:, :, 0].tolist() == [[0, 0, 3], [0, 0, 4], [0, 0, 0]]   # each pair alone
    assert handoff.fleet_bound(idle, off, waiting_by_tag, allowed, pairs).tolist() == [5.0]  # 5 jobs, 7 idle


def test_residency_audit_counts_jobs_that_ran_outside_their_tag(tiny):
    assert tiny.residency.violations == 1
    assert tiny.residency.table.values.tolist() == [["c", "ap", "EU", "eu"]]
    assert tiny.residency.message == ("1 of the 1 jobs that ran with a residency tag ran in a region their tag "
                                      "does not allow.")


def _shifts(bands: pd.DataFrame, name: str) -> list[tuple[str, str]]:
    rows = bands[bands["name"] == name]
    return [(f"{s:%Y-%m-%d %H:%M}", f"{e:%H:%M}") for s, e in zip(rows["start_utc"], rows["end_utc"])]


def _usual_shift(bands: pd.DataFrame, name: str) -> list[float]:
    return workhours.day_bands(bands).set_index("name").loc[name, ["start_hour_utc", "end_hour_utc"]].tolist()


def test_bands_follow_dst_and_skip_holidays():
    notes = []
    cals = workhours.calendars(pd.DataFrame({"region": ["eu", "us"], "timezone": ["Europe/Berlin", "America/New_York"],
                                             "country": ["DE", "US"]}), TEAMS, ["eu", "us"], notes)
    assert notes == []
    before = workhours.bands(cals, T("2024-03-25"))      # CET; Good Friday 29 March
    after = workhours.bands(cals, T("2024-04-01"))       # CEST from Sunday 31 March; Easter Monday 1 April
    assert _shifts(before, "eu") == [
        ("2024-03-25 08:00", "17:00"), ("2024-03-26 08:00", "17:00"), ("2024-03-27 08:00", "17:00"),
        ("2024-03-28 08:00", "17:00")]
    assert _shifts(after, "eu") == [
        ("2024-04-02 07:00", "16:00"), ("2024-04-03 07:00", "16:00"), ("2024-04-04 07:00", "16:00"),
        ("2024-04-05 07:00", "16:00")]
    us_mar4 = workhours.bands(cals, T("2024-03-04"))     # EST until Sunday 10 March, EDT after
    us_mar11 = workhours.bands(cals, T("2024-03-11"))
    assert _usual_shift(us_mar4, "us") == [14, 23] and _usual_shift(us_mar11, "us") == [13, 22]
    riyadh = before[before["name"] == "riyadh-nlp"]      # Sun-Thu 08-17 AST (UTC+3)
    assert riyadh["local_start"].tolist() == ["Mon 08:00", "Tue 08:00", "Wed 08:00", "Thu 08:00", "Sun 08:00"]
    assert riyadh["start_utc"].dt.hour.unique().tolist() == [5]


def test_day_bands_cross_midnight_utc():
    cals = workhours.calendars(pd.DataFrame({"region": ["west"], "timezone": ["America/Los_Angeles"]}),
                               pd.DataFrame(), ["west"], [])
    assert workhours.day_bands(workhours.bands(cals, T("2024-07-01"))).values.tolist() == [
        ["region", "west", 16.0, 25.0]]


def test_holidays_named_on_working_days_only():
    cals = workhours.calendars(pd.DataFrame({"region": ["eu", "se"], "timezone": ["Europe/Berlin", "Europe/Stockholm"],
                                             "country": ["DE", "SE"]}), pd.DataFrame(), ["eu", "se"], [])
    found = workhours.holiday_list(cals, T("2024-03-25"), T("2024-04-08"))
    assert found[["name", "date", "holiday"]].values.tolist() == [
        ["eu", T("2024-03-29"), "Good Friday"], ["se", T("2024-03-29"), "Good Friday"],
        ["eu", T("2024-04-01"), "Easter Monday"], ["se", T("2024-04-01"), "Easter Monday"]]   # no Swedish Sundays


def test_holiday_and_weekend_hours_are_off_for_that_reason():
    jobs = pd.DataFrame({"job_id": ["x"], "workload_class": ["batch"], "submit_utc": [T("2024-03-28 08:00")],
                         "start_utc": [T("2024-03-28 08:00")], "end_utc": [T("2024-03-30 09:00")], "gpus": [1.0],
                         "gpu_type": ["H100"], "region": ["eu"], "status": ["completed"]})
    tz = build_timezones(jobs, FLEET[FLEET["region"] == "eu"], REGIONS[REGIONS["region"] == "eu"], pd.DataFrame())
    hourly = tz.hourly.set_index("bin_start_utc")
    assert hourly.loc[T("2024-03-29 08:00"), "off_reason"] == "holiday"     # Good Friday, 09:30 CET
    assert hourly.loc[T("2024-03-30 08:00"), "off_reason"] == "weekend"     # Saturday
    assert hourly.loc[T("2024-03-29 20:00"), "off_reason"] == "holiday"      # the whole holiday is off
    assert hourly.loc[T("2024-03-28 20:00"), "off_reason"] == "after hours"  # Thursday evening
    assert hourly.loc[T("2024-03-28 08:00"), "off_reason"] == ""             # Thursday 09:30 CET, at work
    assert tz.holidays[["name", "holiday"]].values.tolist() == [["eu", "Good Friday"]]


def test_missing_calendars_and_no_jobs_are_explained():
    assert build_timezones(JOBS.iloc[:0], FLEET, REGIONS, TEAMS).kind == "empty"
    bare = build_timezones(JOBS.drop(columns="residency"), pd.DataFrame(columns=FLEET.columns), pd.DataFrame(),
                           pd.DataFrame())
    assert bare.kind == "jobs" and bare.holidays.empty and bare.residency.violations == 0
    assert any("No time zone recorded for ap, eu" in note for note in bare.notes)
    bad = build_timezones(JOBS, FLEET, REGIONS, TEAMS.assign(timezone=["Mars/Olympus", "Asia/Riyadh"]))
    assert any("tokyo-dev has no usable calendar" in note for note in bad.notes)
    assert set(bad.calendar_table["name"]) == {"ap", "eu", "riyadh-nlp"}
    assert build_timezones(JOBS, FLEET, pd.DataFrame(), TEAMS).residency.violations is None


def test_working_days_text_and_flexible_classes():
    assert [workhours.days_text(d) for d in [(0, 1, 2, 3, 4), (0, 1, 2, 3, 6), (0, 1, 2, 5, 6), (0, 2, 4)]] == [
        "Mon-Fri", "Sun-Thu", "Sat-Wed", "Mon,Wed,Fri"]
    assert set(FLEXIBLE_CLASSES) <= set(WORKLOAD_CLASSES)


def test_sample_dataset_is_consistent():
    bundle = read_bundle().tables
    tz = build_timezones(bundle["jobs"], bundle["fleet"], bundle["regions"], bundle["teams"])
    overview = build_overview(bundle["jobs"], bundle["fleet"], bundle["regions"], pd.DataFrame())
    busy, capacity = tz.hourly["busy_gpu_hours"].sum(), tz.hourly["capacity_gpus"].sum()
    assert 100 * busy / capacity == pytest.approx(overview.kpis.utilisation_pct, rel=1e-9)
    assert 0 <= tz.lendable_gpu_hours <= tz.off_hours_idle_gpu_hours <= tz.idle_gpu_hours
    lender_idle = tz.hourly[~tz.hourly["at_work"]].groupby("region")["idle_gpu_hours"].sum()
    assert (tz.pairs["lendable_gpu_hours"] >= 0).all()
    assert (tz.pairs["lendable_gpu_hours"] <= tz.pairs["from_region"].map(lender_idle) + 1e-6).all()
    assert tz.residency.violations == 0
    regions = tz.calendar_table.loc[tz.calendar_table["kind"] == "region", "name"].tolist()
    assert len(regions) == 7 and len(tz.weeks()) == 12
    holidays = tz.holidays[tz.holidays["kind"] == "region"]
    for week in tz.weeks():
        counts = tz.bands(week).query("kind == 'region'").groupby("name").size().reindex(regions, fill_value=0)
        off = holidays[(holidays["date"] >= week) & (holidays["date"] < week + pd.Timedelta(days=5))]
        expected = 5 - off.groupby("name").size().reindex(regions, fill_value=0)
        assert counts.to_dict() == expected.to_dict(), week


def test_week_hours_puts_each_teams_hours_and_holidays_beside_its_home_region():
    # week of Monday 2024-03-18: Japan's Vernal Equinox Day (Wednesday 20th) takes a shift from ap and
    # tokyo-dev (JP holidays); riyadh-nlp works Sun-Thu 8-17 Riyadh: Mon-Thu and Sunday 24th in the week
    notes: list[str] = []
    cals = workhours.calendars(REGIONS, TEAMS, ["ap", "eu"], notes)
    week = T("2024-03-18")
    table = workhours.week_hours(workhours.calendar_table(cals, TEAMS), workhours.bands(cals, week),
                                 workhours.holiday_list(cals, week, week + pd.Timedelta(days=7)), week)
    assert table[["region", "kind", "name"]].values.tolist() == [
        ["ap", "region", "ap"], ["ap", "team", "tokyo-dev"], ["eu", "region", "eu"], ["", "team", "riyadh-nlp"]]
    assert table["shifts"].tolist() == [4, 4, 5, 5] and table["hours_at_work"].tolist() == [36.0, 36.0, 45.0, 45.0]
    assert table["holidays"].tolist() == ["Vernal Equinox Day"] * 2 + ["", ""]
    assert table["working_days"].tolist() == ["Mon-Fri", "Mon-Fri", "Mon-Fri", "Sun-Thu"]
    assert table["hours"].tolist() == ["9-18", "9-18", "9-18", "8-17"] and not notes
