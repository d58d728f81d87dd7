"""Property tests (hypothesis) of the features that move work between regions and over time:
routing policies, timing policies (holds), a region outage and cloud burst nodes, with each
backfilling policy and a few placements, on random two-region workloads:

- the run ends and is deterministic;
- no region ever holds more GPUs than it has installed plus the burst nodes it may rent;
- no piece starts before its job's submit, a job's pieces never overlap, nothing runs at the end,
  and every job ends or is turned away;
- nothing runs in a region while it is down (its running jobs are evicted when the outage starts);
- a rented burst node runs work only once it is up, and is billed from its rental on.
"""
import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import deadline, fleet, job, outage_table, sweep

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

TURNED_AWAY = {"never-fits", "rejected-by-admission", "rejected-by-forecast"}
NODES = pd.concat([fleet(8, 8, 4, region="r"), fleet(8, 4, region="s").assign(node=["m0", "m1"])],
                  ignore_index=True)
CAPACITY = {"r": 20.0, "s": 12.0}
BURST = {"region": "r", "gpu_type": "A", "max_nodes": 2, "gpus_per_node": 8, "provision_min": 2,
         "trigger_wait_min": 1, "idle_release_min": 2, "usd_per_gpu_hour": 3.0}

# submit, runtime, GPUs of a one-node job, a 2-node gang, home region, class
job_spec = st.tuples(st.integers(0, 3000), st.integers(1, 1800), st.sampled_from([1, 2, 4, 8]), st.booleans(),
                     st.sampled_from(["r", "r", "s"]), st.sampled_from(["training", "inference", "batch"]))
ROUTING = st.sampled_from(["home-only", "overflow", "cheapest", "follow-the-sun", "lowest-carbon", "latency-aware",
                           "weighted", "data-local"])
TIMING = st.sampled_from(["immediate", "off-peak", "off-hours", "lowest-carbon-hour"])
OUTAGE = st.one_of(st.none(), st.tuples(st.sampled_from(["r", "s"]), st.integers(0, 3000), st.integers(60, 3600)))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(job_spec, min_size=1, max_size=20), ROUTING, TIMING, OUTAGE, st.booleans(),
       st.sampled_from(["none", "easy", "conservative"]), st.sampled_from(["first-fit", "best-fit", "worst-fit"]))
def test_routing_timing_outages_and_bursts_keep_the_run_sound(specs, routing, timing, outage, burst, backfill,
                                                              placement):
    rows = [job(i, submit, runtime, 16 if gang else gpus, nodes=2 if gang else 1, region=region,
                workload_class=cls) for i, (submit, runtime, gpus, gang, region, cls) in enumerate(specs)]
    spec = {"name": "p", "policies": {"routing": routing, "timing": timing, "backfill": backfill,
                                      "placement": placement}}
    if outage:
        spec["outage"] = outage_table(*outage)
    if burst:
        spec["burst"] = [BURST]
    scenario = Scenario.from_dict(spec)
    with deadline():
        result = run_scenario(scenario, pd.DataFrame(rows), NODES)
        again = run_scenario(scenario, pd.DataFrame(rows), NODES)
    for name in ("jobs", "segments", "decisions", "timeline"):
        pd.testing.assert_frame_equal(getattr(result, name), getattr(again, name))

    jobs, held = result.jobs, result.held()
    assert held["end_s"].notna().all()
    extra = {"r": BURST["max_nodes"] * BURST["gpus_per_node"] if burst else 0.0}
    for region, pieces in held.groupby("region"):
        peak = sweep(pieces["start_s"].to_numpy(float), pieces["end_s"].to_numpy(float),
                     pieces["gpus_allocated"].to_numpy(float))
        assert peak <= CAPACITY[region] + extra.get(region, 0.0) + 1e-9
    submit = jobs["submit_s"].to_numpy()[held["row"].to_numpy(np.int64)]
    assert (held["start_s"].to_numpy() >= submit).all()
    for _, pieces in held.groupby("row"):
        pieces = pieces.sort_values("start_s")
        assert (pieces["start_s"].to_numpy()[1:] >= pieces["end_s"].to_numpy()[:-1]).all()
    assert (jobs["end_s"].notna() | jobs["reason"].isin(TURNED_AWAY)).all()

    if outage:  # in run seconds: from the first submit
        region, start, length = outage
        first = min(spec[0] for spec in specs)
        down_from, down_to = max(start - first, 0), start + length - first
        there = held[held["region"] == region]
        assert ((there["start_s"] >= down_to) | (there["end_s"] <= down_from)).all()

    rentals = result.burst
    if burst and rentals is not None and len(rentals):
        assert (rentals["rented_s"] <= rentals["up_s"]).all()
        returned = rentals["returned_s"].dropna()
        assert (returned >= rentals.loc[returned.index, "up_s"]).all()
        for node, rented in rentals.groupby("node"):
            on_it = held[held["nodes"].str.split(";").apply(lambda names: node in names)]
            for start, end in zip(on_it["start_s"], on_it["end_s"]):
                assert ((rented["up_s"] <= start) & (rented["returned_s"].fillna(np.inf) >= end)).any()
    else:
        assert not held["nodes"].str.contains("burst").any()
