"""The interconnect model (issue 27, item 2): a multi-node job runs slower when its nodes span racks
or clusters, by its class's share of communication (engine.world.interconnect), only under an
[interconnect] table; without one nothing changes."""
from dataclasses import fields

import pandas as pd
import pytest
from sim_helpers import fleet, job, outage_table

from engine.core.bounds import bound_of
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.interconnect import CLUSTER, LEVELS, NODE, RACK, REGION, Interconnect

ON = Interconnect(enabled=True)


def four_nodes(racks=("k0", "k0", "k1", "k1"), clusters=("c", "c", "c", "c")):
    nodes = fleet(8, 8, 8, 8)
    nodes["rack"], nodes["cluster"] = list(racks), list(clusters)
    return nodes


def one_job(nodes, interconnect=None, gang="lowest-index", run_s=1000, width=2, **kind):
    spec = {"name": "t", "policies": {"gang": {"key": gang}}}
    if interconnect is not None:
        spec["interconnect"] = interconnect
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame([job(0, 0, run_s, 8 * width, nodes=width, **kind)]),
                        nodes)


def test_a_two_node_training_job_in_one_rack_runs_its_recorded_time_and_across_racks_1_3x():
    # Defaults: training spends 0.3 of its time communicating at 400 Gbit/s per GPU in a rack;
    # across racks 200 Gbit/s: 0.7 + 0.3 x 400 / 200 = 1.3, so 1000 s of work run 1300 s.
    same = one_job(four_nodes(racks=("k0", "k0", "k1", "k1")), {})
    across = one_job(four_nodes(racks=("k0", "k1", "k0", "k1")), {})
    assert (same.jobs["end_s"].item(), same.jobs["nodes"].item()) == (1000.0, "n0;n1")
    assert (across.jobs["end_s"].item(), across.jobs["nodes"].item()) == (pytest.approx(1300.0), "n0;n1")
    row = across.interconnect.iloc[0]
    assert (row.level, row.slowdown, row.extra_s, row.extra_gpu_hours) == (
        "cluster", pytest.approx(1.3), pytest.approx(300.0), pytest.approx(16 * 300 / 3600))
    assert same.interconnect["level"].tolist() == ["rack"]


def test_across_clusters_a_training_job_runs_3_1x_and_set_bandwidths_give_their_own_ratio():
    nodes = four_nodes(racks=("k0", "k1", "k2", "k3"), clusters=("c0", "c1", "c0", "c1"))
    assert one_job(nodes, {}).jobs["end_s"].item() == pytest.approx(3100.0)  # 0.7 + 0.3 x 400 / 50
    # 100 Gbit/s across clusters and a 0.5 share: 0.5 + 0.5 x 400 / 100 = 2.5
    given = one_job(nodes, {"cross_cluster_gbps": 100, "training_comm_fraction": 0.5})
    assert given.jobs["end_s"].item() == pytest.approx(2500.0)
    assert given.interconnect["level"].tolist() == ["region"]


def test_the_slowdown_never_falls_as_the_nodes_spread_for_any_class_and_bandwidths():
    for rack, cluster, cross in ((400, 400, 400), (400, 200, 50), (800, 100, 100), (25, 12.5, 1)):
        for share in (0.0, 0.05, 0.3, 0.7, 1.0):
            model = Interconnect(True, rack, cluster, cross, training_comm_fraction=share)
            pace = [model.slowdown(level, model.comm_fraction("training")) for level in range(len(LEVELS))]
            assert pace[NODE] == pace[RACK] == 1.0
            assert pace == sorted(pace), (rack, cluster, cross, share, pace)
            assert pace[REGION] == pytest.approx(1 - share + share * rack / cross)


def test_each_class_has_its_sensitivity_training_most_batch_little_inference_none():
    nodes = four_nodes(racks=("k0", "k1", "k0", "k1"))  # lowest-index spreads over two racks
    ends = {c: one_job(nodes, {}, workload_class=c).jobs["end_s"].item()
            for c in ("training", "hpo", "batch", "development", "inference", "unknown")}
    assert ends == {"training": pytest.approx(1300.0), "hpo": pytest.approx(1300.0), "batch": pytest.approx(1050.0),
                    "development": pytest.approx(1050.0), "inference": 1000.0, "unknown": pytest.approx(1050.0)}
    assert one_job(nodes, {"inference_comm_fraction": 0.2}, workload_class="inference").jobs["end_s"].item() \
        == pytest.approx(1200.0)


def test_one_node_jobs_are_never_slowed():
    nodes = four_nodes(racks=("k0", "k1", "k2", "k3"), clusters=("c0", "c1", "c2", "c3"))
    result = one_job(nodes, {}, width=1)
    assert result.jobs["end_s"].item() == 1000.0 and len(result.interconnect) == 0


def test_without_the_table_or_with_enabled_false_nothing_changes():
    nodes = four_nodes(racks=("k0", "k1", "k2", "k3"), clusters=("c0", "c1", "c0", "c1"))
    plain, off = one_job(nodes), one_job(nodes, {"enabled": False, "cross_cluster_gbps": 1})
    assert Scenario.from_dict({"name": "t"}).interconnect == Interconnect() and not Interconnect().enabled
    assert plain.interconnect is None and off.interconnect is None
    pd.testing.assert_frame_equal(plain.jobs, off.jobs)
    assert plain.jobs["end_s"].item() == 1000.0


def test_topology_aware_gangs_finish_sooner_than_lowest_index_ones_under_the_interconnect():
    # n0, n2 in rack k0; n1, n3 in k1. Lowest-index takes n0, n1 (two racks: 1300 s); the topology
    # policy keeps the gang in one rack (1000 s). Without the interconnect both take 1000 s.
    nodes = four_nodes(racks=("k0", "k1", "k0", "k1"))
    assert one_job(nodes, {}, gang="lowest-index").jobs["end_s"].item() == pytest.approx(1300.0)
    kept = one_job(nodes, {}, gang="topology")
    assert (kept.jobs["end_s"].item(), kept.jobs["nodes"].item()) == (1000.0, "n0;n2")
    assert one_job(nodes, gang="lowest-index").jobs["end_s"].item() == 1000.0


def test_an_evicted_spread_job_keeps_the_work_its_checkpoints_saved_at_its_slower_pace():
    # Training on n0 + n1 (two racks, 1.3x) from 0; its queue checkpoints every 130 s; the region is
    # down 500-600 s: the checkpoint at 390 s of running kept 390 / 1.3 = 300 s of the 1000 s of work.
    # Back at 600 on the same nodes, the 700 s left run 910 s: it ends at 1510.
    spec = {"name": "t", "interconnect": {}, "outage": outage_table("r", 500, 100),
            "queue": [{"name": "all", "checkpoint_s": 130}]}
    result = run_scenario(Scenario.from_dict(spec), pd.DataFrame([job(0, 0, 1000, 16, nodes=2)]),
                          four_nodes(racks=("k0", "k1", "k0", "k1")))
    assert result.jobs["end_s"].item() == pytest.approx(1510.0)
    assert result.interconnect["start_s"].tolist() == [0.0, 600.0]
    assert result.interconnect["extra_s"].tolist() == pytest.approx([300.0, 210.0])


@pytest.mark.parametrize("table, message", [
    ({"cluster_gbps": 500}, "must not rise with the spread"),
    ({"training_comm_fraction": 1.5}, "training_comm_fraction must be from 0 to 1 (fraction)"),
    ({"rack_gbps": 0}, "rack_gbps must be from 0.001"),
    ({"rack_gbps": float("inf")}, "rack_gbps must be a finite number"),
    ({"speed": 2}, "unknown [interconnect] key speed"),
    ({"enabled": "yes"}, "enabled must be true or false"),
    ({"batch_comm_fraction": True}, "batch_comm_fraction must be a number"),
])
def test_a_bad_table_is_refused_with_what_was_expected(table, message):
    with pytest.raises(ScenarioError) as error:
        Scenario.from_dict({"name": "t", "interconnect": table})
    assert message in str(error.value)


def test_every_number_of_the_model_has_a_unit_and_range_in_the_scenario_contract():
    numeric = [f for f in fields(Interconnect) if f.name != "enabled"]
    assert all(bound_of(f.name, float, f.metadata) is not None for f in numeric)
    defaults = Interconnect(enabled=True)
    assert all(bound_of(f.name, float, f.metadata).check(f.name, getattr(defaults, f.name)) is None for f in numeric)
    assert (RACK, CLUSTER) == (1, 2)
