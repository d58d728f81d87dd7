"""Backfill reservations and preemption under a cluster step (issue 27, item 1): the head's reservation
is made in the cluster it will start in (engine.sim.cycle.backfill_cluster), and a gang's victims are
all in one cluster it can use (engine.sim.cycle.preempt). Hand-built two-cluster fleets, each test's
outcome (and what the region-wide reservation or plan did instead) worked out in its comment."""
import pandas as pd
import pytest
from sim_helpers import job

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario


def two_clusters(layout) -> pd.DataFrame:
    """8-GPU type-A nodes: (node, cluster, rack) each."""
    return pd.DataFrame([dict(region="r", cluster=c, node=n, gpu_type="A", gpus=8, cpus=64, memory_gib=512, rack=k,
                              tier="reserved") for n, c, k in layout])


ONE_EACH = [("n0", "a", "a1"), ("n1", "b", "b1")]


def simulate(jobs, nodes, **policies):
    return run_scenario(Scenario.from_dict({"name": "t", "policies": policies}), pd.DataFrame(jobs), nodes)


@pytest.mark.parametrize("backfill", ["easy", "conservative"])
def test_the_head_is_reserved_in_its_cluster_so_a_candidate_there_cannot_delay_it(backfill):
    # n0 (cluster a) and n1 (b), 8 GPUs each; best-fit clusters, first-fit nodes.
    # j0 (6 GPUs, 0-100 s): a and b both 8 free, tie -> a, n0. j1 (4 GPUs, 1000 s): a has 2 -> b, n1.
    # Free: a 2, b 4. Head j2 (8 GPUs, 100 s) at 1 s fits nowhere.
    # Its cluster: a has 8 free once j0 ends at 100 s, b once j1 ends at 1000 s -> a, shadow 100 s,
    # nothing extra (EASY); conservative reserves a's 8 GPUs over 100-200 s.
    # j3 (2 GPUs, 500 s) at 2 s would fit a's 2 free GPUs (best fit: a): it outlives the shadow and
    # a has nothing extra, so it waits; the head starts at 100 s on n0, then j3 on n1 (b, 4 free).
    # Region-wide (before): free 6 + j0's 6 at 100 s = 12 >= 8, 4 extra >= j3's 2, so j3 started at
    # 2 s on n0 and the head waited for it until 502 s.
    jobs = [job(0, 0, 100, 6), job(1, 0, 1000, 4), job(2, 1, 100, 8), job(3, 2, 500, 2)]
    result = simulate(jobs, two_clusters(ONE_EACH), cluster="best-fit", backfill=backfill)
    assert result.jobs["start_s"].tolist() == [0.0, 0.0, 100.0, 100.0]
    assert result.jobs["nodes"].tolist() == ["n0", "n1", "n0", "n1"]


@pytest.mark.parametrize("backfill", ["easy", "conservative"])
def test_a_candidate_fits_the_extra_of_the_head_cluster_though_the_region_had_none(backfill):
    # j0 (6 GPUs, 0-100 s) -> a, n0; j1 (6 GPUs, 0-300 s): a has 2 -> b, n1. Free: a 2, b 2.
    # Head j2 (4 GPUs, 100 s) at 1 s fits nowhere (2 and 2), though the region has 4 free.
    # Its cluster: a has 2 + 6 = 8 at 100 s, b 8 at 300 s -> a, shadow 100 s, 8 - 4 = 4 extra.
    # j3 (2 GPUs, 500 s) at 2 s: 2 <= 4 extra, so it starts at once (a and b 2 free each, tie: a, n0);
    # the head still starts at 100 s on n0 (a: 6 free). Region-wide (before): 4 free >= the head's 4,
    # a window at now with 0 extra, so j3 waited until 100 s.
    jobs = [job(0, 0, 100, 6), job(1, 0, 300, 6), job(2, 1, 100, 4), job(3, 2, 500, 2)]
    result = simulate(jobs, two_clusters(ONE_EACH), cluster="best-fit", backfill=backfill)
    assert result.jobs["start_s"].tolist() == [0.0, 0.0, 100.0, 2.0]
    assert result.jobs["nodes"].tolist() == ["n0", "n1", "n0", "n0"]


def test_a_candidate_the_head_cluster_has_no_room_for_does_not_count_against_it():
    # j0 (8 GPUs, 0-100 s) -> a, n0; j1 (4 GPUs, 1000 s) -> b, n1. Free: a 0, b 4.
    # Head j2 (8 GPUs, 100 s): a at 100 s (shadow), nothing extra. j3 (4 GPUs, 500 s) at 2 s cannot
    # fit a now (0 free), so it cannot delay the head: it starts at once on n1; the head at 100 s.
    jobs = [job(0, 0, 100, 8), job(1, 0, 1000, 4), job(2, 1, 100, 8), job(3, 2, 500, 4)]
    result = simulate(jobs, two_clusters(ONE_EACH), cluster="best-fit", backfill="easy")
    assert result.jobs["start_s"].tolist() == [0.0, 0.0, 100.0, 2.0]
    assert result.jobs["nodes"].tolist() == ["n0", "n1", "n0", "n1"]


def test_a_gang_evicts_in_the_one_cluster_it_can_use():
    # n0, n2 in cluster a, n1, n3 in b; topology clusters (one-node jobs: best fit), first-fit nodes.
    # At 0 s, priority 0, 10,000 s each: v0 (8) -> a (tie), n0; v1 (8) -> a (8 free < 16), n2;
    # v2 (8) -> b, n1; v3 and v4 (4 each) -> b, n3. Gang g (2 x 8 GPUs, priority 1) at 10 s fits
    # nowhere. Victims by node, fewest first: region-wide n0 (v0) and n1 (v2), one node in each
    # cluster, where the gang cannot start under a cluster step. In one cluster: a needs v0 and v1,
    # b needs v2, v3 and v4 -> a: v0 and v1 are evicted and g starts at 10 s on n0 and n2.
    # Region-wide (before): each plan freed a node in each cluster, the gang still could not start,
    # every victim was evicted 3 times (max_preemptions) and the gang started at 10,010 s.
    layout = [("n0", "a", "a1"), ("n1", "b", "b1"), ("n2", "a", "a2"), ("n3", "b", "b2")]
    jobs = [job(0, 0, 10_000, 8), job(1, 0, 10_000, 8), job(2, 0, 10_000, 8), job(3, 0, 10_000, 4),
            job(4, 0, 10_000, 4), {**job(5, 10, 100, 16, nodes=2), "priority": 1}]
    result = simulate(jobs, two_clusters(layout), cluster="topology",
                      preemption={"key": "priority", "only_preemptible": False, "min_runtime_s": 0})
    jobs = result.jobs.set_index("job_id")
    assert jobs.loc["j5", ["start_s", "nodes"]].tolist() == [10.0, "n0;n2"]
    assert jobs["preemptions"].tolist() == [1, 1, 0, 0, 0, 0]
    assert jobs.loc[["j0", "j1", "j2", "j3", "j4"], "nodes"].tolist()[2:] == ["n1", "n3", "n3"]
