"""The backfill scope test (engine.sim.cycle.cluster_step.ClusterStep.scoped_units) reads each job's shape key
from a per-job index: after a change of the job's spot rule or nodes (`reshape`, as spot fallback and
elastic degradation call it) it answers as `holds` does for the job as it now is."""
from types import SimpleNamespace

import numpy as np

from engine.sim.cycle.cluster_step import ClusterStep

# Four nodes in two clusters: a holds n0, n1 (8 GPUs each, spot), b holds n2, n3 (2 GPUs each, on-demand).
GPUS, SPOT = np.array([8, 8, 2, 2]), np.array([True, True, False, False])
UNITS, FREE = np.array([1000.0, 5000.0]), 4000.0


def big_enough(num_gpu, cpu, memory, pool, spot_ok):
    return (GPUS >= num_gpu) & (spot_ok | ~SPOT)


def fleet():
    return SimpleNamespace(cluster_codes=np.array([0, 0, 1, 1]), cluster_names=["a", "b"], big_enough=big_enough,
                           state=SimpleNamespace(gpu_count=GPUS))


def run():
    """Job 0 asks for 4 GPUs on one node, job 1 for 2 GPUs on two nodes; both may use spot nodes."""
    return SimpleNamespace(num_gpu=[4, 2], cpu_milli=[1000, 1000], memory_mib=[1024, 1024], pool_list=[0, 0],
                           spot_ok=[True, True], width=[1, 2])


def expected(step, j, region, cluster, room):
    holds, _, held = step.holds(j, region)
    return bool((holds[cluster] and room) or not held)


def reaches(step, jobs, region, cluster):
    """Which of `jobs` count in `cluster`: job 0 (1000 units) has room under FREE, job 1 (5000) has not."""
    return (step.scoped_units(jobs, UNITS, np.zeros(2, np.int64), 0, region, cluster, FREE) > 0).tolist()


def test_reaches_follows_a_job_whose_spot_rule_and_nodes_change():
    state, region, jobs = run(), fleet(), np.array([0, 1])
    step = ClusterStep(state, policy=None)
    before = [reaches(step, jobs, region, c) for c in (0, 1)]
    # job 0: only a holds it; job 1 (2 GPUs on 2 nodes): a and b hold it, and has no room
    assert before == [[True, False], [False, False]]
    state.spot_ok[0] = False  # now no node is big enough: no cluster holds it, it spans clusters
    state.width[1] = 3  # no cluster has 3 nodes: it spans clusters too
    for j in (0, 1):
        step.reshape(j)
    for c in (0, 1):
        got = reaches(step, jobs, region, c)
        assert got == [expected(step, 0, region, c, True), expected(step, 1, region, c, False)] == [True, True]
