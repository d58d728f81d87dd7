"""The [clusters] split (engine.scenario.clusters) and the by-cluster table (engine.analysis.runs.clusters),
on hand-built fleets with figures worked out by hand."""
import pandas as pd
import pytest
from sim_helpers import job
from test_cluster_step import hand_fleet, simulate

from engine.analysis.runs.catalogue import keys
from engine.analysis.runs.clusters import COLUMNS, by_cluster
from engine.analysis.runs.held import finished_jobs, window_end_s
from engine.analysis.runs.sim_metrics import kpis
from engine.core.errors import ScenarioError
from engine.scenario.clusters import ClusterSplit, parse_clusters, split_clusters
from engine.scenario.spec import Scenario


def test_racks_per_cluster_splits_each_recorded_cluster_by_its_sorted_racks():
    fleet = pd.DataFrame({"region": ["r", "r", "r", "r", "r", "s"], "cluster": ["x", "x", "x", "x", None, None],
                          "node": list("abcdef"), "rack": ["k2", "k0", "k1", "k0", None, "q"]})
    split = split_clusters(fleet, ClusterSplit(racks_per_cluster=2))
    # x's racks k0, k1, k2: k0 and k1 form x-c0, k2 x-c1; e (no cluster) is in r's own cluster, f in s's
    assert split["cluster"].tolist() == ["x-c1", "x-c0", "x-c0", "x-c0", "r-c0", "s-c0"]
    assert split_clusters(fleet, ClusterSplit()) is fleet


@pytest.mark.parametrize("table, message", [
    ({"racks_per_cluster": -1}, "racks_per_cluster must be from 0 to 10,000 (racks)"),
    ({"racks_per_cluster": 1.5}, "must be a whole number"),
    ({"racks_per_clusters": 2}, "unknown [clusters] key racks_per_clusters; valid: racks_per_cluster"),
    ([], "[clusters] must be a table"),
])
def test_a_bad_clusters_table_is_refused_with_its_key_and_range(table, message):
    with pytest.raises(ScenarioError) as error:
        parse_clusters(table, "s.toml")
    assert message in str(error.value) and "s.toml" in str(error.value)


def test_a_scenario_reads_clusters_and_applies_the_split_to_the_fleet():
    scenario = Scenario.from_dict({"clusters": {"racks_per_cluster": 1}, "policies": {"cluster": "topology"}})
    assert scenario.clusters == ClusterSplit(1) and scenario.policies["cluster"] == ("topology", {})
    _, fleet = scenario.apply(pd.DataFrame([job(0, 0, 10, 1)]), hand_fleet())
    assert fleet.groupby("cluster").size().to_dict() == {"a-c0": 1, "a-c1": 1, "b-c0": 2, "b-c1": 2, "c-c0": 2}


def test_the_by_cluster_table_by_hand():
    # most-free: job 0 (8 GPUs, 0-100 s) on n1 in b; job 1 (4-node gang, 32 GPUs) waits for b and runs
    # from 100 s on n1, n3, n4, n5 (tests/test_cluster_step.py). Window end h: the run's own.
    result = simulate([job(0, 0, 100, 8), job(1, 1, 1000, 32, nodes=4)], "most-free")
    h = window_end_s(result, finished_jobs(result.jobs))
    table = by_cluster(result).set_index("cluster")
    assert list(by_cluster(result).columns) == COLUMNS
    assert table["gpus"].to_dict() == {"a": 16, "b": 32, "c": 16}
    b_gpu_s = 8 * min(100, h) + 32 * (min(1100, h) - 100)
    assert table.loc["b", "cluster_gpu_hours"] == pytest.approx(b_gpu_s / 3600)
    assert table.loc["b", "cluster_utilization"] == pytest.approx(b_gpu_s / (32 * h))
    assert table.loc["a", "cluster_gpu_hours"] == 0 and table.loc["c", "cluster_utilization"] == 0
    assert table["cluster_jobs"].to_dict() == {"a": 0, "b": 2, "c": 0}
    assert table.loc["b", "cluster_wait_mean_s"] == pytest.approx((0 + 99) / 2)
    assert table["cluster_gpu_hours"].sum() == pytest.approx(kpis(result)["utilization"] * 64 * h / 3600)


def test_a_gang_across_clusters_splits_its_gpu_hours_by_its_nodes_gpus():
    # any + lowest-index: a 2-node gang on n0 (a) and n1 (b) for 360 s: 8 GPUs x 0.1 h on each.
    result = simulate([job(0, 0, 360, 16, nodes=2)], "any")
    table = by_cluster(result).set_index("cluster")
    h = window_end_s(result, finished_jobs(result.jobs))
    assert table.loc["a", "cluster_gpu_hours"] == pytest.approx(8 * min(360, h) / 3600)
    assert table.loc["b", "cluster_gpu_hours"] == pytest.approx(8 * min(360, h) / 3600)
    assert table["cluster_jobs"].to_dict() == {"a": 1, "b": 0, "c": 0}  # where its first node is


def test_the_catalogue_names_the_tables_measures():
    assert keys("cluster") == set(COLUMNS) - {"region", "cluster", "gpus"}


def test_node_names_split_as_pandas_explode_does():
    from engine.analysis.runs.held import node_names

    listed = pd.Series(["a;b;c", "", "d", "e;f"])
    piece, names = node_names(listed)
    exploded = listed.str.split(";").explode()
    assert piece.tolist() == exploded.index.tolist() == [0, 0, 0, 1, 2, 3, 3]
    assert names.tolist() == exploded.tolist()
    assert node_names(pd.Series([], dtype=object))[0].tolist() == []


def test_node_positions_look_up_region_and_name_pairs():
    """The same positions as an index of joined "region|node" keys, a name known in another region
    only, an unknown region and a name with the separator in it included."""
    import numpy as np

    from engine.analysis.runs.held import node_positions

    node_region = np.array(["eu", "eu", "us", "us", "eu"], dtype=object)
    node_name = np.array(["n1", "n2", "n1", "x|y", "n3"], dtype=object)
    piece_region = np.array(["us", "eu", "eu", "us", "ap", "eu", "us"], dtype=object)
    names = np.array(["n1", "n1", "n3", "x|y", "n1", "nope", "n2"], dtype=object)
    code, regions = pd.factorize(piece_region)
    at = node_positions(code, list(regions), names, node_region, node_name)
    assert at.tolist() == [2, 0, 4, 3, -1, -1, -1]
    joined = pd.Index(node_region + "\x1f" + node_name).get_indexer(piece_region + "\x1f" + names)
    assert at.tolist() == joined.tolist()
    assert node_positions(code[:0], list(regions), names[:0], node_region, node_name).tolist() == []


def test_piece_positions_are_node_names_then_node_positions():
    """Looking up each distinct (region, node list) once gives every piece the positions the names
    would have one by one: repeated lists, an empty list, an unknown name and a list named in two regions."""
    import numpy as np

    from engine.analysis.runs.held import node_names, node_positions, piece_positions

    node_region = np.array(["eu", "eu", "us", "us"], dtype=object)
    node_name = np.array(["n1", "n2", "n1", "n3"], dtype=object)
    region = pd.Series(["eu", "us", "eu", "us", "eu", "ap", "eu"], dtype="str")
    nodes = pd.Series(["n1;n2", "n1;n3", "n1;n2", "", "n2;nope;n1", "n1", "n1;n3"], dtype="str")
    piece, at = piece_positions(region, nodes, node_region, node_name)
    one_by_one, names = node_names(nodes)
    assert piece.tolist() == one_by_one.tolist() == [0, 0, 1, 1, 2, 2, 3, 4, 4, 4, 5, 6, 6]
    code, regions = pd.factorize(region)
    assert at.tolist() == node_positions(code[one_by_one], list(regions), names, node_region, node_name).tolist()
    assert at.tolist() == [0, 1, 2, 3, 0, 1, -1, 1, -1, 0, -1, 0, -1]
    empty = pd.Series([], dtype="str")
    assert [a.tolist() for a in piece_positions(empty, empty, node_region, node_name)] == [[], []]
