"""Sharing policies on tiny hand-built workloads, through `Scenario.from_dict(...).run`: quotas
(team-limit, kueue), priority preemption, guaranteed queues, admission controls, queue classes
and the validation of the [[queue]], [[quota]] and [[team]] tables. Every expected time is worked
out by hand in the comments (times in seconds; one region "r"; FCFS unless a row says otherwise).

Default queue classes (engine.scenario.queues): reserved (inference with qos "guaranteed", tier
1.0, guaranteed), express (inference, development; 0.8), batch (0.3, checkpoint 3600 s),
preemptible (hpo; 0.1, no checkpoints), standard (the rest, e.g. training; 0.5, checkpoint 3600 s).
"""
import math

import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.analysis.runs.fairness import fairness_kpis
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario


def row(i, submit, run, gpus, cls="training", team="t", qos=None, priority=0, **kw):
    """A jobs-table row (sim_helpers.job) with a workload class, team, recorded qos and priority."""
    return {**job(i, submit, run, gpus, workload_class=cls, team=team, **kw), "qos": qos, "priority": priority}


def sim(jobs, nodes, policies=None, timer_s=0, **tables):
    """Run a scenario of `policies` ({family: key or {key, params...}}) and sharing tables."""
    data = {"name": "t", "policies": policies or {}, "timer_s": timer_s, **tables}
    return run_scenario(Scenario.from_dict(data), pd.DataFrame(jobs), nodes)


def by_id(result, column):
    """{job_id: value} of a jobs-table column (NaN -> None)."""
    values = result.jobs[column].tolist()
    return {j: (None if isinstance(v, float) and math.isnan(v) else v) for j, v in zip(result.jobs["job_id"], values)}


def peak_gpus(result, mask=None) -> float:
    """The most GPUs the pieces selected by `mask` (over result.held()) hold at any instant."""
    held = result.held()
    if mask is not None:
        held = held[mask(held)]
    edges = sorted([(s, g) for s, g in zip(held["start_s"], held["gpus_allocated"])]
                   + [(e, -g) for e, g in zip(held["end_s"], held["gpus_allocated"])], key=lambda x: (x[0], x[1]))
    level = peak = 0.0
    for _, delta in edges:
        level += delta
        peak = max(peak, level)
    return peak


def team(name):
    return lambda held: held["team"] == name


# -- quota "team-limit" ---------------------------------------------------------------------

@pytest.mark.parametrize("quota, gpus, starts", [
    # Holders are the queue classes: three 2-GPU hpo trials (preemptible queue) and a training job
    # (standard). team-limit 4 per queue on 8 GPUs: the third trial waits for the first (100).
    ({"key": "team-limit", "max_gpus": 4, "by": "queue"}, 8, {"j0": 0.0, "j1": 1.0, "j2": 100.0, "j3": 3.0}),
    # kueue by queue, nothing lent: the 5 default queues split 10 GPUs evenly, 2 each: one trial at
    # a time (0-100, 100-200, 200-300); training runs at once in its own queue's quota.
    ({"key": "kueue", "by": "queue", "lending_fraction": 0.0}, 10, {"j0": 0.0, "j1": 100.0, "j2": 200.0, "j3": 3.0}),
])
def test_quotas_by_queue_class(quota, gpus, starts):
    jobs = [row(0, 0, 100, 2, cls="hpo"), row(1, 1, 100, 2, cls="hpo"), row(2, 2, 100, 2, cls="hpo"),
            row(3, 3, 100, 2)]
    result = sim(jobs, fleet(gpus), {"quota": quota})
    assert by_id(result, "start_s") == starts
    assert by_id(result, "queue") == {"j0": "preemptible", "j1": "preemptible", "j2": "preemptible", "j3": "standard"}


# -- quota "kueue" --------------------------------------------------------------------------

A4 = [row(i, i, 100, 2, team="a") for i in range(4)]  # team a: four 2-GPU jobs at 0, 1, 2, 3 s
B_LATE = [row(9, 500, 100, 2, team="b")]  # team b exists (a quota holder) but asks nothing before 500 s

KUEUE_CASES = [
    # id, policy params, sharing tables, jobs, expected starts, expected reasons of the waiting ones,
    # expected nominal quotas (a, b), a's peak GPUs
    pytest.param(
        # weights 3:1 on 8 GPUs: nominal a = 6, b = 2. Nothing lent (lending_fraction 0): a holds at
        # most 6, so a3 waits for a0's end (100); b's 2 GPUs at 4 s are its own: it starts at once.
        {"lending_fraction": 0.0}, {"team": [{"team": "a", "weight": 3}, {"team": "b", "weight": 1}]},
        A4 + [row(9, 4, 100, 2, team="b")],
        {"j0": 0.0, "j1": 1.0, "j2": 2.0, "j3": 100.0, "j9": 4.0}, {"j3": "blocked-by-quota"}, (6.0, 2.0), 6.0,
        id="nominal-by-weights-no-lending"),
    pytest.param(
        # equal weights: nominal 4 each, all of it lent when idle. b is idle until 500, so a borrows
        # b's 4 GPUs and runs all four jobs at once (8 GPUs).
        {}, {}, A4 + B_LATE,
        {"j0": 0.0, "j1": 1.0, "j2": 2.0, "j3": 3.0, "j9": 500.0}, {}, (4.0, 4.0), 8.0,
        id="borrows-idle-quota"),
    pytest.param(
        # a may borrow at most 2 above its nominal 4: it holds 6 at most, a3 waits for a0 (100).
        {}, {"quota": [{"holder": "a", "borrowing_limit_gpus": 2}]}, A4 + B_LATE,
        {"j0": 0.0, "j1": 1.0, "j2": 2.0, "j3": 100.0, "j9": 500.0}, {"j3": "blocked-by-quota"}, (4.0, 4.0), 6.0,
        id="borrowing-limit"),
    pytest.param(
        # b lends only 2 of its 4 (lending limit 2: its guaranteed part is 2). Lendable pool = a's 4
        # + b's 2 = 6, so a holds 6 at most (a3 waits for a0's end at 100), and b's 2-GPU job at
        # 10 s starts at once on its unlent part.
        {}, {"quota": [{"holder": "b", "lending_limit_gpus": 2}]}, A4 + [row(9, 10, 100, 2, team="b")],
        {"j0": 0.0, "j1": 1.0, "j2": 2.0, "j3": 100.0, "j9": 10.0}, {"j3": "blocked-by-quota"}, (4.0, 4.0), 6.0,
        id="lending-limit-keeps-a-guaranteed-part"),
    pytest.param(
        # a and b in different cohorts: a cannot borrow b's idle quota, so it holds its nominal 4:
        # a2 starts when a0 ends (100), a3 when a1 ends (101).
        {}, {"quota": [{"holder": "a", "cohort": "x"}, {"holder": "b", "cohort": "y"}]}, A4 + B_LATE,
        {"j0": 0.0, "j1": 1.0, "j2": 100.0, "j3": 101.0, "j9": 500.0},
        {"j2": "blocked-by-quota", "j3": "blocked-by-quota"}, (4.0, 4.0), 4.0,
        id="cohorts-isolate"),
]


@pytest.mark.parametrize("params, tables, jobs, starts, reasons, nominal, a_peak", KUEUE_CASES)
def test_kueue_quotas(params, tables, jobs, starts, reasons, nominal, a_peak):
    result = sim(jobs, fleet(8), {"quota": {"key": "kueue", **params}}, **tables)
    assert by_id(result, "start_s") == starts
    assert {j: r for j, r in by_id(result, "reason").items() if r != "started"} == reasons
    assert result.teams.set_index("team").loc[["a", "b"], "nominal_gpus"].tolist() == list(nominal)
    assert peak_gpus(result, team("a")) == a_peak


def test_kueue_reclaim_evicts_the_borrowers_most_recent_job():
    # Equal weights on 8 GPUs: nominal 4 each. a borrows b's idle 4 (a0-a3 run from 0-3 s). At 10 s
    # b asks for 2 GPUs within its nominal: the gate answers "reclaim", and the preemption policy
    # (reclaim on, no minimum runtime) evicts a's most recently started job, a3 (started at 3 s):
    # 7 s of work lost (training checkpoints hourly), b starts at 10. a3 is over a's lendable share
    # now (a would hold 8): parked blocked-by-quota until b ends at 60, then runs its full 100 s:
    # 60-160.
    jobs = A4 + [row(9, 10, 50, 2, team="b")]
    result = sim(jobs, fleet(8), {"quota": "kueue",
                                  "preemption": {"key": "priority", "reclaim": True, "min_runtime_s": 0.0}})
    assert by_id(result, "start_s") == {"j0": 0.0, "j1": 1.0, "j2": 2.0, "j3": 3.0, "j9": 10.0}
    assert by_id(result, "end_s") == {"j0": 100.0, "j1": 101.0, "j2": 102.0, "j3": 160.0, "j9": 60.0}
    assert by_id(result, "preemptions") == {"j0": 0, "j1": 0, "j2": 0, "j3": 1, "j9": 0}
    assert by_id(result, "lost_gpu_hours")["j3"] == pytest.approx(2 * 7 / 3600)
    pieces = result.segments[result.segments["job_id"] == "j3"]
    assert pieces[["start_s", "end_s", "outcome", "lost_s"]].values.tolist() == [
        [3.0, 10.0, "preempted", 7.0], [60.0, 160.0, "completed", 0.0]]
    assert "preempted" in set(result.decisions.loc[result.decisions["job_id"] == "j3", "decision"])


def test_kueue_without_preemption_the_owner_waits_for_its_lent_quota():
    # As above with preemption "none": nothing is evicted; b waits until a0 ends at 100 (then the
    # cohort has 2 lendable GPUs free) and runs 100-150.
    jobs = A4 + [row(9, 10, 50, 2, team="b")]
    result = sim(jobs, fleet(8), {"quota": "kueue"})
    assert by_id(result, "start_s")["j9"] == 100.0
    assert result.jobs["preemptions"].sum() == 0


@pytest.mark.parametrize("preemption", [
    "none",  # no reclaim at all
    {"key": "priority", "reclaim": True},  # a's jobs ran < 600 s (min_runtime_s): nothing may be evicted
])
def test_kueue_owner_waiting_for_lent_quota_is_blocked_by_quota(preemption):
    # b waits for a0's end at 100 either way; its reason is its quota (lent, not yet back)
    jobs = A4 + [row(9, 10, 50, 2, team="b")]
    result = sim(jobs, fleet(8), {"quota": "kueue", "preemption": preemption})
    assert by_id(result, "start_s")["j9"] == 100.0
    assert by_id(result, "reason")["j9"] == "blocked-by-quota"
    assert result.decisions[result.decisions["job_id"] == "j9"]["decision"].tolist() == ["blocked-by-quota",
                                                                                         "started"]


# -- preemption "priority" ------------------------------------------------------------------

H = row(0, 0, 1000, 4, cls="hpo")  # a 4-GPU hpo trial (preemptible queue, no checkpoints), 0-1000 s
PREEMPTION_CASES = [
    # id, policy params, timer_s, other jobs, expected {job: (start, end)}, h's pieces
    # [start, end, outcome, lost_s], h's preemptions
    pytest.param(
        # t arrives at 700; h ran 700 >= 600 s: evicted, all 700 s lost; t 700-800, h again 800-1800.
        {}, 0, [row(1, 700, 100, 4)], {"j0": (0.0, 1800.0), "j1": (700.0, 800.0)},
        [[0.0, 700.0, "preempted", 700.0], [800.0, 1800.0, "completed", 0.0]], 1, id="hpo-evicted-for-training"),
    pytest.param(
        # t arrives at 300, h has run only 300 < 600 s; no event before h ends: t waits until 1000.
        {}, 0, [row(1, 300, 100, 4)], {"j0": (0.0, 1000.0), "j1": (1000.0, 1100.0)},
        [[0.0, 1000.0, "completed", 0.0]], 0, id="not-before-min-runtime"),
    pytest.param(
        # the same with a pass every 100 s: at 600 h has run 600 s: evicted (600 s lost), t 600-700,
        # h again 700-1700.
        {}, 100, [row(1, 300, 100, 4)], {"j0": (0.0, 1700.0), "j1": (600.0, 700.0)},
        [[0.0, 600.0, "preempted", 600.0], [700.0, 1700.0, "completed", 0.0]], 1, id="at-min-runtime-with-timer"),
    pytest.param(
        # checkpoints every 300 s: evicted at 700 s, h keeps 600 s and loses 100; 400 s left: 800-1200.
        {"checkpoint_s": 300.0}, 0, [row(1, 700, 100, 4)], {"j0": (0.0, 1200.0), "j1": (700.0, 800.0)},
        [[0.0, 700.0, "preempted", 100.0], [800.0, 1200.0, "completed", 0.0]], 1, id="checkpoint-loss"),
    pytest.param(
        # at most one eviction: t1 evicts h at 700 (h again from 800); t2 at 1500 finds h evicted
        # once already and waits for its end at 1800.
        {"max_preemptions": 1}, 0, [row(1, 700, 100, 4), row(2, 1500, 100, 4)],
        {"j0": (0.0, 1800.0), "j1": (700.0, 800.0), "j2": (1800.0, 1900.0)},
        [[0.0, 700.0, "preempted", 700.0], [800.0, 1800.0, "completed", 0.0]], 1, id="max-preemptions-1"),
    pytest.param(
        # with two allowed, t2 evicts h again at 1500 (ran 700 s since 800, all lost): h 1600-2600.
        {"max_preemptions": 2}, 0, [row(1, 700, 100, 4), row(2, 1500, 100, 4)],
        {"j0": (0.0, 2600.0), "j1": (700.0, 800.0), "j2": (1500.0, 1600.0)},
        [[0.0, 700.0, "preempted", 700.0], [800.0, 1500.0, "preempted", 700.0],
         [1600.0, 2600.0, "completed", 0.0]], 2, id="max-preemptions-2"),
]


@pytest.mark.parametrize("params, timer, others, expected, pieces, preemptions", PREEMPTION_CASES)
def test_priority_preemption(params, timer, others, expected, pieces, preemptions):
    result = sim([H] + others, fleet(4), {"preemption": {"key": "priority", **params}}, timer_s=timer)
    starts, ends = by_id(result, "start_s"), by_id(result, "end_s")
    assert {j: (starts[j], ends[j]) for j in expected} == expected
    h = result.segments[result.segments["job_id"] == "j0"]
    assert h[["start_s", "end_s", "outcome", "lost_s"]].values.tolist() == pieces
    lost = sum(p[3] for p in pieces)
    assert by_id(result, "preemptions")["j0"] == preemptions
    assert by_id(result, "lost_gpu_hours")["j0"] == pytest.approx(4 * lost / 3600)
    assert fairness_kpis(result)["lost_gpu_hours"] == pytest.approx(4 * lost / 3600)
    # the pieces' work adds up to h's 1000 s: held time less the work lost
    assert sum(p[1] - p[0] - p[3] for p in pieces) == pytest.approx(1000.0)


@pytest.mark.parametrize("only_preemptible, b_end, t_start", [
    # a batch job (tier 0.3, not preemptible) 0-1000; training (tier 0.5) arrives at 700.
    (True, 1000.0, 1000.0),  # only preemptible queues may be evicted: t waits for b's end
    (False, 1800.0, 700.0),  # any lower tier: b evicted at 700 (checkpoint 3600: all lost), again 800-1800
])
def test_only_preemptible_off_lets_a_higher_tier_evict_a_lower_one(only_preemptible, b_end, t_start):
    jobs = [row(0, 0, 1000, 4, cls="batch"), row(1, 700, 100, 4)]
    result = sim(jobs, fleet(4), {"preemption": {"key": "priority", "only_preemptible": only_preemptible}})
    assert by_id(result, "end_s")["j0"] == b_end and by_id(result, "start_s")["j1"] == t_start
    assert by_id(result, "lost_gpu_hours")["j0"] == pytest.approx(0.0 if only_preemptible else 4 * 700 / 3600)


def test_priority_preemption_never_evicts_an_equal_or_higher_tier():
    # training cannot evict training (same tier, same priority), even with only_preemptible off
    jobs = [row(0, 0, 1000, 4), row(1, 700, 100, 4)]
    result = sim(jobs, fleet(4), {"preemption": {"key": "priority", "only_preemptible": False}})
    assert by_id(result, "start_s") == {"j0": 0.0, "j1": 1000.0}
    assert result.jobs["preemptions"].sum() == 0


# -- guaranteed queue -----------------------------------------------------------------------

@pytest.mark.parametrize("preemption, g_start, t_end, violations", [
    # training 0-1000 on all 4 GPUs; a guaranteed inference job (1 GPU, 100 s) arrives at 50.
    # "priority": it evicts the training job at once (no minimum runtime for the guarantee; 50 s of
    # work lost), runs 50-150; the training job needs all 4 GPUs again and reruns 150-1150.
    ("priority", 50.0, 1150.0, 0),
    # "none": it waits like any job until 1000: a 950 s wait, over the reserved queue's 60 s SLA.
    ("none", 1000.0, 1000.0, 1),
])
def test_guaranteed_queue_starts_at_submit_only_with_preemption(preemption, g_start, t_end, violations):
    jobs = [row(0, 0, 1000, 4), row(1, 50, 100, 1, cls="inference", qos="guaranteed")]
    result = sim(jobs, fleet(4), {"preemption": preemption})
    assert by_id(result, "queue") == {"j0": "standard", "j1": "reserved"}
    assert by_id(result, "start_s")["j1"] == g_start and by_id(result, "end_s")["j0"] == t_end
    assert fairness_kpis(result)["inference_guarantee_violations"] == violations


# -- admission "controls" -------------------------------------------------------------------

def test_controls_region_queue_limit():
    # one GPU, one waiting job allowed: j0 runs, j1 waits, j2 finds the queue full
    jobs = [row(i, i, 100, 1) for i in range(3)]
    result = sim(jobs, fleet(1), {"admission": {"key": "controls", "max_queued": 1}})
    assert by_id(result, "start_s") == {"j0": 0.0, "j1": 100.0, "j2": None}
    assert by_id(result, "reason")["j2"] == "rejected-by-admission"


def test_controls_queue_class_limit():
    # the dev queue holds one waiting job: d2 (2 s) is refused while d1 waits; training t3 (3 s)
    # joins the other queue, which has no limit. One GPU: t0 0-100, d1 100-200, t3 200-300.
    queues = [{"name": "dev", "classes": ["development"], "max_queued": 1}, {"name": "rest"}]
    jobs = [row(0, 0, 100, 1), row(1, 1, 100, 1, cls="development"), row(2, 2, 100, 1, cls="development"),
            row(3, 3, 100, 1)]
    result = sim(jobs, fleet(1), {"admission": "controls"}, queue=queues)
    assert by_id(result, "start_s") == {"j0": 0.0, "j1": 100.0, "j2": None, "j3": 200.0}
    assert by_id(result, "reason")["j2"] == "rejected-by-admission"
    assert by_id(result, "queue") == {"j0": "rest", "j1": "dev", "j2": "dev", "j3": "rest"}


@pytest.mark.parametrize("horizon_s, j2_start, j2_reason", [
    # 2 GPUs: j0 runs 0-1000, j1 (2 GPUs, asks 1000 s) waits. At 2 s 2 x 1000 GPU-s are queued
    # over 2 GPUs: a 1000 s forecast wait. Over a 100 s horizon j2 is refused; within 1000 s it
    # queues and runs after j1 (2000-2010).
    (100.0, None, "rejected-by-forecast"),
    (1000.0, 2000.0, "blocked-by-capacity"),
])
def test_controls_forecast_rejection(horizon_s, j2_start, j2_reason):
    jobs = [row(0, 0, 1000, 2), row(1, 1, 1000, 2), row(2, 2, 10, 2)]
    result = sim(jobs, fleet(2), {"admission": {"key": "controls", "forecast_max_wait_s": horizon_s}})
    assert by_id(result, "start_s")["j2"] == j2_start and by_id(result, "reason")["j2"] == j2_reason
    assert (result.decisions["decision"] == "rejected-by-forecast").sum() == (j2_start is None)


@pytest.mark.parametrize("elastic, j1", [
    # four 4-GPU nodes; a 2-node training gang holds two of them 0-1000. A 4-node training gang
    # (16 GPUs, 100 s) arrives at 10: elastic, it is admitted on the 2 free nodes ("degraded") and
    # runs twice as long, 10-210 on 8 GPUs. Not elastic: it waits for all four nodes, 1000-1100.
    ("training", (10.0, 210.0, 8.0, True)),
    ("", (1000.0, 1100.0, 16.0, False)),
])
def test_controls_elastic_degradation(elastic, j1):
    jobs = [row(0, 0, 1000, 8, nodes=2), row(1, 10, 100, 16, nodes=4)]
    result = sim(jobs, fleet(4, 4, 4, 4), {"admission": {"key": "controls", "elastic_classes": elastic}})
    got = result.jobs.set_index("job_id").loc["j1"]
    decisions = set(result.decisions.loc[result.decisions["job_id"] == "j1", "decision"])
    assert (got["start_s"], got["end_s"], got["gpus_allocated"], "degraded" in decisions) == j1
    assert by_id(result, "start_s")["j0"] == 0.0 and "degraded" not in set(
        result.decisions.loc[result.decisions["job_id"] == "j0", "decision"])



def test_a_degraded_job_is_backfilled_only_for_its_longer_runtime():
    # four 4-GPU nodes; j0, a 2-node gang, holds two of them 0-1000. j2 (inference, all 4 nodes,
    # 100 s) arrives at 5 and waits for them: EASY reserves 1000, with no extra node. j1, an elastic
    # 4-node training gang asking 600 s, arrives at 10 and is admitted on the 2 free nodes, so it
    # takes 1200 s: 10 + 1200 s ends after the reservation, so it may not backfill (10 + 600 s,
    # its request as asked, would). j2 runs 1000-1100, then j1 1100-2300.
    jobs = [row(0, 0, 1000, 8, nodes=2), row(2, 5, 100, 16, nodes=4, cls="inference"),
            row(1, 10, 600, 16, nodes=4)]
    result = sim(jobs, fleet(4, 4, 4, 4), {"admission": {"key": "controls", "elastic_classes": "training"},
                                           "backfill": "easy"})
    assert by_id(result, "start_s") == {"j0": 0.0, "j2": 1000.0, "j1": 1100.0}
    assert by_id(result, "end_s")["j1"] == 2300.0
    log = result.decisions[result.decisions["job_id"] == "j1"]
    assert list(zip(log["time_s"], log["decision"]))[:2] == [(10.0, "degraded"), (10.0, "blocked-by-reservation")]


# -- queue classes --------------------------------------------------------------------------

def test_queue_class_rules_first_match_wins_and_the_last_takes_the_rest():
    queues = [
        {"name": "prod", "classes": ["inference"], "qos": ["guaranteed"], "guaranteed": True},
        {"name": "small", "max_gpus": 1},
        {"name": "short", "max_requested_s": 600},
        {"name": "huge", "min_gpus": 64},  # last: takes every job no rule above matched
    ]
    jobs = [
        row(0, 0, 10, 2, cls="inference", qos="guaranteed"),  # prod
        row(1, 0, 10, 1, cls="inference", qos="guaranteed"),  # prod (first match, though also small)
        row(2, 0, 10, 1, cls="inference"),  # small (no guaranteed qos)
        row(3, 0, 10, 4, requested=300),  # short
        row(4, 0, 10, 1, requested=300),  # small: first match wins over short
        row(5, 0, 10, 4, requested=9999),  # no rule matches (4 < 64 GPUs): the last queue, huge
    ]
    result = sim(jobs, fleet(8, 8), queue=queues)
    assert by_id(result, "queue") == {"j0": "prod", "j1": "prod", "j2": "small", "j3": "short", "j4": "small",
                                      "j5": "huge"}
    assert result.queue_classes["queue"].tolist() == ["prod", "small", "short", "huge"]


def test_default_queue_classes():
    jobs = [row(0, 0, 10, 1, cls="inference", qos="guaranteed"), row(1, 0, 10, 1, cls="inference"),
            row(2, 0, 10, 1, cls="development"), row(3, 0, 10, 1, cls="batch"), row(4, 0, 10, 1, cls="hpo"),
            row(5, 0, 10, 1, cls="training")]
    assert list(by_id(sim(jobs, fleet(8)), "queue").values()) == [
        "reserved", "express", "express", "batch", "preemptible", "standard"]


# -- validation -----------------------------------------------------------------------------

@pytest.mark.parametrize("tables, message", [
    ({"queue": [{"priority": 0.5}]}, "every \\[\\[queue\\]\\] needs a name"),
    ({"queue": [{"name": "a"}, {"name": "a"}]}, "queue 'a' is listed twice"),
    ({"queue": [{"name": "a", "priority": 1.5}]}, "queue a: priority must be in 0-1, got 1.5"),
    ({"queue": [{"name": "a", "colour": "red"}]}, "unknown \\[\\[queue\\]\\] key colour"),
    ({"queue": [{"name": "a", "classes": "inference"}]}, "queue a: classes must be a list of strings"),
    ({"queue": [{"name": "a", "guaranteed": "yes"}]}, "queue a: guaranteed must be true or false"),
    ({"queue": [{"name": "a", "guaranteed": True, "preemptible": True}]},
     "cannot be both guaranteed and preemptible"),
    ({"queue": [{"name": "a", "max_wait_s": -1}]}, "queue a: max_wait_s must be a number >= 0, got -1"),
    ({"queue": [{"name": "a", "max_queued": 2.5}]}, "queue a: max_queued must be an integer"),
    ({"queue": {"name": "a"}}, "queue must be a list of \\[\\[queue\\]\\] tables"),
    ({"quota": [{"nominal_gpus": 4}]}, "every \\[\\[quota\\]\\] needs a holder"),
    ({"quota": [{"holder": "a", "nominal_gpus": -4}]}, "quota a: nominal_gpus must be a number >= 0, got -4"),
    ({"quota": [{"holder": "a", "borrowing_limit_gpus": "lots"}]}, "quota a: borrowing_limit_gpus must be a number"),
    ({"quota": [{"holder": "a", "weight": 2}]}, "unknown \\[\\[quota\\]\\] key weight"),
    ({"team": [{"weight": 2}]}, "every \\[\\[team\\]\\] needs a team name"),
    ({"team": [{"team": "a", "weight": 0}]}, "team a: weight must be above 0 and at most 1e.09, got 0"),
    ({"team": [{"team": "a", "share": 2}]}, "unknown \\[\\[team\\]\\] key share"),
    ({"team": ["a"]}, "team must be a list of \\[\\[team\\]\\] tables, got \\['a'\\]"),
])
def test_sharing_tables_are_validated_with_clear_messages(tables, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_dict({"name": "t", **tables})


@pytest.mark.parametrize("policies, message", [
    ({"quota": {"key": "kueue", "by": "org"}}, "by must be 'team' or 'queue'"),
    ({"quota": {"key": "team-limit", "max_gpus": 0}}, "max_gpus must be > 0"),
    ({"quota": {"key": "kueue", "lending_fraction": 2.0}}, "lending_fraction must be from 0 to 1 .fraction."),
    ({"preemption": {"key": "priority", "min_runtime_s": -1}}, "min_runtime_s must be from 0 to 315,360,000 .s., got -1"),
    ({"admission": {"key": "controls", "elastic_min_fraction": 0}}, "elastic_min_fraction must be in"),
])
def test_sharing_policy_parameters_are_validated(policies, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_dict({"name": "t", "policies": policies})
