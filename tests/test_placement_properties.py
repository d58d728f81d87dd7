"""Property tests (hypothesis) of placement end to end: every placement policy and both gang
policies, with fractional GPUs (milli-GPU shares), whole GPUs and 2-node gangs, on a fleet of two
GPU models over two racks, under each backfilling policy and a few queue orders. On random
workloads:

- the run ends and is deterministic for a seed;
- no node ever holds more GPUs than it has (a gang holds its nodes whole), and a job that asks
  for a GPU model runs only on nodes of that model;
- no piece starts before its job's submit, every job ends or never fits, and a job's GPUs held
  match what it asked for (a share, its GPU count, or its gang's whole nodes).
"""
import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import deadline, fleet, job, sweep

from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

NODES = fleet(8, 8, 4, 4, 2, gpu_type=["A", "A", "B", "A", "B"]).assign(rack=["k0", "k0", "k1", "k1", "k1"])
GPUS = dict(zip(NODES["node"], NODES["gpus"].astype(float)))
MODEL = dict(zip(NODES["node"], NODES["gpu_type"]))

# submit, runtime, kind: a share of one GPU, whole GPUs, or a 2-node gang; its size; GPU model
job_spec = st.tuples(st.integers(0, 600), st.integers(1, 900), st.sampled_from(["share", "whole", "gang"]),
                     st.sampled_from([1, 2, 4, 8]), st.sampled_from(["A", "B"]))
SHARES = {1: 250, 2: 500, 4: 500, 8: 750}  # milli-GPU of a shared job, by its size draw


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(job_spec, min_size=1, max_size=20), st.sampled_from(registry.families()["placement"]),
       st.sampled_from(["lowest-index", "topology"]), st.sampled_from(["none", "easy", "conservative"]),
       st.sampled_from(["fcfs", "sjf", "priority"]), st.integers(0, 2))
def test_placements_never_overfill_a_node_and_respect_gpu_models(specs, placement, gang, backfill, order, seed):
    rows = []
    for i, (submit, runtime, kind, size, model) in enumerate(specs):
        if kind == "share":
            rows.append(job(i, submit, runtime, SHARES[size] / 1000, gpu_type=model, gpu_milli=SHARES[size]))
        elif kind == "whole":
            rows.append(job(i, submit, runtime, size, gpu_type=model))
        else:
            rows.append(job(i, submit, runtime, 2 * size, nodes=2, gpu_type=model))
    scenario = Scenario.from_dict({"name": "p", "seed": seed, "policies": {
        "placement": placement, "gang": gang, "backfill": backfill, "order": order}})
    with deadline():
        result = run_scenario(scenario, pd.DataFrame(rows), NODES)
        again = run_scenario(scenario, pd.DataFrame(rows), NODES)
    for name in ("jobs", "segments", "decisions"):
        pd.testing.assert_frame_equal(getattr(result, name), getattr(again, name))

    jobs, held = result.jobs, result.held()
    assert held["end_s"].notna().all()
    assert (jobs["end_s"].notna() | (jobs["reason"] == "never-fits")).all()
    submit = jobs["submit_s"].to_numpy()[held["row"].to_numpy(np.int64)]
    assert (held["start_s"].to_numpy() >= submit).all()

    asked = {f"j{i}": spec for i, spec in enumerate(specs)}
    per_node = []
    for piece in held.itertuples():
        names = piece.nodes.split(";")
        _, _, kind, size, model = asked[piece.job_id]
        assert all(MODEL[n] == model for n in names), (piece.job_id, names, model)
        if kind == "gang":
            assert len(names) == 2 and piece.gpus_allocated == sum(GPUS[n] for n in names)
            per_node += [(n, piece.start_s, piece.end_s, GPUS[n]) for n in names]
        else:
            want = SHARES[size] / 1000 if kind == "share" else float(size)
            assert len(names) == 1 and abs(piece.gpus_allocated - want) < 1e-9
            per_node.append((names[0], piece.start_s, piece.end_s, want))
    for node, group in pd.DataFrame(per_node, columns=["node", "start", "end", "gpus"]).groupby("node"):
        peak = sweep(group["start"].to_numpy(float), group["end"].to_numpy(float), group["gpus"].to_numpy(float))
        assert peak <= GPUS[node] + 1e-9, node
