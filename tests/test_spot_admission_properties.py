"""Property tests (hypothesis) of evictions that do not come from a preemption policy: spot
interruptions (with and without falling back to on-demand, on a fleet with and without on-demand
nodes) together with admission controls that degrade elastic gang jobs, under FCFS with and
without EASY backfilling. On random small workloads:

- the run ends, or stops with an error naming a job that interruptions never let finish (spot
  nodes interrupted every few minutes, work with no checkpoint that fits), and is deterministic
  for a seed;
- no region ever holds more GPUs than it has, no piece starts before its job's submit, and a job's
  pieces never overlap;
- every job ends, or is turned away (never-fits, rejected): none waits forever;
- a job started but "never-fits" fell back where only spot nodes could hold it (all of them, or
  the second 8-GPU node of a gang) and holds nothing after its last eviction; a job that completed without being degraded did its true runtime of
  work (held time less the work lost to evictions).
"""
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import deadline, fleet, job, sweep

from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

TURNED_AWAY = {"never-fits", "rejected-by-admission", "rejected-by-forecast"}
FLEETS = {"mixed": fleet(8, 8, 4, 4).assign(tier=["spot", "on-demand", "spot", "on-demand"]),
          "spot-only": fleet(8, 8, 4, 4).assign(tier="spot")}
CAPACITY = 24.0

# submit, runtime, GPUs of a one-node job, 2-node gang of training (elastic) or inference work
job_spec = st.tuples(st.integers(0, 600), st.integers(1, 900), st.sampled_from([1, 2, 4, 8]),
                     st.sampled_from([None, "training", "inference"]))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(job_spec, min_size=1, max_size=20), st.sampled_from(sorted(FLEETS)), st.sampled_from([0, 1, 2]),
       st.sampled_from([5.0, 30.0]), st.sampled_from(["none", "easy"]), st.booleans(), st.integers(0, 2))
def test_spot_and_degradation_keep_the_run_sound(specs, fleet_name, fallback_after, rate, backfill,
                                                 controls, seed):
    rows = []
    for i, (submit, runtime, gpus, gang) in enumerate(specs):
        cls = gang or "batch"
        rows.append(job(i, submit, runtime, 16 if gang else gpus, nodes=2 if gang else 1, workload_class=cls))
    admission = {"key": "controls", "elastic_classes": "training"} if controls else {"key": "accept-all"}
    scenario = Scenario.from_dict({"name": "p", "seed": seed,
                                   "policies": {"backfill": backfill, "admission": admission},
                                   "spot": {"interruptions_per_node_hour": rate, "fallback_after": fallback_after}})
    nodes = FLEETS[fleet_name]
    with deadline():
        try:
            result = run_scenario(scenario, pd.DataFrame(rows), nodes)
        except ScenarioError as exc:  # a job that interruptions never let finish: the run says so, every time
            assert "the run would not end" in str(exc)
            with pytest.raises(ScenarioError, match="the run would not end"):
                run_scenario(scenario, pd.DataFrame(rows), nodes)
            return
        again = run_scenario(scenario, pd.DataFrame(rows), nodes)
    pd.testing.assert_frame_equal(result.jobs, again.jobs)
    pd.testing.assert_frame_equal(result.segments, again.segments)
    pd.testing.assert_frame_equal(result.decisions, again.decisions)

    jobs, held = result.jobs, result.held()
    assert held["end_s"].notna().all()  # nothing runs at the end
    assert sweep(held["start_s"].to_numpy(float), held["end_s"].to_numpy(float),
                      held["gpus_allocated"].to_numpy(float)) <= CAPACITY + 1e-9
    submit = jobs["submit_s"].to_numpy()[held["row"].to_numpy(np.int64)]
    assert (held["start_s"].to_numpy() >= submit).all()
    for _, pieces in held.groupby("row"):
        pieces = pieces.sort_values("start_s")
        assert (pieces["start_s"].to_numpy()[1:] >= pieces["end_s"].to_numpy()[:-1]).all()

    ended = jobs["end_s"].notna()
    assert (ended | jobs["reason"].isin(TURNED_AWAY)).all()
    never = jobs.index[jobs["started"] & (jobs["reason"] == "never-fits")]
    if len(never):  # fell back, and the on-demand nodes cannot hold it (a gang needs two 8-GPU ones)
        assert fallback_after > 0 and (jobs.loc[never, "spot_interruptions"] >= fallback_after).all()
        assert (fleet_name == "spot-only") | (jobs.loc[never, "gpus"] == 16).all()
        assert (held.loc[held["row"].isin(never), "outcome"] == "preempted").all()
    degraded = set(result.decisions.loc[result.decisions["decision"] == "degraded", "job_id"])
    true_run = {f"j{i}": float(spec[1]) for i, spec in enumerate(specs)}
    for job_id, pieces in held.sort_values("start_s").groupby("job_id"):
        if pieces["outcome"].iloc[-1] == "completed" and job_id not in degraded:
            work = float((pieces["end_s"] - pieces["start_s"]).sum() - pieces["lost_s"].sum())
            assert math.isclose(work, true_run[job_id], abs_tol=1e-6)
