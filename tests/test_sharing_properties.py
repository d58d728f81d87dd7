"""Property tests (hypothesis) of the sharing policies on random small workloads:

(a) under any combination of order, backfill, quota and preemption: no region ever holds more GPUs
    than it has, no piece starts before its job's submit, a job's pieces never overlap, a completed
    job's pieces add up to its true runtime (held time less the work lost to evictions), a team
    never holds more than the team-limit, a kueue holder never more than its nominal quota plus its
    borrowing limit and a cohort never borrows more than it lends, every job ends or is turned away
    (none is left held back by its quota), and the run is deterministic;
(b) with the default reserved queue and priority preemption, guaranteed inference jobs start at
    their submit whatever the other load (the capacity guarantee);
(c) aging bounds the wait of a low-priority job in an adversarial stream of higher-priority work
    that starves it under the "priority" order.

Every property runs a modest, derandomised number of examples (the file runs in well under a minute).
Workloads come from sim_helpers.job: 1 CPU and 1 GiB per job on 64-CPU, 512-GiB nodes, so GPUs are
the only resource that binds.
"""
import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job, sweep

from engine.analysis.runs.fairness import fairness_kpis
from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

TEAMS = ("a", "b", "c")
TURNED_AWAY = {"never-fits", "rejected-by-admission", "rejected-by-forecast", "exceeds-quota"}
ORDERS = ("fcfs", "multifactor", "drf", "wfq", "max-min", "lottery", "fair-tree")
# Region r: two 8-GPU and two 4-GPU nodes (24 GPUs); region s: one 8-GPU and one 4-GPU node (12).
NODES = pd.concat([fleet(8, 8, 4, 4, region="r"), fleet(8, 4, region="s").assign(node=["m0", "m1"])],
                  ignore_index=True)
CAPACITY = {"r": 24.0, "s": 12.0}
# (workload class, qos): hpo, training and batch work, development, inference and guaranteed inference
KINDS = (("hpo", None), ("training", None), ("batch", None), ("development", None), ("inference", None),
         ("inference", "guaranteed"))


def row(i, submit, run, gpus, cls, team, qos=None, priority=0, **kw):
    return {**job(i, submit, run, gpus, workload_class=cls, team=team, **kw), "qos": qos, "priority": priority}


# submit, runtime, kind, GPUs of a one-node job, gang (two whole 8-GPU nodes), team, region,
# requested runtime as a multiple of the true one
job_spec = st.tuples(st.integers(0, 600), st.integers(1, 900), st.sampled_from(KINDS), st.sampled_from([1, 2, 4, 8]),
                     st.booleans(), st.sampled_from(TEAMS), st.sampled_from(["r", "r", "s"]),
                     st.sampled_from([1.0, 1.5, 3.0]))


def workload(specs) -> list[dict]:
    jobs = []
    for i, (submit, runtime, (cls, qos), gpus, gang, team, region, guess) in enumerate(specs):
        gang = gang and cls in ("training", "batch") and qos is None
        jobs.append(row(i, submit, runtime, 16 if gang else gpus, cls, team, qos, nodes=2 if gang else 1,
                        region=region, requested=runtime * guess))
    return jobs


def usage_peaks(held: pd.DataFrame, by: str) -> dict:
    """{(region, holder): the most GPUs it held at once} over the pieces `held`."""
    return {key: sweep(g["start_s"].to_numpy(float), g["end_s"].to_numpy(float), g["gpus_allocated"].to_numpy(float))
            for key, g in held.groupby(["region", by])}


def scenario(order, backfill, quota, preemption, timer_s, seed=0) -> Scenario:
    return Scenario.from_dict({"name": "p", "seed": seed, "timer_s": timer_s,
                               "policies": {"order": order, "backfill": backfill, "quota": quota,
                                            "preemption": preemption}})


QUOTAS = st.one_of(st.just({"key": "none"}),
                   st.builds(lambda g: {"key": "team-limit", "max_gpus": g}, st.sampled_from([4.0, 8.0, 16.0])),
                   st.builds(lambda lend, borrow: {"key": "kueue", "lending_fraction": lend,
                                                   "borrowing_limit_gpus": borrow},
                             st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([-1.0, 0.0, 4.0])))
PREEMPTIONS = st.sampled_from([{"key": "none"}, {"key": "priority"},
                               {"key": "priority", "only_preemptible": False, "min_runtime_s": 0.0,
                                "checkpoint_s": 120.0}])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(job_spec, min_size=1, max_size=24), st.sampled_from(ORDERS), st.sampled_from(["none", "easy"]),
       QUOTAS, PREEMPTIONS, st.sampled_from([0.0, 300.0]), st.integers(0, 2))
def test_allocations_stay_within_capacity_and_quotas(specs, order, backfill, quota, preemption, timer_s, seed):
    jobs = workload(specs)
    run = scenario(order, backfill, quota, preemption, timer_s, seed)
    result = run_scenario(run, pd.DataFrame(jobs), NODES)
    again = run_scenario(run, pd.DataFrame(jobs), NODES)
    pd.testing.assert_frame_equal(result.jobs, again.jobs)
    pd.testing.assert_frame_equal(result.segments, again.segments)
    pd.testing.assert_frame_equal(result.decisions, again.decisions)

    held = result.held().merge(result.jobs[["queue", "submit_s"]], left_on="row", right_index=True)
    assert held["end_s"].notna().all()  # everything that started finished
    # and every job ended or was turned away: none is left waiting (held back by its quota, say) for good
    assert (result.jobs["end_s"].notna() | result.jobs["reason"].isin(TURNED_AWAY)).all()
    # capacity, per region, at every instant
    for region, peak in usage_peaks(held.assign(all="all"), "all").items():
        assert peak <= CAPACITY[region[0]] + 1e-9
    # no piece before its job's submit; a job's pieces never overlap
    assert (held["start_s"] >= held["submit_s"]).all()
    for _, pieces in held.groupby("row"):
        pieces = pieces.sort_values("start_s")
        assert (pieces["start_s"].to_numpy()[1:] >= pieces["end_s"].to_numpy()[:-1]).all()
    # a completed job's work adds up: held time less the work lost = its true runtime
    true_run = {f"j{i}": float(spec[1]) for i, spec in enumerate(specs)}
    for job_id, pieces in held.sort_values("start_s").groupby("job_id"):
        if pieces["outcome"].iloc[-1] == "completed":
            work = float((pieces["end_s"] - pieces["start_s"]).sum() - pieces["lost_s"].sum())
            assert math.isclose(work, true_run[job_id], abs_tol=1e-6)
    assert (held.loc[held["outcome"] == "preempted", "lost_s"] >= 0).all()
    assert int(result.jobs["preemptions"].sum()) == int((held["outcome"] == "preempted").sum())
    if preemption["key"] == "none":
        assert (result.jobs["preemptions"] == 0).all()

    # quotas: with preemption on, jobs of the guaranteed queue are not gated (production capacity)
    gated = held[held["queue"] != "reserved"] if preemption["key"] != "none" else held
    if quota["key"] == "team-limit":
        for peak in usage_peaks(gated, "team").values():
            assert peak <= quota["max_gpus"] + 1e-9
    if quota["key"] == "kueue":
        teams = sorted(set(result.jobs["team"]))
        borrow = math.inf if quota["borrowing_limit_gpus"] < 0 else quota["borrowing_limit_gpus"]
        peaks = usage_peaks(gated, "team")
        for (region, team), peak in peaks.items():
            nominal = CAPACITY[region] / len(teams)  # equal weights: the region split evenly
            assert peak <= nominal + borrow + 1e-9
        # the cohort ("all") never borrows more than its members lend, at any instant
        lend = quota["lending_fraction"]
        for region, pieces in gated.groupby("region"):
            nominal = CAPACITY[region] / len(teams)
            assert _cohort_borrowing_peak(pieces, nominal * (1 - lend)) <= nominal * lend * len(teams) + 1e-9


def _cohort_borrowing_peak(pieces: pd.DataFrame, guaranteed: float) -> float:
    """The most, over time, of sum over teams of max(0, held - guaranteed) (the part of the teams'
    holdings taken from lent quota)."""
    times = np.unique(np.concatenate([pieces["start_s"], pieces["end_s"]]))
    peak = 0.0
    for t in times:
        alive = pieces[(pieces["start_s"] <= t) & (pieces["end_s"] > t)]
        per_team = alive.groupby("team")["gpus_allocated"].sum().to_numpy(float)
        peak = max(peak, float(np.maximum(per_team - guaranteed, 0.0).sum()))
    return peak


def test_team_limit_counts_the_whole_nodes_a_gang_job_holds():
    # Team a may hold 8 GPUs. A 2-node gang asking 2 x 4 GPUs takes two whole 8-GPU nodes (gang
    # jobs hold whole nodes): 16 GPUs. Checking its request (8 GPUs) lets it start and the team
    # then holds twice its limit; the gate should count what the job will hold.
    jobs = [row(0, 0, 100, 8, "training", "a", nodes=2)]
    result = run_scenario(scenario("fcfs", "none", {"key": "team-limit", "max_gpus": 8.0}, {"key": "none"}, 0.0), 
        pd.DataFrame(jobs), fleet(8, 8, 8))
    held = result.jobs.loc[result.jobs["started"], "gpus_allocated"].sum()
    assert held <= 8.0, f"team a holds {held} GPUs under an 8-GPU team limit"


# (b) the capacity guarantee ------------------------------------------------------------------

other_spec = st.tuples(st.integers(0, 400), st.integers(1, 900), st.sampled_from(KINDS[:5]),
                       st.sampled_from([1, 2, 4, 8]), st.booleans(), st.sampled_from(TEAMS))
guaranteed_spec = st.tuples(st.integers(0, 600), st.integers(1, 600), st.sampled_from(TEAMS))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(other_spec, min_size=0, max_size=24), st.lists(guaranteed_spec, min_size=1, max_size=24),
       st.sampled_from(ORDERS), st.sampled_from(["none", "easy"]),
       st.sampled_from([{"key": "none"}, {"key": "team-limit", "max_gpus": 4.0}, {"key": "kueue"}]))
def test_guaranteed_inference_starts_at_submit_whatever_the_load(others, guaranteed, order, backfill, quota):
    # At most 24 one-GPU guaranteed jobs on 24 GPUs: their demand never exceeds capacity, so each
    # can always clear a GPU by evicting non-guaranteed work.
    jobs = [row(i, s, r, 16 if gang and cls in ("training", "batch") else g, cls, team,
                nodes=2 if gang and cls in ("training", "batch") else 1)
            for i, (s, r, (cls, _), g, gang, team) in enumerate(others)]
    jobs += [row(100 + i, s, r, 1, "inference", team, "guaranteed") for i, (s, r, team) in enumerate(guaranteed)]
    result = run_scenario(scenario(order, backfill, quota, {"key": "priority"}, 0.0), pd.DataFrame(jobs), fleet(8, 8, 4, 4))
    mine = result.jobs[result.jobs["queue"] == "reserved"]
    assert len(mine) == len(guaranteed)
    assert (mine["wait_s"] == 0).all(), mine.loc[mine["wait_s"] != 0, ["job_id", "submit_s", "start_s"]]
    assert (mine["preemptions"] == 0).all()
    assert fairness_kpis(result)["inference_guarantee_violations"] == 0


# (c) aging against an adversarial stream ----------------------------------------------------

def stream(gaps, runtimes) -> tuple[list[dict], float]:
    """One GPU. j0: a blocker (development, priority 10) at 0 for runtimes[0] s; L (batch,
    priority 0, 100 s) at 1 s; then development jobs of priority 10 arriving gaps[k] s apart,
    each gap >= 1 and <= the runtime of the job before it, so a higher-priority job always waits
    when the GPU frees. Returns the jobs and the end of the stream (the sum of its runtimes)."""
    jobs = [row(0, 0, runtimes[0], 1, "development", "t", priority=10), row(1, 1, 100, 1, "batch", "t")]
    submit = 0
    for k, (gap, runtime) in enumerate(zip(gaps, runtimes[1:])):
        submit = max(submit + min(gap, runtimes[k]), 1)
        jobs.append(row(k + 2, submit, runtime, 1, "development", "t", priority=10))
    return jobs, float(sum(runtimes))


# Multifactor priorities are recomputed at most this often (Slurm's PriorityCalcPeriod; 0: every pass).
RECALC_S = float(getattr(registry.make("order", "multifactor"), "recalc_s", 0.0))


def low_priority_start(jobs, order) -> float:
    result = run_scenario(Scenario.from_dict({"name": "aging", "policies": {"order": order}}), pd.DataFrame(jobs), fleet(1))
    return float(result.jobs.set_index("job_id").loc["j1", "start_s"])


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(1, 300), st.integers(1, 300)), min_size=20, max_size=60),
       st.sampled_from([600.0, 1800.0, 3600.0]))
def test_boost_bounds_the_wait_of_a_low_priority_job(stream_spec, boost_after_s):
    gaps = [g for g, _ in stream_spec]
    runtimes = [r for _, r in stream_spec] + [stream_spec[-1][1]]
    jobs, stream_end = stream(gaps, runtimes)
    # Under "priority" (the recorded field) L waits for the whole stream: a higher-priority job is
    # always waiting when the GPU frees.
    assert low_priority_start(jobs, "priority") == stream_end
    # Multifactor: express (tier 0.8) above batch (0.3), no aging, boost after B s. From 1 + B on, L
    # is boosted and, having waited longest (it was submitted before every waiting stream job),
    # sorts first once its priority is recomputed. While the GPU is busy the queue is ordered only
    # at passes where a job ended (at most max(runtime) apart), and priorities are recomputed at the
    # first such pass at least RECALC_S after the last recomputation: the first at or after 1 + B
    # comes by 1 + B + RECALC_S + max(runtime), and L starts there (the GPU just freed).
    # Bound: start <= 1 + B + RECALC_S + max(runtime), or the stream's end if that comes first.
    multifactor = {"key": "multifactor", "weight_age": 0.0, "weight_fairshare": 0.0, "weight_size": 0.0,
                   "weight_deadline": 0.0, "weight_qos": 2000.0, "boost_after_s": boost_after_s}
    start = low_priority_start(jobs, multifactor)
    bound = 1 + boost_after_s + RECALC_S + max(runtimes)
    assert start <= min(bound, stream_end)
    if stream_end > bound:
        assert start < stream_end  # the boost, not the stream's end, let it run


def test_aging_bounds_the_wait_of_a_low_priority_job():
    # A steady stream: a development job every 100 s, each running 100 s, 0-10,100 s (102 jobs
    # including the blocker): each starts as it arrives, so stream jobs never age. Multifactor with
    # weight_qos 2000, weight_age 2000, max_age 1000 s: L (batch, 0.3) outranks a fresh express job
    # (0.8) once 2000 x wait / 1000 >= 2000 x (0.8 - 0.3), i.e. after 500 s of waiting (at 501 s);
    # priorities are recomputed at the first pass (one every 100 s, at each end) at least RECALC_S
    # after the last, so by 501 + RECALC_S + 100 s, and L starts at that pass. Without aging, or
    # under "priority", it waits for the stream's end at 10,100 s.
    jobs, stream_end = stream([100] * 100, [100] * 101)
    assert stream_end == 10_100.0
    weights = {"key": "multifactor", "weight_fairshare": 0.0, "weight_size": 0.0, "weight_deadline": 0.0,
               "weight_qos": 2000.0, "max_age_s": 1000.0}
    start = low_priority_start(jobs, {**weights, "weight_age": 2000.0})
    assert 501.0 <= start <= 501.0 + RECALC_S + 100.0
    assert low_priority_start(jobs, {**weights, "weight_age": 0.0}) == stream_end
    assert low_priority_start(jobs, "priority") == stream_end
