"""The policy contract over a MIG scenario (issue 27, item 3): every backfill, preemption and cluster
policy, run over a hand-built fleet of A100s and L4s in two clusters with whole-GPU work beside MIG
instances (with and without repacking): every job ends, the run is deterministic, the GPUs held never
exceed the fleet, and every instance sits at a valid start of a GPU in MIG mode, never sharing a slice."""
import numpy as np
import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.mig import PROFILES

NODES = fleet(2, 2, 2, gpu_type=["A100", "A100", "L4"]).assign(cluster=["c0", "c1", "c1"], rack=["k0", "k1", "k1"])
SIZES = {p.name: (p.starts, p.size) for p in PROFILES["A100-40GB"]}


def jobs() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = []
    for i in range(48):
        kind = ("inference", "development", "batch", "training", "hpo")[i % 5]
        gpus = 1 if kind in ("inference", "development") else int(rng.choice([1, 2]))
        row = job(i, int(rng.integers(0, 8_000)), int(rng.integers(300, 6000)), gpus,
                  gpu_type=str(rng.choice(["A100", "L4"])) if kind != "inference" else "A100", workload_class=kind)
        row["priority"] = int(rng.integers(0, 3))
        row["gpu_util_pct"] = float(rng.uniform(5, 90)) if i % 3 else None
        rows.append(row)
    return pd.DataFrame(rows)


CASES = [(family, key) for family in ("backfill", "preemption", "cluster") for key in registry.families()[family]]


def run(family: str, key: str, repack: str):
    policies = {"backfill": {"key": "easy"}, "placement": {"key": "best-fit"}, family: {"key": key}}
    if family == "preemption" and key == "priority":
        policies[family].update(min_runtime_s=0.0, only_preemptible=False)
    spec = {"name": "t", "policies": policies,
            "partitions": {"mode": "mig", "gpu_models": {"A100": "A100-40GB"}, "reconfigure_s": 300, "idle_s": 900,
                           "inference_profile": "4g", "development_profile": "1g", "repack": repack}}
    return run_scenario(Scenario.from_dict(spec), jobs(), NODES)


@pytest.mark.parametrize("repack", ["off", "checkpoint", "wait"])
@pytest.mark.parametrize("family,key", CASES)
def test_every_policy_over_a_mig_scenario_keeps_the_contract(family, key, repack):
    result = run(family, key, repack)
    assert result.jobs["end_s"].notna().all(), "every job ends"
    again = run(family, key, repack)
    assert result.jobs.equals(again.jobs) and result.partitions.equals(again.partitions), "deterministic"
    assert (result.timeline["busy_gpus"] <= result.capacity_gpus["r"] + 1e-9).all()
    table = result.partitions
    modes = table[table["event"] == "to-mig"]
    instances = table[table["event"] == "instance"]
    assert len(instances), "the scenario exercises MIG instances"
    for (node, gpu), held in instances.groupby(["node", "gpu"]):
        spans = modes[(modes["node"] == node) & (modes["gpu"] == gpu)][["start_s", "end_s"]].values
        items = list(held[["start_s", "end_s", "start_slice", "profile"]].itertuples(index=False))
        for s, e, a, p in items:
            assert a in SIZES[p][0]
            assert any(lo <= s and e <= hi for lo, hi in spans), "an instance lives on a GPU in MIG mode"
        for k, (s1, e1, a1, p1) in enumerate(items):
            for s2, e2, a2, p2 in items[k + 1:]:
                if s1 < e2 and s2 < e1:
                    assert a1 + SIZES[p1][1] <= a2 or a2 + SIZES[p2][1] <= a1
