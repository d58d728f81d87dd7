"""The policy contract over a cluster-step scenario (issue 27, item 1): every backfill and preemption
policy, under each cluster policy that takes a step, run over a hand-built two-cluster fleet with
one-node jobs and gangs of mixed priority: every job ends, the run is deterministic, the GPUs held
never exceed the fleet, and every job some cluster can hold (backfilled, or started after evictions)
runs inside one cluster."""
import numpy as np
import pandas as pd
import pytest
from sim_helpers import job

from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

# a: n0, n2, n4 (racks a1, a1, a2); b: n1, n3 (rack b1); 8 GPUs of type A each. A 3-node gang fits a only.
LAYOUT = [("n0", "a", "a1"), ("n1", "b", "b1"), ("n2", "a", "a1"), ("n3", "b", "b1"), ("n4", "a", "a2")]
NODES = pd.DataFrame([dict(region="r", cluster=c, node=n, gpu_type="A", gpus=8, cpus=64, memory_gib=512, rack=k,
                           tier="reserved") for n, c, k in LAYOUT])
CLUSTER_OF = dict(zip(NODES["node"], NODES["cluster"]))


def jobs() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    rows = []
    for i in range(40):
        width = int(rng.choice([1, 1, 1, 2, 3]))
        gpus = 8 * width if width > 1 else int(rng.choice([1, 2, 4, 8]))
        run_s = int(rng.integers(300, 5000))
        row = job(i, int(rng.integers(0, 6000)), run_s, gpus, int(run_s * rng.uniform(1.0, 2.0)), nodes=width)
        row["priority"] = int(rng.integers(0, 3))
        rows.append(row)
    return pd.DataFrame(rows)


CASES = [("backfill", key) for key in registry.families()["backfill"]] + [("preemption", "priority")]


def run(family: str, key: str, cluster: str):
    policies = {"backfill": {"key": "easy"}, "cluster": {"key": cluster}, family: {"key": key}}
    if family == "preemption":
        policies[family].update(min_runtime_s=0.0, only_preemptible=False)
    return run_scenario(Scenario.from_dict({"name": "t", "policies": policies}), jobs(), NODES)


@pytest.mark.parametrize("cluster", ["best-fit", "most-free", "topology"])
@pytest.mark.parametrize("family,key", CASES)
def test_every_policy_over_a_cluster_step_scenario_keeps_the_contract(family, key, cluster):
    result = run(family, key, cluster)
    assert result.jobs["end_s"].notna().all(), "every job ends"
    assert result.jobs.equals(run(family, key, cluster).jobs), "deterministic"
    assert (result.timeline["busy_gpus"] <= result.capacity_gpus["r"] + 1e-9).all()
    for row in result.jobs.itertuples():
        assert len({CLUSTER_OF[n] for n in row.nodes.split(";")}) == 1, (row.job_id, row.nodes)
