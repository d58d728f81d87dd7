"""Backfilling, preemption and the cluster step see MIG mode (issue 27, item 3): a GPU in MIG mode counts
by its free valid positions, not as a whole GPU; a backfilled MIG job that would switch a whole GPU (or
keep one from going whole) counts as holding it; a victim holding an instance frees its slices; and a
job on an instance runs at the instance's pace. Every figure is computed by hand in the comments; the
code before this change gave the figures in brackets."""
import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

MIG_40GB = {"mode": "mig", "gpu_models": {"A100": "A100-40GB"}, "reconfigure_s": 300, "idle_s": 600}


def simulate(jobs, nodes, partitions, **policies):
    spec = {"name": "t", "policies": {k: v if isinstance(v, dict) else {"key": v} for k, v in policies.items()},
            "partitions": partitions}
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), nodes)


def spans(result) -> list[list[float]]:
    return result.jobs[["start_s", "end_s"]].values.tolist()


def a100(i, submit, run, gpus=1, workload_class="development", **extra):
    return {**job(i, submit, run, gpus, gpu_type="A100", workload_class=workload_class), **extra}


def test_a_backfilled_mig_job_that_would_switch_the_heads_gpu_waits():
    # One node with two A100s, EASY. j0 (batch, 1 GPU, 1000 s) at 0; j1 (batch, 2 GPUs) at 10 is the
    # head, its reservation at 1000 when j0 ends. j2 (development, 500 s) at 20 would switch the idle
    # GPU to MIG mode, holding it whole until 20 + 300 + 500 + 600 + 300 = 1720 > 1000: with no GPU to
    # spare at the reservation it waits. j1 runs 1000-2000; j2 switches a GPU at 2000, ready at 2300,
    # ends at 2800. [Before: j2 backfilled at 20, j1 delayed to 1720.]
    jobs = [a100(0, 0, 1000, workload_class="batch"), a100(1, 10, 1000, 2, workload_class="batch"),
            a100(2, 20, 500)]
    assert spans(simulate(jobs, fleet(2, gpu_type="A100"), MIG_40GB, backfill="easy")) == [
        [0.0, 1000.0], [1000.0, 2000.0], [2000.0, 2800.0]]


def test_a_backfilled_instance_that_would_keep_a_mig_gpu_from_going_whole_waits():
    # One A100, EASY. j0 (development, 1000 s) at 0 switches it: its instance works 300-1300, the GPU is
    # expected whole at 1300 + 600 + 300 = 2200, the reservation of the head j1 (batch, a whole GPU,
    # 400 s, at 10). j2 (development, 2000 s) at 100 fits slice 1 but would end at 2300 and keep the GPU
    # in MIG mode until 3200: it waits. j1 runs 2200-2600; j2 switches the GPU at 2600: 2900-4900.
    # [Before: j2 backfilled at 100, j1 delayed to 3200.] A short j2 (500 s, ending at 800) is backfilled:
    # test_partitions' first test.
    jobs = [a100(0, 0, 1000), a100(1, 10, 400, workload_class="batch"), a100(2, 100, 2000)]
    assert spans(simulate(jobs, fleet(1, gpu_type="A100"), MIG_40GB, backfill="easy")) == [
        [0.0, 1300.0], [2200.0, 2600.0], [2600.0, 4900.0]]


def test_preemption_frees_the_slices_of_a_victims_instance():
    # One A100 40 GB, development on 3g.20gb instances (starts 0 and 4). j0 (2000 s) and j1 (3000 s) at
    # 0 take both halves (ready at 300). j2 (priority 5, 500 s) at 1000: no valid start is free and no
    # whole GPU is idle. Priority preemption (any lower priority, no minimum runtime) evicts the first
    # victim, j0 (same start, lower index): its 3g at 0 frees, j2 works there 1000-1500; j0 (the express
    # queue has no checkpoints: all its work lost) runs again 1500-3500. [Before: the planner looked
    # for a whole GPU, found none, evicted nothing: j2 waited for j0, 2300-2800.] Without preemption, as before.
    jobs = [a100(0, 0, 2000), a100(1, 0, 3000), a100(2, 1000, 500, priority=5)]
    partitions = {**MIG_40GB, "development_profile": "3g"}
    nodes = fleet(1, gpu_type="A100")
    evicting = simulate(jobs, nodes, partitions,
                        preemption={"key": "priority", "min_runtime_s": 0.0, "only_preemptible": False})
    assert spans(evicting) == [[0.0, 3500.0], [0.0, 3300.0], [1000.0, 1500.0]]
    assert evicting.jobs["preemptions"].tolist() == [1, 0, 0]
    instances = evicting.partitions[evicting.partitions["event"] == "instance"]
    assert instances[["row", "start_slice", "start_s", "end_s"]].values.tolist() == [
        [0, 0, 0.0, 1000.0], [1, 4, 0.0, 3300.0], [2, 0, 1000.0, 1500.0], [0, 0, 1500.0, 3500.0]]
    assert spans(simulate(jobs, nodes, partitions, preemption="none")) == [[0.0, 2300.0], [0.0, 3300.0],
                                                                           [2300.0, 2800.0]]


def test_the_cluster_step_counts_a_mig_gpu_by_its_free_positions():
    # Two clusters of one A100 each. j0 (development, 3000 s) at 0 switches n0's GPU (cluster c0). j1
    # (development) at 500: c0 has 6 free compute slices (6/7 of a GPU) and a free valid start; c1 one
    # idle whole GPU. best-fit packs it on n0's GPU at slice 1 (works at once: 500-1500); most-free
    # takes c1, switching n1's GPU (ready 800, ends 1800). [Before: MIG jobs skipped the cluster step,
    # always n0.] Under `any` there is no cluster step: the placer's choice, n0.
    nodes = fleet(1, 1, gpu_type="A100").assign(cluster=["c0", "c1"])
    jobs = [a100(0, 0, 3000), a100(1, 500, 1000)]
    for policy, node, end in (("any", "n0", 1500.0), ("best-fit", "n0", 1500.0), ("most-free", "n1", 1800.0)):
        result = simulate(jobs, nodes, MIG_40GB, cluster=policy)
        instance = result.partitions[(result.partitions["event"] == "instance") & (result.partitions["row"] == 1)]
        assert instance[["node", "start_slice"]].values.tolist() == [[node, 1 if node == "n0" else 0]], policy
        assert result.jobs["end_s"].tolist() == [3300.0, end], policy


def test_a_job_whose_gpu_share_outgrows_its_instance_is_slowed_by_their_ratio():
    # Two inference jobs of 1000 s on 3g.20gb instances (3/7 of the SMs) of one A100, ready at 300. j0
    # used 60 % of its GPU: 0.60 / (3/7) = 1.4 times slower, 1400 s of running: it ends at 1700. j1 used
    # 30 % (< 3/7): it fits, 1000 s, ends at 1300. [Before: both ended at 1300.]
    jobs = [a100(0, 0, 1000, workload_class="inference", gpu_util_pct=60.0),
            a100(1, 0, 1000, workload_class="inference", gpu_util_pct=30.0)]
    result = simulate(jobs, fleet(1, gpu_type="A100"), MIG_40GB)
    assert result.jobs["end_s"].tolist() == pytest.approx([1700.0, 1300.0])
    instances = result.partitions[result.partitions["event"] == "instance"].set_index("row")
    assert instances["slowdown"].tolist() == pytest.approx([1400 / 1000, 1.0])
