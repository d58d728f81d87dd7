"""Spot nodes hold interruptible work only (engine.scenario.queues `spot`) where the scenario's [spot]
keeps work off them (interruptible_only, by default wherever interruptions are drawn): guaranteed
inference and express work never land on them, with or without interruptions drawn; checkpointing and
preemptible work may, and falls back to on-demand after `fallback_after` interruptions as before."""
from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import deadline, job

from engine.core.errors import ScenarioError
from engine.scenario.queues import DEFAULT_QUEUES, QueueClass
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

HOUR = 3600.0


def nodes(*tiers: str, gpus: int = 8) -> pd.DataFrame:
    """One `gpus`-GPU node per tier, named by its tier's initial and position (r0, s1, ...)."""
    return pd.DataFrame([dict(region="r", cluster="c", node=f"{t[0]}{i}", gpu_type="A", gpus=gpus, cpus=64,
                              memory_gib=512, rack="k0", tier=t) for i, t in enumerate(tiers)])


def guaranteed(i: int, submit: float, run: float, gpus: int) -> dict:
    return {**job(i, submit, run, gpus, workload_class="inference"), "qos": "guaranteed"}


def spot_run(jobs: list[dict], fleet: pd.DataFrame, rate: float = 0.0, fallback_after: int = 0, seed: int = 0,
             rule: bool | None = True):
    """A run under [spot] with the rule as `rule` says (None: unset, so on when `rate` draws interruptions)."""
    spec = {"name": "spot", "seed": seed, "policies": {"backfill": "easy"}, "spot": {}}
    if rate:
        spec["spot"] = {"interruptions_per_node_hour": rate, "fallback_after": fallback_after}
    if rule is not None:
        spec["spot"]["interruptible_only"] = rule
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), fleet)


def test_the_default_queues_allow_spot_for_interruptible_work_only():
    assert {q.name: q.spot for q in DEFAULT_QUEUES} == {
        "reserved": False, "express": False, "batch": True, "preemptible": True, "standard": True}
    assert QueueClass("q", checkpoint_s=0.0).spot is False  # no checkpoint, not preemptible: not interruptible
    assert QueueClass("q", checkpoint_s=0.0, spot=True).spot is True  # a class may opt in
    assert QueueClass("q", checkpoint_s=600.0, spot=False).spot is False  # or out
    with pytest.raises(ValueError, match="guaranteed work cannot run on spot"):
        QueueClass("q", guaranteed=True, spot=True)


def test_a_queue_table_sets_spot_and_a_guaranteed_one_cannot():
    queue = {"name": "all", "spot": True}
    assert Scenario.from_dict({"name": "s", "queue": [queue]}).queues[0].spot is True
    with pytest.raises(ScenarioError, match="spot must be true or false"):
        Scenario.from_dict({"name": "s", "queue": [{**queue, "spot": 1}]})
    with pytest.raises(ScenarioError, match="guaranteed work cannot run on spot"):
        Scenario.from_dict({"name": "s", "queue": [{**queue, "guaranteed": True}]})


def test_guaranteed_work_waits_for_a_reserved_node_while_batch_work_takes_the_spot_one():
    # r0 reserved, s1 spot, 8 GPUs each. Two 8-GPU guaranteed inference jobs at 0 s and 10 s: the second
    # waits for r0 (free at 1 h) although s1 stays free; a batch job at 1 h 1 min starts on s1 at once
    jobs = [guaranteed(0, 0, HOUR, 8), guaranteed(1, 10, HOUR, 8), job(2, HOUR + 60, HOUR, 8, workload_class="batch")]
    result = spot_run(jobs, nodes("reserved", "spot"))
    placed = result.jobs.set_index("job_id")
    assert placed.loc["j0", ["start_s", "nodes"]].tolist() == [0.0, "r0"]
    assert placed.loc["j1", ["start_s", "nodes"]].tolist() == [HOUR, "r0"]
    assert placed.loc["j2", ["start_s", "nodes"]].tolist() == [HOUR + 60, "s1"]
    assert placed["queue"].tolist() == ["reserved", "reserved", "batch"]


def test_the_rule_holds_where_interruptions_are_drawn_unless_a_scenario_says_otherwise():
    # the same two guaranteed jobs on a reserved and a spot node: the second takes s1 at once when the rule is
    # off (set false, as the recorded baseline does, or unset with no interruptions drawn: a spot node never
    # taken back is capacity like any other) and waits for r0 when it is on (set, or unset with a rate)
    from engine.scenario.recorded import recorded_baseline

    jobs = [guaranteed(0, 0, HOUR, 8), guaranteed(1, 10, HOUR, 8)]
    fleet = nodes("reserved", "spot")
    second = {}
    for rate, rule in ((0.0, False), (0.0, None), (0.0, True), (1e-9, None), (1e-9, False)):
        placed = spot_run(jobs, fleet, rate=rate, rule=rule).jobs.set_index("job_id")
        second[rate, rule] = placed.loc["j1", ["start_s", "nodes"]].tolist()
    assert second == {(0.0, False): [10.0, "s1"], (0.0, None): [10.0, "s1"], (0.0, True): [HOUR, "r0"],
                      (1e-9, None): [HOUR, "r0"], (1e-9, False): [10.0, "s1"]}
    assert recorded_baseline("per-pool-fifo").spot.keeps_work_off_spot is False
    assert Scenario.from_dict({"name": "s"}).spot.keeps_work_off_spot is False
    assert Scenario.from_dict({"name": "s", "spot": {"interruptions_per_node_hour": 0.1}}).spot.keeps_work_off_spot


def test_spot_never_holds_a_guaranteed_job_under_interruptions():
    # one spot node interrupted about every 30 min: only the batch work on it is ever interrupted
    jobs = [guaranteed(i, i * 60, 2 * HOUR, 4) for i in range(4)] + \
           [job(4 + i, i * 60, 2 * HOUR, 4, workload_class="batch") for i in range(4)]
    with deadline():
        result = spot_run(jobs, nodes("reserved", "spot", "on-demand"), rate=2.0, fallback_after=3)
    jobs_out, held = result.jobs, result.held()
    on_spot = held[held["nodes"].str.contains("s1")]
    assert set(jobs_out.loc[on_spot["row"], "queue"]) == {"batch"}
    assert jobs_out.loc[jobs_out["queue"] == "reserved", "spot_interruptions"].eq(0).all()
    assert jobs_out.loc[jobs_out["queue"] == "batch", "spot_interruptions"].sum() > 0
    assert jobs_out["end_s"].notna().all()


def test_a_guaranteed_job_only_spot_nodes_could_hold_never_fits():
    # a 4-GPU reserved node and an 8-GPU spot one: the 8-GPU guaranteed job can never run; batch can
    fleet = pd.concat([nodes("reserved", gpus=4), nodes("spot", gpus=8).assign(node="s1")], ignore_index=True)
    result = spot_run([guaranteed(0, 0, HOUR, 8), job(1, 0, HOUR, 8, workload_class="batch")], fleet)
    assert result.jobs["reason"].iloc[0] == "never-fits" and not result.jobs["started"].iloc[0]
    assert result.jobs[["nodes", "end_s"]].iloc[1].tolist() == ["s1", HOUR]


CLASSES = {"inference": "reserved", "development": "express", "batch": "batch", "hpo": "preemptible",
           "training": "standard"}


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 3600), st.integers(60, 4 * 3600), st.sampled_from([1, 2, 4, 8]),
                          st.sampled_from(sorted(CLASSES))), min_size=1, max_size=16),
       st.lists(st.sampled_from(["reserved", "spot", "on-demand"]), min_size=1, max_size=4),
       st.sampled_from([0.0, 0.5, 4.0]), st.sampled_from([0, 1, 2]), st.integers(0, 2))  # the rule set: on at rate 0
def test_no_piece_of_work_that_may_not_use_spot_is_ever_on_a_spot_node(specs, tiers, rate, fallback_after, seed):
    jobs = [{**job(i, submit, run, gpus, workload_class=cls), "qos": "guaranteed" if cls == "inference" else ""}
            for i, (submit, run, gpus, cls) in enumerate(specs)]
    fleet = nodes(*tiers)
    spot_nodes = set(fleet.loc[fleet["tier"] == "spot", "node"])
    with deadline():
        try:
            result = spot_run(jobs, fleet, rate, fallback_after, seed)
        except ScenarioError as exc:  # work interruptions never let finish: the run says so
            assert "the run would not end" in str(exc)
            return
    out, held = result.jobs, result.held()
    allowed = {q.name: q.spot for q in DEFAULT_QUEUES}
    for _, piece in held.iterrows():
        if set(str(piece["nodes"]).split(",")) & spot_nodes:
            assert allowed[out.loc[piece["row"], "queue"]]
    assert (out.loc[~out["queue"].map(allowed), "spot_interruptions"] == 0).all()
    assert set(out["queue"]) <= set(CLASSES.values())
