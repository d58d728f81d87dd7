"""Team calendars (engine.world.team_hours, a scenario's `calendar = "team"`) on a hand-built two-region
fleet: a Sun-Thu team (Saudi Arabia) is off on Friday for the router and for live follow-the-sun, its
day start (Sunday 08:00 Riyadh) hands over exactly the borrowed work its queued job needs, and the
home work waiting at a day start (the day_start KPIs) follows the run's calendars."""
import pandas as pd
import pytest
from sim_helpers import job

from engine.analysis.runs.handoff import day_start_kpis
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.compare import run_one
from engine.service.run import run_scenario
from engine.world.facts import RegionFacts, World

# both regions without a country: their own calendars are Mon-Fri 9-18 local with no holidays
REGIONS = pd.DataFrame({"region": ["me", "us"], "timezone": ["Asia/Riyadh", "America/Los_Angeles"],
                        "country": ["", ""], "jurisdiction": ["SA", "US"]})
# arabic: Sun-Thu (its country's week: working_days left blank) 8-17 Riyadh = 05:00-14:00 UTC
TEAMS = pd.DataFrame({"team": ["arabic", "eng"], "timezone": ["Asia/Riyadh", "America/Los_Angeles"],
                      "work_start_hour": [8, 9], "work_end_hour": [17, 17], "working_days": ["", "Mon-Fri"],
                      "holiday_country": ["SA", ""], "home_region": ["me", "us"], "share_weight": [1.0, 1.0]})
WORLD = World(REGIONS, teams=TEAMS)
H = 3600.0  # sim_helpers' T0 is Thursday 2026-01-01 00:00 UTC
FRIDAY, SUNDAY = 24 * H, 72 * H
HANDOFF = {"enabled": True, "checkpoint_min": 10, "checkpoint_gb_per_gpu": 16, "transfer_gbps": 10,
           "restart_min": 5, "min_run_h": 4, "min_left_h": 2}


def fleet():
    return pd.DataFrame([dict(region=r, cluster="c", node=f"{r}0", gpu_type="A", gpus=8, cpus=64, memory_gib=512,
                              rack="k0", tier="reserved") for r in ("me", "us")])


def recorded(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    return frame.assign(start_utc=frame["submit_utc"], end_utc=frame["submit_utc"] + (frame["end_utc"] - frame["start_utc"]))


def scenario(calendar: str, handoff: dict | None = None) -> Scenario:
    spec = {"name": calendar, "calendar": calendar, "policies": {"routing": "follow-the-sun"}}
    return Scenario.from_dict({**spec, "handoff": handoff} if handoff else spec)


def test_a_sun_thu_team_is_off_on_friday_and_at_work_on_sunday_for_the_router():
    origin = pd.Timestamp("2026-01-01")
    facts = {c: RegionFacts(scenario(c).world(WORLD), ["me", "us"], origin, 4 * 24 * H) for c in ("region", "team")}
    friday_10_riyadh, sunday_10_riyadh = int((FRIDAY + 7 * H) // 900), int((SUNDAY + 7 * H) // 900)
    assert facts["region"].at_work[0, friday_10_riyadh] and not facts["region"].at_work[0, sunday_10_riyadh]
    assert not facts["team"].at_work[0, friday_10_riyadh] and facts["team"].at_work[0, sunday_10_riyadh]
    assert not facts["team"].work_row("arabic", 0)[friday_10_riyadh]
    assert facts["team"].work_row("unlisted", 0)[friday_10_riyadh] == facts["team"].at_work[0, friday_10_riyadh]
    assert facts["region"].team_at_work == {}


def test_follow_the_sun_lends_a_sun_thu_teams_gpus_on_friday_only_on_team_calendars():
    # Friday 04:00 UTC: eng's u0 fills us; at 07:00 UTC (10:00 Friday in Riyadh) eng's flexible u1 cannot
    # start at home. On region calendars me is at work (Mon-Fri): no lender, u1 waits at home for u0's end
    # (14:00 UTC); on the teams' calendars me's only team (arabic, Sun-Thu) is off: me lends its 8 GPUs at
    # once. Run seconds count from u0's submit.
    frame = recorded([job(0, FRIDAY + 4 * H, 10 * H, 8, region="us", team="eng"),
                      job(1, FRIDAY + 7 * H, 5 * H, 8, region="us", team="eng")])
    region = run_scenario(scenario("region"), frame, fleet(), WORLD).jobs.set_index("job_id")
    team = run_scenario(scenario("team"), frame, fleet(), WORLD).jobs.set_index("job_id")
    assert region.loc["j1", "region"] == "us" and region.loc["j1", "start_s"] == pytest.approx(10 * H)
    assert team.loc["j1", "region"] == "me" and team.loc["j1", "start_s"] == pytest.approx(3 * H)


def borrowed() -> pd.DataFrame:
    """Thursday 18:00 UTC eng's u0 fills us for 8 h; at 20:00 (23:00 in Riyadh, off on both calendars) eng's
    u1 (8 GPUs, 100 h) borrows me. Friday 04:00 UTC arabic's s0 (4 GPUs, development) queues at me."""
    return recorded([job(0, 18 * H, 8 * H, 8, region="us", team="eng"),
                     job(1, 20 * H, 100 * H, 8, region="us", team="eng"),
                     job(2, FRIDAY + 4 * H, 2 * H, 4, region="me", team="arabic", workload_class="development")])


def test_a_sun_thu_teams_day_start_hands_over_exactly_the_borrowed_work():
    region = run_scenario(scenario("region", HANDOFF), borrowed(), fleet(), WORLD)
    team = run_scenario(scenario("team", HANDOFF), borrowed(), fleet(), WORLD)
    # region calendars: me's Friday 09:00 (06:00 UTC) starts a day; team calendars: arabic is off Friday
    # and Saturday, its next day starts Sunday 08:00 Riyadh (05:00 UTC). Run seconds count from u0's submit.
    for result, decided in ((region, FRIDAY + 6 * H), (team, SUNDAY + 5 * H)):
        moves = result.handoffs
        assert moves["job_id"].tolist() == ["j1"] and moves["to_region"].tolist() == ["us"]
        assert moves["time_s"].tolist() == [decided - 18 * H]
        # 600 s checkpoint + 16 GB x 8 GPUs x 8 / 10 Gbit/s = 102.4 s + 300 s restart, x 8 GPUs
        assert moves["lost_gpu_hours"].tolist() == pytest.approx([1002.4 * 8 / H])
        # the work left at the decision: 100 h less what ran since Thursday 20:00
        assert moves["moved_gpu_hours"].tolist() == pytest.approx([(100 * H - (decided - 20 * H)) * 8 / H])
        out = result.jobs.set_index("job_id")
        assert out.loc["j2", "start_s"] == pytest.approx(decided - 18 * H + 600)  # s0 takes the room u1 left


def test_the_day_start_kpis_follow_the_runs_calendars():
    # s0 waits at a day start of its calendar: region me's Friday 06:00 UTC start (it starts 06:10: 2 h 10 min
    # after its 04:00 submit), or arabic's Sunday 05:00 UTC start (it starts 05:10: 49 h 10 min); u1 started
    # before any day start of us and u0 at once
    for calendar, wait in (("region", 2 * H + 600), ("team", 49 * H + 600)):
        chosen = scenario(calendar, HANDOFF)
        result = run_scenario(chosen, borrowed(), fleet(), WORLD)
        assert day_start_kpis(result, chosen.world(WORLD)) == {"day_start_wait_jobs": 1,
                                                               "day_start_wait_mean_s": pytest.approx(wait)}
        run = run_one(chosen, borrowed(), fleet(), WORLD, strand=False)
        assert run.kpis["day_start_wait_jobs"] == 1 and run.kpis["day_start_wait_mean_s"] == pytest.approx(wait)


def test_without_the_hand_off_the_home_work_waits_for_the_borrowed_job():
    result = run_scenario(scenario("team"), borrowed(), fleet(), WORLD)
    # u1 holds me's 8 GPUs to Tuesday 00:00 UTC (100 h from Thursday 20:00): s0 waits from Friday 04:00
    assert day_start_kpis(result, scenario("team").world(WORLD)) == {
        "day_start_wait_jobs": 1, "day_start_wait_mean_s": pytest.approx(120 * H - 28 * H)}


def test_a_bad_calendar_names_the_file_and_key():
    with pytest.raises(ScenarioError, match=r'^s.toml: calendar must be "region" .* or "team" .*, got \'teams\''):
        Scenario.from_dict({"calendar": "teams"}, source="s.toml")


@pytest.mark.parametrize("field, value, problem", [
    ("working_days", "Sun-Thr", "working days 'Sun-Thr': expected a range like 'Mon-Fri'"),
    ("work_end_hour", 25, "25 is not a whole hour 0..24"),
    ("timezone", "Asia/Riyad", "time zone 'Asia/Riyad' is not an IANA name")])
def test_a_malformed_teams_row_fails_a_team_calendar_run_naming_the_row_field_and_key(field, value, problem):
    bad = TEAMS.astype(object).copy()
    bad.loc[1, field] = value   # the second row, team eng
    world = World(REGIONS, teams=bad)
    frame = pd.DataFrame([job(0, 0, 3600, 1, region="us", team="eng")])
    with pytest.raises(ScenarioError) as raised:
        run_scenario(scenario("team"), frame, fleet(), world)
    assert str(raised.value).startswith(f"teams table, row 2 (team 'eng'), field {field}: {problem}")
    assert str(raised.value).endswith('The scenario\'s calendar = "team" reads the teams\' calendars: fix the row, '
                                      'or use calendar = "region"')
    assert len(run_scenario(scenario("region"), frame, fleet(), world).jobs) == 1
