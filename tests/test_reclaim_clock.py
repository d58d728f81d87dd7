"""Reclaim by the clock (engine.sim.cycle.sharing): a quota holder with `reclaim_at_work_start` lends its
idle quota only while it is off work; when its working day starts, borrowers are evicted
(checkpoint-aware, logged "reclaimed-at-work-start") until it has its whole nominal quota back.

One region "r" on Europe/Berlin with German holidays. Teams: "dev" works 9-17 Mon-Fri in Berlin
(holidays: DE); "batch" and "idle" work around the clock (their calendars never matter here).
Kueue quotas by team, lending_fraction 1 (a holder's whole nominal quota is lent when idle), priority
preemption; batch jobs are in the default "batch" queue (checkpoint every 3600 s). A batch job
submitted at 20:10 UTC and reclaimed at 08:00 UTC next morning (09:00 CET) ran 42,600 s: with hourly
checkpoints it keeps 11 h and loses 3,000 s. Summer time: 09:00 CEST is 07:00 UTC.
A quota holder exists only when it has jobs in the run (engine.sim.state.ledger), so `sim` adds a
one-minute, one-GPU job ("probe-<team>") ten minutes before the first job for every team with a
quota entry and no job.
"""
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job

from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.calendar import Calendar
from engine.world.facts import World

H = 3600.0
REGIONS = pd.DataFrame([dict(region="r", timezone="Europe/Berlin", country="DE", jurisdiction="EU")])
TEAMS = pd.DataFrame([
    dict(team="dev", timezone="Europe/Berlin", work_start_hour=9, work_end_hour=17, working_days="Mon-Fri",
         holiday_country="DE", share_weight=1),
    dict(team="batch", timezone="UTC", work_start_hour=0, work_end_hour=0, working_days="Mon-Sun",
         holiday_country="", share_weight=1),
    dict(team="idle", timezone="UTC", work_start_hour=0, work_end_hour=0, working_days="Mon-Sun",
         holiday_country="", share_weight=1)])
WORLD = World(REGIONS, teams=TEAMS)
DEV = Calendar.from_team(TEAMS.iloc[0])


def row(i, at, run, gpus, team="batch", cls="batch"):
    """A job submitted at UTC time `at` (a string), running `run` seconds."""
    r = job(i, 0, run, gpus, workload_class=cls, team=team)
    r["submit_utc"] = pd.Timestamp(at)
    r["start_utc"] = r["submit_utc"]
    r["end_utc"] = r["submit_utc"] + pd.Timedelta(seconds=run)
    return r


def sim(jobs, nodes, quotas, by="team", preemption=None, world=WORLD):
    first = min(j["submit_utc"] for j in jobs) - pd.Timedelta(minutes=10)
    missing = [q["holder"] for q in quotas if by == "team" and not any(j["team"] == q["holder"] for j in jobs)]
    jobs = [row(0, first, 60, 1, team=t, cls="development") | {"job_id": f"probe-{t}"} for t in missing] + jobs
    spec = {"name": "t", "policies": {"quota": {"key": "kueue", "by": by},
                                      "preemption": preemption or {"key": "priority"}}, "quota": quotas}
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), nodes, world)


def quotas(dev=4, batch=4, idle=None, on=True, lead=0):
    out = [{"holder": "dev", "nominal_gpus": dev, "reclaim_at_work_start": on, "reclaim_lead_min": lead},
           {"holder": "batch", "nominal_gpus": batch}]
    return out + ([{"holder": "idle", "nominal_gpus": idle}] if idle else [])


def utc(result, seconds):
    """Run seconds as a UTC timestamp."""
    return result.origin_utc + pd.Timedelta(seconds=float(seconds))


def reclaims(result):
    """[(UTC time, job id)] of the "reclaimed-at-work-start" decisions."""
    d = result.decisions[result.decisions["decision"] == "reclaimed-at-work-start"]
    return [(utc(result, t), j) for t, j in zip(d["time_s"], d["job_id"])]


# A long 8-GPU batch job borrowing dev's 4 GPUs overnight (8 GPUs: dev 4 + batch 4); when is it
# first evicted? Every row's job runs 100 h from 20:10 UTC (so it is reclaimed again on later days).
@pytest.mark.parametrize("submit, lead, on, evicted", [
    # Monday night in winter: Tuesday 09:00 CET = 08:00 UTC
    ("2026-01-12 20:10", 0, True, "2026-01-13 08:00"),
    # 30 minutes' lead: lending stops at 08:30 CET
    ("2026-01-12 20:10", 30, True, "2026-01-13 07:30"),
    # summer time: 09:00 CEST = 07:00 UTC
    ("2026-07-13 20:10", 0, True, "2026-07-14 07:00"),
    # Friday night before the spring-forward Sunday (29 March): no reclaim on Saturday or Sunday;
    # Monday 09:00 is already CEST = 07:00 UTC
    ("2026-03-27 20:10", 0, True, "2026-03-30 07:00"),
    # Friday before the autumn change (25 October): Monday 09:00 CET = 08:00 UTC
    ("2026-10-23 20:10", 0, True, "2026-10-26 08:00"),
    # Thursday night before Labour Day (Friday 1 May, a German holiday), then the weekend: Monday
    ("2026-04-30 20:10", 0, True, "2026-05-04 07:00"),
    # Christmas Eve (Thursday 24 Dec) is a working day in Germany
    ("2026-12-23 20:10", 0, True, "2026-12-24 08:00"),
    # Christmas Eve night: 25 Dec (Friday) is a holiday, then the weekend: Monday 28th
    ("2026-12-24 20:10", 0, True, "2026-12-28 08:00"),
    # option off: the batch job is never evicted (no dev job asks)
    ("2026-01-12 20:10", 0, False, None),
])
def test_reclaimed_exactly_at_the_dev_teams_local_work_start(submit, lead, on, evicted):
    result = sim([row(0, submit, 100 * H, 8)], fleet(8), quotas(on=on, lead=lead))
    expected = [(pd.Timestamp(evicted), "j0")] if evicted else []
    assert reclaims(result)[:1] == expected
    pieces = result.held()
    pieces = pieces[pieces["job_id"] == "j0"]
    assert len(pieces) == (1 + len(reclaims(result)))
    if evicted:
        first = pieces.iloc[0]
        assert utc(result, first["end_s"]) == pd.Timestamp(evicted) and first["outcome"] == "preempted"
        # the evicted job waits for its quota until dev's day ends (17:00 local), then runs again
        assert DEV.at_work_at(pd.Timestamp(evicted) + pd.Timedelta(minutes=lead + 1))
        assert utc(result, pieces.iloc[1]["start_s"]) == pd.Timestamp(
            DEV.work_intervals(pd.Timestamp(evicted).timestamp(), pd.Timestamp(evicted).timestamp() + 86_400)[1][0],
            unit="s")


def test_the_decision_log_tells_the_reclaim_then_the_eviction():
    result = sim([row(0, "2026-01-12 20:10", 100 * H, 8)], fleet(8), quotas())
    log = result.decisions
    t = log.loc[log["decision"] == "reclaimed-at-work-start", "time_s"].iloc[0]
    assert utc(result, t) == pd.Timestamp("2026-01-13 08:00")
    at = log[log["time_s"] == t]["decision"].tolist()
    assert at[:2] == ["reclaimed-at-work-start", "preempted"]
    assert at[2] == "blocked-by-quota"  # batch may hold its own 4 only while dev is at work


@pytest.mark.parametrize("idle, gpus, n_batch, evicted", [
    # dev 4 + batch 4 on 8 GPUs, batch runs four 2-GPU jobs (8): 4 borrowed from dev, two evicted,
    # the most recently started first
    (None, (4, 4), 4, ["j3", "j2"]),
    # an idle team lends 4 more: batch (five 2-GPU jobs, 10 GPUs) borrows 6 of dev's and idle's 8;
    # without dev's 4 the pool is batch's 4 + idle's 4 = 8: only 2 GPUs must go, one job
    (4, (4, 4, 4), 5, ["j4"]),
    # batch within the pool that is left (8 of idle's and its own 8): nothing is evicted
    (4, (4, 4, 4), 4, []),
])
def test_only_the_borrowed_amount_is_reclaimed(idle, gpus, n_batch, evicted):
    jobs = [row(i, f"2026-01-12 20:10:0{i}", 20 * H, 2) for i in range(n_batch)]
    # dev arrives at 09:00:01 CET wanting its whole 4 GPUs: its capacity is free, it starts at once
    jobs.append(row(9, "2026-01-13 08:00:01", H, 4, team="dev", cls="development"))
    result = sim(jobs, fleet(*gpus), quotas(idle=idle))
    assert [j for _, j in reclaims(result)] == evicted
    assert all(t == pd.Timestamp("2026-01-13 08:00") for t, _ in reclaims(result))
    dev = result.jobs.set_index("job_id").loc["j9"]
    assert dev["wait_s"] == 0.0
    assert result.jobs["preemptions"].sum() == len(evicted)


@pytest.mark.parametrize("dev_gpus, batch_gpus, evicted", [
    # dev itself borrows overnight (6 of 8: 2 of batch's lent quota), batch runs 2: at 09:00 no
    # eviction: dev's own jobs are never evicted and batch is within its nominal quota
    ((4, 2), (2,), []),
    # dev runs 2, batch 6 (borrowing 2 of dev's): one batch job goes (the latest), dev's jobs stay
    ((2,), (2, 2, 2), ["b3"]),
])
def test_the_holders_own_jobs_are_never_evicted(dev_gpus, batch_gpus, evicted):
    jobs = [row(i, f"2026-01-12 20:10:0{i}", 20 * H, g, team="dev", cls="training") | {"job_id": f"d{i}"}
            for i, g in enumerate(dev_gpus)]
    jobs += [row(i, f"2026-01-12 20:10:{i + 10}", 20 * H, g) | {"job_id": f"b{i + 1}"} for i, g in enumerate(batch_gpus)]
    result = sim(jobs, fleet(4, 4), quotas())
    assert [j for _, j in reclaims(result)] == evicted
    preempted = result.jobs.set_index("job_id")["preemptions"]
    assert preempted.filter(like="d").sum() == 0
    assert preempted.sum() == len(evicted)


@pytest.mark.parametrize("checkpoint_s, lost_gpu_hours", [
    # 42,600 s of progress (20:10 to 08:00 UTC) on 8 GPUs
    (0.0, 8 * 42_600 / H),               # no checkpoints: all of it
    (1800.0, 8 * (42_600 - 41_400) / H),  # last checkpoint at 23 x 1800 s
    (3600.0, 8 * 3000 / H),               # last at 11 h
    (7200.0, 8 * (42_600 - 36_000) / H),  # last at 10 h
])
def test_lost_gpu_hours_follow_the_checkpoint_interval(checkpoint_s, lost_gpu_hours):
    result = sim([row(0, "2026-01-12 20:10", 14 * H, 8)], fleet(8), quotas(),
                 preemption={"key": "priority", "checkpoint_s": checkpoint_s})
    j0 = result.jobs.set_index("job_id").loc["j0"]
    assert j0["lost_gpu_hours"] == pytest.approx(lost_gpu_hours)
    assert j0["preemptions"] == 1
    # the work lost is redone: the job ends 14 h of work plus what it lost after its first start,
    # plus its wait from 08:00 to 16:00 UTC (dev's day); it is done before the next morning
    lost_s = lost_gpu_hours * H / 8
    assert j0["end_s"] - j0["start_s"] == pytest.approx(14 * H + lost_s + 8 * H)


def test_a_queue_holder_reclaims_on_its_regions_calendar():
    # Holders are queue classes; the express queue (development) reclaims on region r's calendar:
    # Mon-Fri 9-18 Europe/Berlin, German holidays. A training job (standard queue) borrowing it
    # overnight is evicted at 09:00 CET.
    q = [{"holder": "express", "nominal_gpus": 4, "reclaim_at_work_start": True},
         {"holder": "standard", "nominal_gpus": 4}] + [{"holder": n, "nominal_gpus": 0}
                                                       for n in ("reserved", "batch", "preemptible")]
    result = sim([row(0, "2026-01-12 20:10", 20 * H, 8, cls="training")], fleet(8), q, by="queue")
    assert reclaims(result) == [(pd.Timestamp("2026-01-13 08:00"), "j0")]
    # back at 18:00 CET, when the region's working day ends
    assert utc(result, result.held().query("job_id == 'j0'").iloc[1]["start_s"]) == pd.Timestamp("2026-01-13 17:00")


def test_without_preemption_lending_stops_but_nothing_is_evicted():
    # preemption "none": the borrower keeps its GPUs; new borrowing waits for dev's day to end
    jobs = [row(0, "2026-01-12 20:10", 14 * H, 8), row(1, "2026-01-13 08:30", H, 8)]
    result = sim(jobs, fleet(8), quotas(), preemption={"key": "none"})
    assert reclaims(result) == []
    starts = result.jobs.set_index("job_id")["start_s"].map(lambda s: utc(result, s))
    # j0 ends at 10:10 UTC; j1 (8 GPUs, 4 borrowed) waits for 16:00 UTC (17:00 CET)
    assert starts["j1"] == pd.Timestamp("2026-01-13 16:00")


def test_deterministic():
    jobs = [row(i, f"2026-01-12 2{i % 4}:10", (10 + i) * H, 2 + 2 * (i % 2)) for i in range(6)]
    jobs.append(row(9, "2026-01-13 09:00", H, 4, team="dev", cls="development"))
    a = sim(jobs, fleet(4, 4, 4), quotas(idle=4))
    b = sim(jobs, fleet(4, 4, 4), quotas(idle=4))
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    pd.testing.assert_frame_equal(a.decisions, b.decisions)
    assert reclaims(a)


@pytest.mark.parametrize("entry, message", [
    ({"reclaim_at_work_start": "yes"}, "reclaim_at_work_start must be true or false"),
    ({"reclaim_lead_min": -5}, "reclaim_lead_min must be a number >= 0"),
])
def test_bad_quota_entries_are_refused(entry, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_dict({"name": "t", "policies": {"quota": "kueue"}, "quota": [{"holder": "dev", **entry}]})


def test_a_lead_over_a_day_is_refused():
    with pytest.raises(ValueError, match="reclaim_lead_min must be 0-1440"):
        Scenario.from_dict({"name": "t", "policies": {"quota": "kueue"},
                            "quota": [{"holder": "dev", "reclaim_lead_min": 2000}]})


# -- property -------------------------------------------------------------------------------------
# Random dev and batch jobs submitted over two days from Sunday noon on 16 GPUs, dev 8
# and batch 8 nominal, borrowing limits 6 and 8: the region never holds more than its GPUs, no holder
# more than its nominal quota plus its borrowing limit, and inside dev's working windows batch never
# holds more than its own 8 (what dev lent came back at the window's start and is not lent again).
NOMINAL, BORROW = {"dev": 8.0, "batch": 8.0}, {"dev": 6.0, "batch": 8.0}
job_spec = st.tuples(st.integers(0, 2 * 86_400), st.integers(4 * 3600, 30 * 3600), st.sampled_from([1, 2, 4, 8]),
                     st.sampled_from(["dev", "batch", "batch"]))


def levels(pieces, times, team=None):
    """GPUs held at each of `times` (by `team`'s pieces only, when given)."""
    if team is not None:
        pieces = pieces[pieces["team"] == team]
    start, end = pieces["start_s"].to_numpy(), pieces["end_s"].fillna(math.inf).to_numpy()
    times = np.asarray(times, np.float64)[:, None]
    return ((start <= times) & (end > times)).astype(float) @ pieces["gpus_allocated"].to_numpy(np.float64)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.lists(job_spec, min_size=6, max_size=20))
def test_clock_reclaim_never_exceeds_capacity_or_quota(specs):
    start = pd.Timestamp("2026-01-18 12:00")
    jobs = [row(i, start + pd.Timedelta(seconds=s), run, g, team=team,
                cls="development" if team == "dev" else "batch")
            for i, (s, run, g, team) in enumerate(specs)]
    q = [{"holder": "dev", "nominal_gpus": 8, "borrowing_limit_gpus": 6, "reclaim_at_work_start": True},
         {"holder": "batch", "nominal_gpus": 8, "borrowing_limit_gpus": 8}]
    result = sim(jobs, fleet(8, 8), q)
    pieces = result.held()
    origin = result.origin_utc.timestamp()
    edges = np.unique(pieces["start_s"].to_numpy())
    assert (levels(pieces, edges) <= 16.0).all()
    for team in NOMINAL:
        assert (levels(pieces, edges, team) <= NOMINAL[team] + BORROW[team]).all()
    starts, ends = DEV.work_intervals(origin, origin + 30 * 86_400)
    for s, e in zip(starts - origin, ends - origin):
        inside = np.append(edges[(edges >= s) & (edges < e)], s)
        assert (levels(pieces, inside.astype(float), "batch") <= NOMINAL["batch"]).all()
