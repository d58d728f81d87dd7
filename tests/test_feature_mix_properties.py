"""Property test (hypothesis) of every feature of a scenario at once, on random two-region workloads:
an order, a backfilling policy, a quota (with reclaim by the clock), a preemption policy, a router,
a timing policy, admission controls with elastic degradation, a region outage, a cloud burst
pool, spot interruptions on a fleet of reserved, on-demand and spot nodes, and a timer. The other
property files each take a family of features; bugs hide where features meet (an evicted job that
only a burst node could hold, a job larger than its quota parked ahead of its team's).

- the run ends (or stops with the error naming a job that spot interruptions never let finish)
  and is deterministic;
- every job ends or is turned away: none waits for good, and nothing runs at the end;
- no region ever holds more GPUs than it has installed plus the burst nodes it may rent;
- no piece starts before its job's submit, and a job's pieces never overlap.

A modest, derandomised number of examples runs in the suite; run it wide as the README says.
"""
import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import deadline, fleet, job, outage_table, sweep

from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

TURNED_AWAY = {"never-fits", "rejected-by-admission", "rejected-by-forecast", "exceeds-quota"}
NODES = pd.concat([fleet(8, 8, 4, region="r").assign(tier=["on-demand", "spot", "reserved"]),
                   fleet(8, 4, region="s").assign(node=["m0", "m1"], tier=["spot", "on-demand"])], ignore_index=True)
CAPACITY = {"r": 20.0, "s": 12.0}
BURST = {"region": "r", "gpu_type": "A", "max_nodes": 2, "gpus_per_node": 8, "provision_min": 2,
         "trigger_wait_min": 1, "idle_release_min": 2, "usd_per_gpu_hour": 3.0}
# (workload class, qos): hpo, training and batch work, development, inference and guaranteed inference
KINDS = (("hpo", None), ("training", None), ("batch", None), ("development", None), ("inference", None),
         ("inference", "guaranteed"))
# submit, runtime, kind, GPUs of a one-node job, gang (two whole 8-GPU nodes), team, home region
job_spec = st.tuples(st.integers(0, 4000), st.integers(1, 2000), st.sampled_from(KINDS), st.sampled_from([1, 2, 4, 8]),
                     st.booleans(), st.sampled_from(["a", "b", "c"]), st.sampled_from(["r", "r", "s"]))
QUOTAS = st.sampled_from([{"key": "none"}, {"key": "team-limit", "max_gpus": 8.0},
                          {"key": "kueue", "lending_fraction": 0.5, "borrowing_limit_gpus": 4.0}, {"key": "kueue"}])
PREEMPTIONS = st.sampled_from([{"key": "none"}, {"key": "priority", "reclaim": True, "min_runtime_s": 0.0},
                               {"key": "priority", "only_preemptible": False, "checkpoint_s": 300.0}])
OUTAGE = st.one_of(st.none(), st.tuples(st.sampled_from(["r", "s"]), st.integers(0, 3000), st.integers(60, 3600)))


def scenario(order, backfill, quota, preemption, routing, timing, placement, controls, outage, burst, spot_rate,
             timer_s, reclaim_clock) -> Scenario:
    admission = {"key": "controls", "elastic_classes": "training", "max_queued": 6} if controls else "accept-all"
    spec = {"name": "p", "timer_s": timer_s, "policies": {
        "order": order, "backfill": backfill, "quota": quota, "preemption": preemption, "routing": routing,
        "timing": timing, "placement": placement, "admission": admission}}
    if outage:
        spec["outage"] = outage_table(*outage)
    if burst:
        spec["burst"] = [BURST]
    if spot_rate:
        spec["spot"] = {"interruptions_per_node_hour": spot_rate, "fallback_after": 2}
    if reclaim_clock and quota["key"] == "kueue":
        spec["quota"] = [{"holder": "a", "reclaim_at_work_start": True}]
    return Scenario.from_dict(spec)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(job_spec, min_size=1, max_size=25), st.sampled_from(["fcfs", "multifactor", "drf", "fair-tree", "sjf"]),
       st.sampled_from(["none", "easy", "conservative"]), QUOTAS, PREEMPTIONS,
       st.sampled_from(["home-only", "overflow", "cheapest", "follow-the-sun"]), st.sampled_from(["immediate", "off-peak"]),
       st.sampled_from(["first-fit", "best-fit", "hybrid"]), st.booleans(), OUTAGE, st.booleans(), st.sampled_from([0.0, 2.0]),
       st.sampled_from([0.0, 300.0]), st.booleans())
def test_every_feature_at_once_keeps_the_run_sound(specs, order, backfill, quota, preemption, routing, timing,
                                                   placement, controls, outage, burst, spot_rate, timer_s,
                                                   reclaim_clock):
    rows = []
    for i, (submit, runtime, (cls, qos), gpus, gang, team, region) in enumerate(specs):
        gang = gang and cls in ("training", "batch") and qos is None
        rows.append({**job(i, submit, runtime, 16 if gang else gpus, nodes=2 if gang else 1, workload_class=cls,
                           team=team, region=region), "qos": qos, "priority": i % 3})
    run = scenario(order, backfill, quota, preemption, routing, timing, placement, controls, outage, burst,
                   spot_rate, timer_s, reclaim_clock)
    with deadline():
        try:
            result = run_scenario(run, pd.DataFrame(rows), NODES)
        except ScenarioError as exc:  # a job that spot interruptions never let finish
            assert "the run would not end" in str(exc)
            return
        again = run_scenario(run, pd.DataFrame(rows), NODES)
    for name in ("jobs", "segments", "decisions", "timeline"):
        pd.testing.assert_frame_equal(getattr(result, name), getattr(again, name))

    jobs, held = result.jobs, result.held()
    assert held["end_s"].notna().all()
    stuck = jobs[~(jobs["end_s"].notna() | jobs["reason"].isin(TURNED_AWAY))]
    assert stuck.empty, stuck[["job_id", "reason", "gpus", "team", "queue", "region", "start_s"]].to_string()
    burst_gpus = {"r": BURST["max_nodes"] * BURST["gpus_per_node"] if burst else 0.0, "s": 0.0}
    for region, pieces in held.groupby("region"):
        assert sweep(pieces["start_s"].to_numpy(float), pieces["end_s"].to_numpy(float),
                     pieces["gpus_allocated"].to_numpy(float)) <= CAPACITY[region] + burst_gpus[region] + 1e-9
    submit = jobs["submit_s"].to_numpy()[held["row"].to_numpy(np.int64)]
    assert (held["start_s"].to_numpy() >= submit).all()
    for _, pieces in held.groupby("row"):
        pieces = pieces.sort_values("start_s")
        assert (pieces["start_s"].to_numpy()[1:] >= pieces["end_s"].to_numpy()[:-1]).all()
