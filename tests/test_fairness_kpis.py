"""Fairness and service-level KPIs (engine.analysis.runs.fairness) and the segment-aware busy GPU-hours
(engine.analysis.runs.sim_metrics) on a hand-built run with three teams, a guaranteed queue, deadlines
and a job preempted once, every figure worked out by hand."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from engine.analysis.runs.fairness import (
    QUEUE_COLUMNS,
    SHARE_COLUMNS,
    TEAM_COLUMNS,
    fairness_kpis,
    jain_index,
    queue_sla_table,
    share_over_time,
    starvation_by_team,
    team_table,
    water_fill,
    water_fill_rows,
)
from engine.analysis.runs.sim_metrics import by_group, kpis
from engine.sim.output.result import SimulationResult

NAN, INF = np.nan, np.inf
W = 100.0

# job_id, team, queue, submit_s, start_s, end_s, gpus, extra columns. The window is [0, 100] s.
JOBS = [
    ("a1", "a", "batch", 0, 0, 60, 4, dict(deadline_s=70.0)),               # deadline hit
    ("a2", "a", "batch", 10, 40, 100, 2, dict(deadline_s=90.0)),            # waits 30 > 20: SLA miss; late
    ("a3", "a", "best", 0, 65, 75, 2, dict(deadline_s=80.0, failed=True)),  # waits 65 > 60: starved; failed
    ("b1", "b", "prod", 0, 2, 50, 2, {}),                                   # waits 2 <= 5
    ("b2", "b", "prod", 20, 30, 40, 1, {}),                                 # waits 10 > 5: guarantee violated
    ("b3", "b", "batch", 90, NAN, NAN, 4, {}),                              # waiting 10 s at the end: undecided
    ("b5", "b", "prod", 80, NAN, NAN, 1, {}),                               # waiting 20 > 5 at the end: violated
    ("c1", "c", "best", 0, 0, 80, 4, dict(deadline_s=80.0, preemptions=1, lost_gpu_hours=40 / 3600)),
    ("c2", "c", "batch", 50, NAN, NAN, 1, {}),                              # waiting 50 > 20 (miss), > 40 (starved)
]
# c1 ran 0-30 on n1, was preempted losing its last 10 s, waited 30-50 requeued and ran 50-80 on n2.
C1_PIECES = [dict(job_id="c1", region="r", nodes="n1", start_s=0.0, end_s=30.0, gpus_allocated=4.0,
                  outcome="preempted", lost_s=10.0),
             dict(job_id="c1", region="r", nodes="n2", start_s=50.0, end_s=80.0, gpus_allocated=4.0,
                  outcome="completed", lost_s=0.0)]
TEAMS = pd.DataFrame({"team": ["a", "b", "c"], "weight": [2.0, 1.0, 1.0], "entitlement": [0.5, 0.25, 0.25],
                      "nominal_gpus": [8.0, NAN, 4.0]})
QUEUES = pd.DataFrame({"queue": ["prod", "batch", "best"], "priority": [1.0, 0.3, 0.1],
                       "max_wait_s": [5.0, 20.0, INF], "starve_after_s": [50.0, 40.0, 60.0],
                       "guaranteed": [True, False, False], "preemptible": [False, False, True],
                       "checkpoint_s": [0.0, 0.0, 10.0]})


def _jobs(rows) -> pd.DataFrame:
    frame = pd.DataFrame([dict(job_id=j, team=t, queue=q, submit_s=float(s), start_s=float(a), end_s=float(e),
                               gpus=float(g), **{"region": "r", "home_region": "r", "workload_class": "training",
                                                 "failed": False, "reason": "started", "latency_ms": 0.0,
                                                 "deadline_s": INF, "preemptions": 0, "lost_gpu_hours": 0.0, **x})
                          for j, t, q, s, a, e, g, x in rows])
    started = frame["start_s"].notna()
    return frame.assign(started=started, wait_s=frame["start_s"] - frame["submit_s"],
                        run_s=frame["end_s"] - frame["start_s"], gpus_allocated=frame["gpus"].where(started, 0.0),
                        nodes=np.where(started, "n0", ""))


def _one_piece_each(jobs: pd.DataFrame) -> pd.DataFrame:
    ran = jobs[jobs["started"]]
    return pd.DataFrame({"job_id": ran["job_id"], "region": ran["region"], "nodes": ran["nodes"],
                         "start_s": ran["start_s"], "end_s": ran["end_s"], "gpus_allocated": ran["gpus_allocated"],
                         "outcome": np.where(ran["failed"], "failed", "completed"), "lost_s": 0.0})


def _result(jobs: pd.DataFrame, segments: pd.DataFrame | None, teams=TEAMS, queues=QUEUES) -> SimulationResult:
    if segments is not None:  # each piece's job row, by its (here unique) job id
        segments = segments.assign(row=pd.Index(jobs["job_id"]).get_indexer(segments["job_id"]))
    return SimulationResult("hand", jobs, pd.DataFrame(columns=["time_s", "region", "busy_gpus", "queue_length"]),
                            pd.DataFrame(columns=["time_s", "job_id", "region", "decision"]), {"r": 10.0},
                            pd.Timestamp("2026-01-05"), window_s=W, segments=segments, teams=teams,
                            queue_classes=queues)


def preempted_run() -> SimulationResult:
    jobs = _jobs(JOBS)
    one = _one_piece_each(jobs)
    segments = pd.concat([one[one["job_id"] != "c1"], pd.DataFrame(C1_PIECES)], ignore_index=True)
    return _result(jobs, segments)


# GPU-seconds held in the window: a 4x60 + 2x60 + 2x10 = 380; b 2x48 + 1x10 = 106; c 4x30 + 4x30 = 240.
HELD = {"a": 380.0, "b": 106.0, "c": 240.0}


def reference(run: SimulationResult) -> tuple[dict, dict, dict]:
    """Demand, fair share and sampled holding per team, straight from the module docstring: one
    plain loop over the sample midpoints, jobs and pieces (the region r holds 10 GPUs)."""
    horizon = run.window_s
    k = max(240, int(np.ceil(horizon / 600)))
    step = horizon / k
    names = sorted(run.teams["team"]) if run.teams is not None else sorted(set(run.jobs["team"]))
    weight = dict(zip(run.teams["team"], run.teams["weight"])) if run.teams is not None else {}
    demand, fair, held = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0)
    pieces = run.held()
    for i in range(k):
        m = (i + 0.5) * step
        want = dict.fromkeys(names, 0.0)
        for job in run.jobs.itertuples():
            end = job.end_s if job.end_s == job.end_s else np.inf
            if job.submit_s <= m < end:
                want[job.team] += job.gpus_allocated if job.started else job.gpus
        for piece in pieces.itertuples():
            end = piece.end_s if piece.end_s == piece.end_s else np.inf
            if piece.start_s <= m < end:
                held[piece.team] += piece.gpus_allocated * step
        share = water_fill(10.0, np.array([want[t] for t in names]), np.array([weight.get(t, 1.0) for t in names]))
        for t, f in zip(names, share):
            demand[t] += want[t] * step
            fair[t] += f * step
    return demand, fair, held


def reference_jain(run: SimulationResult) -> float:
    _, fair, held = reference(run)
    x = np.array([held[t] / fair[t] for t in fair if fair[t] > 0])
    return x.sum() ** 2 / (len(x) * (x * x).sum())


def test_fairness_kpis_by_hand():
    run = preempted_run()
    assert fairness_kpis(run) == {
        "jain_index": pytest.approx(reference_jain(run), rel=1e-9),
        "deadline_hit_rate": 0.5,                  # a1 and c1 (at its deadline) of a1, a2, a3, c1
        "inference_guarantee_violations": 2,       # b2 waited 10 s, b5 20 s by the end; the limit is 5 s
        "max_wait_sla_attainment": pytest.approx(2 / 6),   # hits a1, b1; misses a2, b2, b5, c2; b3 undecided
        "max_wait_sla_misses": 4,
        "preemptions": 1, "lost_gpu_hours": pytest.approx(40 / 3600), "starved_jobs": 2}   # a3 and c2


def test_team_table_by_hand():
    run = preempted_run()
    table = team_table(run)
    demand, fair, _ = reference(run)
    assert list(table.columns) == TEAM_COLUMNS
    expected = {
        "team": ["a", "b", "c"], "weight": [2.0, 1.0, 1.0], "entitlement": [0.5, 0.25, 0.25],
        "gpu_hours": [pytest.approx(HELD[t] / 3600) for t in "abc"],
        "demand_gpu_hours": [pytest.approx(demand[t] / 3600, rel=1e-9) for t in "abc"],
        "fair_gpu_hours": [pytest.approx(fair[t] / 3600, rel=1e-9) for t in "abc"],
        "share": [pytest.approx(HELD[t] / 726) for t in "abc"],
        "jobs": [3, 4, 2],
        # started waits: a 0, 30, 65; b 2, 10; c 0 (p95 interpolates linearly)
        "wait_mean_s": [pytest.approx(95 / 3), 6.0, 0.0], "wait_p95_s": [pytest.approx(61.5), pytest.approx(9.6), 0.0],
        "preemptions": [0, 0, 1], "lost_gpu_hours": [0.0, 0.0, pytest.approx(40 / 3600)],
        "starved_jobs": [1, 0, 1], "deadline_hit_rate": [pytest.approx(1 / 3), 1.0, 1.0]}
    assert table.drop(columns="nominal_gpus").to_dict("list") == expected
    assert table["nominal_gpus"].tolist()[::2] == [8.0, 4.0] and np.isnan(table["nominal_gpus"][1])


def test_queue_sla_table_by_hand():
    table = queue_sla_table(preempted_run())
    assert list(table.columns) == QUEUE_COLUMNS
    assert table.to_dict("list") == {
        "queue": ["prod", "batch", "best"], "jobs": [3, 4, 2], "max_wait_s": [5.0, 20.0, INF],
        # prod: b1 hit, b2 and b5 missed; batch: a1 hit, a2 and c2 missed, b3 undecided; best: no SLA
        "attainment": [pytest.approx(1 / 3), pytest.approx(1 / 3), 1.0],
        "wait_p95_s": [pytest.approx(9.6), pytest.approx(28.5), pytest.approx(61.75)], "preemptions": [0, 0, 1]}


def test_starvation_by_team_by_hand():
    # longest waits: a3 65 s; b5 still waiting 20 s at the end; c2 still waiting 50 s
    assert starvation_by_team(preempted_run()).to_dict("list") == {
        "team": ["a", "b", "c"], "starved_jobs": [1, 0, 1], "longest_wait_s": [65.0, 20.0, 50.0]}


def test_share_over_time_by_hand():
    table = share_over_time(preempted_run(), step_s=50.0)
    assert list(table.columns) == SHARE_COLUMNS
    # 0-50 s: a 4x50 + 2x10 = 220 GPU-s, b 2x48 + 1x10 = 106, c 4x30 = 120 (requeued 30-50: nothing);
    # 50-100 s: a 4x10 + 2x50 + 2x10 = 160, b 0, c 4x30 = 120.
    gpus = {("a", 0.0): 4.4, ("b", 0.0): 2.12, ("c", 0.0): 2.4, ("a", 50.0): 3.2, ("b", 50.0): 0.0, ("c", 50.0): 2.4}
    rows = table.set_index(["team", "time_s"])
    assert rows["gpus"].to_dict() == pytest.approx(gpus)
    totals = {0.0: 8.92, 50.0: 5.6}
    assert rows["share"].to_dict() == pytest.approx({key: value / totals[key[1]] for key, value in gpus.items()})
    assert rows["entitlement"].to_dict() == {key: {"a": 0.5, "b": 0.25, "c": 0.25}[key[0]] for key in gpus}


def test_busy_gpu_hours_exclude_the_requeued_gap():
    run = preempted_run()
    k = kpis(run)
    # 726 GPU-s held of 10 GPUs x 100 s; c1's jobs row (0-80 s) would count its requeued 30-50 s too
    assert k["utilization"] == pytest.approx(0.726, rel=1e-12)
    assert k["idle_gpu_hours"] == pytest.approx(274 / 3600, rel=1e-12)
    assert kpis(dataclasses.replace(run, segments=None))["utilization"] == pytest.approx(0.806, rel=1e-12)
    # served: completed a1 240, a2 120, b1 96, b2 10, c1 240 less the 4 GPUs x 10 s it lost; a3 failed
    assert k["served_gpu_hours"] == pytest.approx(666 / 3600, rel=1e-12)
    assert by_group(run, "team")["gpu_hours"].tolist() == pytest.approx([HELD[t] / 3600 for t in "abc"])
    assert {key: k[key] for key in fairness_kpis(run)} == fairness_kpis(run)


def test_lost_work_outside_the_window_is_not_subtracted():
    # the window ends at 25 s, inside c1's first piece: it holds 4 x 25 and lost its work of 20-30 s,
    # of which 20-25 s lies inside, so it served 4 x 20; a1 holds 4 x 25, b1 2 x 23; nothing else ran
    run = dataclasses.replace(preempted_run(), window_s=25.0)
    assert kpis(run)["served_gpu_hours"] == pytest.approx((100 + 46 + 4 * 20) / 3600, rel=1e-12)


def test_without_segments_the_kpis_equal_one_piece_segments():
    jobs = _jobs([row if row[0] != "c1" else ("c1", "c", "best", 0, 0, 30, 4, {}) for row in JOBS])
    pieces, plain = _result(jobs, _one_piece_each(jobs)), _result(jobs, None)
    assert kpis(plain) == kpis(pieces)
    for table in (team_table, queue_sla_table, starvation_by_team, share_over_time, by_group):
        pd.testing.assert_frame_equal(table(plain), table(pieces))


def test_results_without_the_new_tables_and_columns():
    # an older result: no queue, deadline or preemption columns, no teams or queue classes
    jobs = _jobs(JOBS).drop(columns=["queue", "deadline_s", "preemptions", "lost_gpu_hours"])
    run = _result(jobs, None, teams=None, queues=None)
    k = fairness_kpis(run)
    assert {key: k[key] for key in k if key != "jain_index"} == {
        "deadline_hit_rate": 1.0, "inference_guarantee_violations": 0, "max_wait_sla_attainment": 1.0,
        "max_wait_sla_misses": 0, "preemptions": 0, "lost_gpu_hours": 0.0, "starved_jobs": 0}
    table = team_table(run)
    assert table["weight"].tolist() == [1.0, 1.0, 1.0] and table["entitlement"].tolist() == [1 / 3] * 3
    assert table["nominal_gpus"].isna().all()
    assert queue_sla_table(run).empty and list(queue_sla_table(run).columns) == QUEUE_COLUMNS
    assert k["jain_index"] == pytest.approx(reference_jain(run), rel=1e-9)


@pytest.mark.parametrize("total, demand, weight, fair", [
    (10.0, [2.0, 8.0, 8.0], [1.0, 1.0, 1.0], [2.0, 4.0, 4.0]),      # the small one is capped
    (12.0, [10.0, 10.0], [2.0, 1.0], [8.0, 4.0]),                   # by weight
    (12.0, [3.0, 10.0], [2.0, 1.0], [3.0, 9.0]),                    # the heavy one wants less
    (5.0, [1.0, 2.0], [1.0, 1.0], [1.0, 2.0]),                      # more than all demand: each its demand
    (0.0, [1.0, 2.0], [1.0, 3.0], [0.0, 0.0]),
])
def test_water_fill(total, demand, weight, fair):
    assert water_fill(total, np.array(demand), np.array(weight)).tolist() == pytest.approx(fair)


def test_water_fill_rows_fills_each_distinct_row_once_in_any_order():
    rng = np.random.default_rng(7)
    demand = rng.integers(0, 4, (500, 3)).astype(float) * 2.0  # few distinct rows, recurring far apart
    weight = np.array([1.0, 2.0, 1.0])
    fill = water_fill_rows(5.0, demand, weight)
    order = rng.permutation(len(demand))
    assert np.array_equal(water_fill_rows(5.0, demand[order], weight), fill[order])
    for row, got in zip(demand, fill):
        assert got.tolist() == pytest.approx(water_fill(5.0, row, weight).tolist())


@pytest.mark.parametrize("x, index", [
    ([1.0, 1.0, 1.0], 1.0), ([1.0, 0.0], 0.5), ([2.0, 0.0, 0.0, 0.0], 0.25), ([3.0], 1.0), ([], 1.0),
    ([0.0, 0.0], 1.0), ([1.0, 2.0], 0.9),
])
def test_jain_index(x, index):
    assert jain_index(np.array(x)) == pytest.approx(index)


def test_share_over_time_needs_a_positive_step():
    with pytest.raises(ValueError, match="step_s"):
        share_over_time(preempted_run(), step_s=0.0)


def test_a_team_kept_waiting_while_another_holds_everything_halves_jain():
    # a holds all 10 GPUs for the whole window while b's 5-GPU job waits: fair shares are 5 and 5,
    # x = (10 / 5, 0 / 5), so Jain = 2^2 / (2 x 4) = 0.5; b then served alongside a gives 1.0
    hog = _jobs([("a1", "a", "batch", 0, 0, 100, 10, {}), ("b1", "b", "batch", 0, NAN, NAN, 5, {})])
    teams = pd.DataFrame({"team": ["a", "b"], "weight": [1.0, 1.0], "entitlement": [0.5, 0.5],
                          "nominal_gpus": [NAN, NAN]})
    assert fairness_kpis(_result(hog, None, teams=teams))["jain_index"] == pytest.approx(0.5)
    shared = _jobs([("a1", "a", "batch", 0, 0, 100, 5, {}), ("b1", "b", "batch", 0, 0, 100, 5, {})])
    assert fairness_kpis(_result(shared, None, teams=teams))["jain_index"] == pytest.approx(1.0)


def test_figures_are_remembered_per_result_and_per_thread():
    """A run's per-job frame and team table are computed once per result: asking about another
    result, then the first again, or from another thread, gives each its own figures."""
    import threading

    first = preempted_run()
    jobs = _jobs([row if row[0] != "c1" else ("c1", "c", "best", 0, 0, 30, 4, {}) for row in JOBS])
    second = _result(jobs, _one_piece_each(jobs))
    one, two = team_table(first), team_table(second)
    assert not one.equals(two)
    pd.testing.assert_frame_equal(team_table(first), one)
    assert fairness_kpis(first) == fairness_kpis(preempted_run())
    seen = {}
    threads = [threading.Thread(target=lambda r=r, k=k: seen.__setitem__(k, team_table(r)))
               for k, r in (("first", first), ("second", second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pd.testing.assert_frame_equal(seen["first"], one)
    pd.testing.assert_frame_equal(seen["second"], two)


def test_the_pieces_held_are_computed_once_per_result_and_each_caller_gets_its_own_frame():
    from engine.analysis.runs.held import holding

    run = preempted_run()
    first = holding(run, 100.0)
    first["extra"] = 1.0
    first.loc[0, "gpu_s"] = -1.0
    again = holding(run, 100.0)
    assert "extra" not in again and again.loc[0, "gpu_s"] != -1.0
    pd.testing.assert_frame_equal(again, holding(preempted_run(), 100.0))
