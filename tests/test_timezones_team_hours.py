"""The Time zones analysis on the teams' working hours (build_timezones(..., calendar="team")), worked out by
hand on Friday 2026-01-02 10:00-12:00 UTC (2 hours):

- region me (Asia/Riyadh, UTC+3, no country: its own calendar is Mon-Fri 9-18 local) has 8 GPUs and runs a
  2-GPU training job: 6 idle each hour. On its own calendar it is at work (Friday 13:00-15:00 local); its
  only team, arabic (Sun-Thu 8-17 Riyadh), is off on Friday, so under the teams' hours me is off ("weekend").
- region us (America/Los_Angeles, no team: keeps its own calendar) is off (Friday 02:00-04:00 local), its 4
  GPUs busy with a training job, and an 8-GPU batch job waits in its queue the whole time.

Region calendars: nothing is lendable (me at work, us has no idle GPU) and no idle GPU is off-hours.
Team calendars: me -> us lends min(6 idle, 8 waiting) = 6 GPUs per hour, 12 GPU-hours; me's 12 idle
GPU-hours are off-hours. A second team homed in me that works Fridays puts me back at work.
"""
import pandas as pd

from engine.analysis.telemetry.timezones import build_timezones

T = pd.Timestamp
REGIONS = pd.DataFrame({"region": ["me", "us"], "timezone": ["Asia/Riyadh", "America/Los_Angeles"],
                        "country": ["", ""], "jurisdiction": ["SA", "US"]})
TEAMS = pd.DataFrame({"team": ["arabic"], "timezone": ["Asia/Riyadh"], "work_start_hour": [8], "work_end_hour": [17],
                      "working_days": ["Sun-Thu"], "holiday_country": [""], "home_region": ["me"]})
FLEET = pd.DataFrame({"region": ["me", "us"], "node": ["m0", "u0"], "gpu_type": "H100", "gpus": [8, 4],
                      "tier": "reserved"})
JOBS = pd.DataFrame({
    "job_id": ["run-me", "run-us", "wait-us"], "workload_class": ["training", "training", "batch"],
    "submit_utc": [T("2026-01-02 10:00")] * 3, "start_utc": [T("2026-01-02 10:00")] * 2 + [pd.NaT],
    "end_utc": [T("2026-01-02 12:00")] * 2 + [pd.NaT], "gpus": [2.0, 4.0, 8.0], "gpu_type": "H100",
    "region": ["me", "us", "us"], "status": ["completed", "completed", "pending"], "residency": None})


def test_a_sun_thu_team_makes_its_mon_fri_region_lend_on_friday():
    region = build_timezones(JOBS, FLEET, REGIONS, TEAMS)
    team = build_timezones(JOBS, FLEET, REGIONS, TEAMS, calendar="team")
    assert region.calendar == "region" and team.calendar == "team"
    assert region.lendable_gpu_hours == 0.0 and region.off_hours_idle_gpu_hours == 0.0
    assert team.lendable_gpu_hours == 12.0 and team.off_hours_idle_gpu_hours == 12.0
    assert team.pairs[["from_region", "to_region", "lendable_gpu_hours", "weekend_pct"]].values.tolist() == [
        ["me", "us", 12.0, 100.0]]
    me = team.hourly[team.hourly["region"] == "me"]
    assert list(me["at_work"]) == [False, False] and list(me["off_reason"]) == ["weekend", "weekend"]
    assert list(me["local_hour"]) == [13, 14]   # still on the region's own clock
    assert team.calendar_use.values.tolist() == [["me", "teams: arabic"], ["us", "region's own"]]
    assert region.calendar_use["working_hours_of"].tolist() == ["region's own", "region's own"]


def test_a_region_is_at_work_while_any_of_its_teams_is():
    both = pd.concat([TEAMS, TEAMS.assign(team="support", working_days="Mon-Fri", work_end_hour=18)])
    team = build_timezones(JOBS, FLEET, REGIONS, both, calendar="team")
    assert team.lendable_gpu_hours == 0.0 and team.off_hours_idle_gpu_hours == 0.0
    assert team.calendar_use.values.tolist() == [["me", "teams: arabic, support"], ["us", "region's own"]]
