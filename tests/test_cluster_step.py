"""The cluster level (issue 27, item 1): a cluster policy picks a job's cluster before its nodes are
chosen (engine.policies.cluster, engine.sim.cycle.cluster_step). Hand-built clusters whose choice is
worked out by hand in each test's comment, a property test over random small fleets, and the
default `any` changing nothing."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_helpers import job

from engine.core.cluster_view import ANY, WAIT, ClusterRequest, ClustersView
from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

# Six 8-GPU nodes of type A in two clusters, and two of type L in a third:
#   cluster a: n0 (rack a1), n2 (rack a2)                   16 GPUs, 2 racks of 1 node
#   cluster b: n1, n3 (rack b1), n4, n5 (rack b2)           32 GPUs, 2 racks of 2 nodes
#   cluster c: n6, n7 (rack c1), type L                     16 GPUs
LAYOUT = [("n0", "a", "a1", "A"), ("n1", "b", "b1", "A"), ("n2", "a", "a2", "A"), ("n3", "b", "b1", "A"),
          ("n4", "b", "b2", "A"), ("n5", "b", "b2", "A"), ("n6", "c", "c1", "L"), ("n7", "c", "c1", "L")]


def hand_fleet() -> pd.DataFrame:
    return pd.DataFrame([dict(region="r", cluster=c, node=n, gpu_type=t, gpus=8, cpus=64, memory_gib=512, rack=k,
                              tier="reserved") for n, c, k, t in LAYOUT])


def simulate(jobs, cluster, gang="lowest-index", interconnect=False, nodes=None):
    spec = {"name": "t", "policies": {"cluster": cluster, "gang": gang}}
    if interconnect:
        spec["interconnect"] = {}
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), hand_fleet() if nodes is None else nodes)


@pytest.mark.parametrize("cluster, nodes", [("any", "n0"), ("most-free", "n1"), ("best-fit", "n0"),
                                            ("topology", "n0")])
def test_a_one_node_job_goes_to_the_cluster_its_policy_names(cluster, nodes):
    # 4 GPUs of type A at t=0, first-fit placement. Free type-A GPUs: a 16, b 32 (c holds no type A).
    # any: first-fit over the region, n0. most-free: b, first-fit inside it, n1. best-fit: a, n0.
    # topology: one rack wherever a one-node job goes, so best fit: a, n0.
    result = simulate([job(0, 0, 100, 4)], cluster)
    assert result.jobs["nodes"].item() == nodes


@pytest.mark.parametrize("cluster, nodes, level, end", [
    ("any", "n0;n1", "region", 3100.0),      # lowest-index over the region: n0 (a) and n1 (b); 0.7 + 0.3 x 400/50
    ("best-fit", "n0;n2", "cluster", 1300.0),  # a has 16 free < b's 32: n0, n2 in racks a1, a2; 0.7 + 0.3 x 2
    ("topology", "n1;n3", "rack", 1000.0),   # a spans 2 racks, b's rack b1 holds both: b, n1 and n3
    ("most-free", "n1;n3", "rack", 1000.0),  # b, its lowest-index free nodes
])
def test_a_two_node_training_gang_stays_in_the_chosen_cluster_and_the_network_prices_it(cluster, nodes, level, end):
    result = simulate([job(0, 0, 1000, 16, nodes=2)], cluster, interconnect=True)
    assert result.jobs["nodes"].item() == nodes
    assert result.interconnect["level"].tolist() == [level]
    assert result.jobs["end_s"].item() == pytest.approx(end)


def test_a_gang_waits_for_its_cluster_rather_than_span_two():
    # most-free: job 0 (8 GPUs, 0-100 s) goes to b (32 free > 16), on n1. Job 1, a 4-node gang at 1 s:
    # only b has 4 nodes; it has 3 entirely free, so the gang waits until job 0 ends at 100 s and
    # takes n1, n3, n4, n5. Without a cluster step it starts at once on 4 of the 5 free nodes (n1..n4,
    # job 0 being on n0), across both clusters.
    jobs = [job(0, 0, 100, 8), job(1, 1, 1000, 32, nodes=4)]
    waited = simulate(jobs, "most-free")
    assert waited.jobs["start_s"].tolist() == [0.0, 100.0]
    assert waited.jobs["nodes"].tolist() == ["n1", "n1;n3;n4;n5"]
    spans = simulate(jobs, "any")
    assert spans.jobs["start_s"].tolist() == [0.0, 1.0]
    assert spans.jobs["nodes"].tolist() == ["n0", "n1;n2;n3;n4"]


def test_a_job_no_cluster_can_hold_spans_clusters_as_without_a_step():
    # 6 nodes of type A: a has 2, b 4, so no cluster holds it; every policy answers ANY.
    for cluster in ("most-free", "best-fit", "topology"):
        result = simulate([job(0, 0, 100, 48, nodes=6)], cluster)
        assert result.jobs["nodes"].item() == "n0;n1;n2;n3;n4;n5" and result.jobs["start_s"].item() == 0.0


def test_gpu_compatibility_an_l_job_only_ever_goes_to_cluster_c():
    # 8 GPUs of type L: only c holds it, though b has more free GPUs.
    for cluster in ("most-free", "best-fit", "topology"):
        assert simulate([job(0, 0, 100, 8, gpu_type="L")], cluster).jobs["nodes"].item() == "n6"


def view(free, fits=(True, True, True), holds=(True, True, True), racks=(1, 1, 1)):
    return ClustersView(("x", "y", "z"), np.array(holds), np.array(fits), np.array(free, np.float64),
                        np.full(3, 64.0), np.array(racks, np.int64))


@pytest.mark.parametrize("key, clusters, chosen", [
    ("most-free", view([16, 4, 8]), 0),                         # most free GPUs
    ("most-free", view([16, 4, 16]), 0),                        # a tie: the lowest index
    ("most-free", view([16, 4, 8], fits=(False, True, True)), 2),  # x does not fit now
    ("best-fit", view([16, 4, 8]), 1),                          # fewest free GPUs
    ("best-fit", view([16, 4, 8], holds=(True, False, True)), 2),  # y is incompatible
    ("topology", view([16, 4, 8], racks=(1, 2, 1)), 2),         # one rack: x or z; best fit of those: z
    ("topology", view([16, 4, 8], racks=(3, 2, 2)), 1),         # two racks: y or z; y has fewer free
    ("best-fit", view([16, 4, 8], fits=(False, False, False)), WAIT),  # compatible, none has room
    ("topology", view([16, 4, 8], holds=(False, False, False)), ANY),  # none could ever hold it
    ("any", view([16, 4, 8]), ANY),
])
def test_each_policy_chooses_as_worked_out_by_hand(key, clusters, chosen):
    assert registry.make("cluster", key).choose(ClusterRequest(gpus=8.0, nodes=2, gpu_type="A"), clusters) == chosen


@st.composite
def fleets_and_jobs(draw):
    n = draw(st.integers(2, 7))
    rows = [dict(region="r", cluster=f"c{draw(st.integers(0, 2))}", node=f"n{i}", gpu_type=draw(st.sampled_from("AB")),
                 gpus=draw(st.sampled_from([4, 8])), cpus=64, memory_gib=512, rack=f"k{draw(st.integers(0, 3))}",
                 tier="reserved") for i in range(n)]
    jobs = []
    for i in range(draw(st.integers(1, 12))):
        width = draw(st.integers(1, 3))
        per_node = 4 if width > 1 else draw(st.sampled_from([1, 2, 4, 8]))
        jobs.append(job(i, draw(st.integers(0, 500)), draw(st.integers(1, 400)), per_node * width, nodes=width,
                        gpu_type=draw(st.sampled_from("AB"))))
    return pd.DataFrame(rows), jobs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=fleets_and_jobs(), key=st.sampled_from(["most-free", "best-fit", "topology"]))
def test_every_started_job_that_a_cluster_can_hold_runs_inside_one_cluster(case, key):
    nodes, jobs = case
    result = simulate(jobs, key, gang="topology", nodes=nodes)
    cluster_of = dict(zip(nodes["node"], nodes["cluster"]))
    for row in result.jobs[result.jobs["started"]].itertuples():
        used = {cluster_of[n] for n in row.nodes.split(";")}
        width = len(row.nodes.split(";"))
        spec = next(j for j in jobs if j["job_id"] == row.job_id)
        fit = nodes[(nodes["gpu_type"] == spec["gpu_type"]) & (nodes["gpus"] >= spec["gpus"] // spec["nodes"])]
        if (fit.groupby("cluster").size() >= width).any():
            assert len(used) == 1, (row.job_id, row.nodes)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=fleets_and_jobs())
def test_the_default_any_is_the_run_without_clusters(case):
    nodes, jobs = case
    with_clusters = simulate(jobs, "any", nodes=nodes)
    without = simulate(jobs, "any", nodes=nodes.drop(columns="cluster"))
    pd.testing.assert_frame_equal(with_clusters.jobs, without.jobs)
    pd.testing.assert_frame_equal(with_clusters.decisions, without.decisions)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(case=fleets_and_jobs(), key=st.sampled_from(["most-free", "best-fit", "topology"]))
def test_the_steps_own_choices_are_the_policys(case, key, monkeypatch):
    """The cluster step answers a job at most one cluster holds itself (`takes_sole_holder`) and chooses a one-node
    job's cluster in its compiled pass (`lowest_by`): the same run as one that asks the policy every time."""
    nodes, jobs = case
    own = simulate(jobs, key, gang="topology", nodes=nodes)
    from engine.core.traits import FAMILY_SETTINGS
    from engine.sim.cycle import cluster_step
    with monkeypatch.context() as patched:  # the step reads the stand-ins: it trusts no promise and asks
        patched.setattr(cluster_step, "setting", lambda policy, family, name: FAMILY_SETTINGS[family][name])
        asked = simulate(jobs, key, gang="topology", nodes=nodes)
    pd.testing.assert_frame_equal(own.jobs, asked.jobs)
    pd.testing.assert_frame_equal(own.decisions, asked.decisions)
