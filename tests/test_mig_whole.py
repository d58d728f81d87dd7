"""A whole-GPU head gets a GPU in MIG mode back whole (issue 27, item 3, under [partitions] repack:
engine.sim.processes.mig_whole): worked out by hand on one node of two A100s."""
import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

MIG_40GB = {"mode": "mig", "gpu_models": {"A100": "A100-40GB"}, "reconfigure_s": 300, "idle_s": 600}


def run(repack):
    # j0 (development, 1g, 5000 s) at 0 switches GPU 0 to MIG mode (ready 300, ends 5300). j1 (training,
    # 1 GPU, 1000 s) at 10 takes GPU 1 (10-1010). j2 (training, 2 GPUs, 1000 s) at 20 is the head; j3
    # (development, 100 s) comes at 2000.
    jobs = [job(0, 0, 5000, 1, gpu_type="A100", workload_class="development"),
            job(1, 10, 1000, 1, gpu_type="A100"), job(2, 20, 1000, 2, gpu_type="A100"),
            job(3, 2000, 100, 1, gpu_type="A100", workload_class="development")]
    spec = {"name": "t", "policies": {"backfill": {"key": "easy"}}, "partitions": {**MIG_40GB, "repack": repack}}
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), fleet(2, gpu_type="A100"))


def test_without_repacking_the_head_waits_for_the_mig_gpu_to_idle_back():
    # j3 at 2000 takes a 1g on GPU 0 (it ends at 2100, before the GPU is expected whole): 2000-2100.
    # GPU 0 empties at 5300, waits idle_s (600) and switches back: whole at 6200, when j2 starts.
    result = run("off")
    assert result.jobs[["start_s", "end_s"]].values.tolist() == [
        [0.0, 5300.0], [10.0, 1010.0], [6200.0, 7200.0], [2000.0, 2100.0]]


@pytest.mark.parametrize("repack", ["wait", "checkpoint"])
def test_a_whole_gpu_head_empties_a_mig_gpu_and_gets_it_back_whole(repack):
    # At 1010 j1 ends: j2 needs 2 GPUs, GPU 1 is idle and GPU 0 in MIG mode (1 compute slice held):
    # GPU 0 is emptied for it. j0 keeps running (not evicted); GPU 0 takes no new instance and GPU 1
    # does not switch, so j3 waits. j0 ends at 5300, GPU 0 switches back at once (no idle_s): whole at
    # 5600, j2 runs 5600-6600 (600 s sooner); j3 then switches a GPU at 6600, ready 6900, ends 7000.
    result = run(repack)
    assert result.jobs[["start_s", "end_s"]].values.tolist() == [
        [0.0, 5300.0], [10.0, 1010.0], [5600.0, 6600.0], [6600.0, 7000.0]]
    assert result.jobs["preemptions"].sum() == 0
    table = result.partitions
    assert table[table["event"] == "to-whole"][["gpu", "start_s", "end_s"]].values.tolist()[0] == [0, 5300.0, 5600.0]
