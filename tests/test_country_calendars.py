"""Working weeks from the country (engine.world.countries): the table's entries, a Sun-Thu region off
on Friday and at work on Sunday in the router's facts, the simulator's follow-the-sun routing and the
Time zones hand-off count, and team and region rows overriding the country's week."""
from __future__ import annotations

import holidays
import numpy as np
import pandas as pd
import pytest
from sim_helpers import job

from engine.analysis.telemetry import workhours
from engine.analysis.telemetry.timezones import build_timezones
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.calendar import Calendar, parse_working_days
from engine.world.countries import DEFAULT_WORKING_DAYS, WORKING_WEEKS, working_days_of
from engine.world.facts import RegionFacts, World

T = pd.Timestamp
REGIONS = pd.DataFrame({"region": ["eu", "me-central"], "timezone": ["Europe/Berlin", "Asia/Riyadh"],
                        "country": ["DE", "SA"], "jurisdiction": ["EU", "SA"]})
FRIDAY = T("2026-01-16 08:00")  # 11:00 in Riyadh, 09:00 in Berlin
SUNDAY = T("2026-01-18 08:00")  # 11:00 in Riyadh, Sunday in Berlin


@pytest.mark.parametrize("country, week", [
    ("SA", "Sun-Thu"), ("AE", "Mon-Fri"), ("IL", "Sun-Thu"), ("IR", "Sat-Wed"), ("AF", "Sat-Wed"), ("QA", "Sun-Thu"),
    ("KW", "Sun-Thu"), ("BH", "Sun-Thu"), ("OM", "Sun-Thu"), ("EG", "Sun-Thu"), ("JO", "Sun-Thu"),
    ("US", "Mon-Fri"), ("DE", "Mon-Fri"), ("JP", "Mon-Fri"), ("sa", "Sun-Thu"), ("US-CA", "Mon-Fri"),
    ("", DEFAULT_WORKING_DAYS), (None, DEFAULT_WORKING_DAYS), (float("nan"), DEFAULT_WORKING_DAYS)])
def test_the_country_table(country, week):
    assert working_days_of(country) == week


def test_every_entry_is_a_five_day_week_of_a_country_with_holidays():
    supported = holidays.list_supported_countries()
    for country, week in WORKING_WEEKS.items():
        assert len(parse_working_days(week)) == 5, country
        assert country in supported, country
    assert parse_working_days("Sun-Thu") == (0, 1, 2, 3, 6) and parse_working_days("Sat-Wed") == (0, 1, 2, 5, 6)


def test_a_sun_thu_region_is_off_on_friday_and_at_work_on_sunday():
    origin = T("2026-01-12")  # a Monday
    facts = RegionFacts(World(REGIONS), ["eu", "me-central"], origin, 7 * 86_400.0)
    for when, expected in ((FRIDAY, [True, False]), (SUNDAY, [False, True])):
        q = facts.quarter((when - origin).total_seconds())
        assert facts.at_work[:, q].tolist() == expected, when
    riyadh = Calendar.from_region(REGIONS.iloc[1])
    assert riyadh.working_days == (0, 1, 2, 3, 6)
    # a row's own working_days wins over its country's; a holiday override keeps the country's week
    assert Calendar.from_region({**REGIONS.iloc[1].to_dict(), "working_days": "Mon-Fri"}).working_days == (0, 1, 2, 3, 4)
    edited = World(REGIONS, calendars={"me-central": {"holiday_country": ""}})
    assert not RegionFacts(edited, ["me-central"], origin, 7 * 86_400.0).at_work[0, facts.quarter(
        (FRIDAY - origin).total_seconds())]


def follow_the_sun(at: pd.Timestamp):
    """eu full (an 8-GPU job from `at`); a flexible 8-GPU job a minute later may go to the idle me-central."""
    start = (at - T("2026-01-01")).total_seconds()
    jobs = [job(0, start, 86_400, 8, region="eu"), job(1, start + 60, 3_600, 8, region="eu")]
    fleet = pd.DataFrame([dict(region=r, cluster="c", node=f"{r}-n0", gpu_type="A", gpus=8, cpus=64, memory_gib=512,
                               rack="k0", tier="reserved") for r in ("eu", "me-central")])
    scenario = Scenario.from_dict({"name": "fts", "policies": {"routing": "follow-the-sun"}})
    return run_scenario(scenario, pd.DataFrame(jobs), fleet, World(REGIONS)).jobs


def test_follow_the_sun_sends_work_to_saudi_arabia_on_its_friday_not_its_sunday():
    friday, sunday = follow_the_sun(FRIDAY), follow_the_sun(SUNDAY)
    assert friday["region"].tolist() == ["eu", "me-central"] and friday["start_s"].iloc[1] == friday["submit_s"].iloc[1]
    assert sunday["region"].tolist() == ["eu", "eu"]  # me-central is at work on Sunday: it does not lend


def test_the_time_zones_hand_off_counts_me_central_idle_on_friday_only():
    # eu full 08:00-10:00 UTC with 4 flexible GPUs waiting; me-central's 4 GPUs idle
    def lendable(day: pd.Timestamp) -> float:
        jobs = pd.DataFrame({
            "job_id": ["a", "b"], "workload_class": ["training", "batch"], "submit_utc": [day, day],
            "start_utc": [day, pd.NaT], "end_utc": [day + pd.Timedelta(hours=2), pd.NaT], "gpus": [4.0, 4.0],
            "gpu_type": "H100", "region": ["eu", "eu"], "status": ["completed", "pending"], "residency": None})
        fleet = pd.DataFrame({"region": ["eu", "me-central"], "node": ["n1", "n2"], "gpu_type": "H100",
                              "gpus": [4, 4], "tier": "reserved"})
        return build_timezones(jobs, fleet, REGIONS, pd.DataFrame()).lendable_gpu_hours

    assert lendable(FRIDAY) == pytest.approx(8.0)  # two hours x 4 GPUs on Riyadh's weekend
    assert lendable(T("2026-01-15 08:00")) == 0.0  # Thursday 11:00 in Riyadh: at work


def test_a_team_calendar_overrides_its_region_and_a_blank_week_takes_its_country():
    teams = pd.DataFrame({"team": ["riyadh-mon-fri", "riyadh-default"], "timezone": "Asia/Riyadh",
                          "work_start_hour": 9, "work_end_hour": 17, "working_days": ["Mon-Fri", None],
                          "holiday_country": "SA", "home_region": "me-central"})
    cals = workhours.calendars(REGIONS, teams, ["me-central"], [])
    friday = np.array([FRIDAY.tz_localize("UTC").timestamp()])
    assert cals[("region", "me-central")].at_work(friday).tolist() == [False]
    assert cals[("team", "riyadh-mon-fri")].at_work(friday).tolist() == [True]
    assert cals[("team", "riyadh-default")].working_days == (0, 1, 2, 3, 6)
    table = workhours.calendar_table(cals, teams).set_index("name")["working_days"]
    assert table.to_dict() == {"me-central": "Sun-Thu", "riyadh-mon-fri": "Mon-Fri", "riyadh-default": "Sun-Thu"}
