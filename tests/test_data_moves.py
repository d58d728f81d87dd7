"""Data as a first-class citizen (issue 26 item 2) on hand-built fleets: a prefetch that hides a transfer
behind a wait computed by hand, a replica created after the N-th job, compression and incremental sync,
egress of the transfers in cost_usd with the replicas' storage, the [data] contract, and a property test
that residency holds through replication."""
from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job, starts

from engine.analysis.runs.catalogue import keys
from engine.analysis.runs.cost import window_s
from engine.analysis.runs.data_kpis import KPI_KEYS, MONTH_S, data_kpis
from engine.analysis.runs.world_kpis import world_report
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world import datasets
from engine.world.facts import World

NODES = pd.concat([fleet(8), fleet(8, region="far").assign(node="f0")], ignore_index=True)
REGIONS = pd.DataFrame({"region": ["r", "far"], "timezone": ["UTC", "UTC"], "country": ["US", "IE"],
                        "jurisdiction": ["US", "EU"], "egress_usd_per_gb": [0.02, 0.05]})


def scenario(**data) -> Scenario:
    return Scenario.from_dict({"name": "t", "data": {"transfer_gbps": 10, **data}})


def with_data(row: dict, location: str, gb: float, dataset: str | None = None) -> dict:
    return {**row, "data_location": location, "data_size_gb": gb, **({"dataset": dataset} if dataset else {})}


def queue_behind_a_long_job(gb: float, first_s: float = 1000.0) -> pd.DataFrame:
    """r's one 8-GPU node is held by j0 (its data at home) from 0 to `first_s`; j1 (data in "far", `gb` GB)
    arrives at 1 s, j2 (data at home) at 100 s, each asking for the whole node for 1000 s."""
    return pd.DataFrame([with_data(job(0, 0, first_s, 8), "r", 10.0), with_data(job(1, 1, 1000, 8), "far", gb),
                         with_data(job(2, 100, 1000, 8), "r", 10.0)])


def test_prefetch_hides_the_transfer_behind_the_wait():
    # 450 GB at 10 Gbit/s: 360 s. With prefetch j1 queues at 1 s while its data moves; the data is there at
    # 361, long before j1's turn at 1000 (j0 ends): the whole transfer is hidden, and every job starts when
    # it would if j1's data were local
    jobs = queue_behind_a_long_job(450.0)
    ahead = run_scenario(scenario(prefetch=True), jobs, NODES)
    assert starts(ahead) == [0.0, 1000.0, 2000.0]
    local = jobs.assign(data_location="r")
    assert starts(run_scenario(scenario(prefetch=True), local, NODES)) == starts(ahead)
    assert ahead.transfers[["job_id", "kind", "start_s", "ready_s", "waited_s"]].values.tolist() == [
        ["j1", "full", 1.0, 361.0, 0.0]]
    assert "transferring-data" in set(ahead.decisions["decision"])
    assert "waiting-for-data" not in set(ahead.decisions["decision"])
    kpis = data_kpis(ahead, REGIONS, scenario(prefetch=True).data)
    assert kpis["data_hidden_hours"] == pytest.approx(360 / 3600) and kpis["data_wait_hours"] == 0.0


def test_without_prefetch_a_job_out_of_the_queue_while_its_data_moves_loses_its_turn():
    # j0 ends at 200, during j1's transfer (1-361 s). Without prefetch j1 is not queued until 361, so j2
    # (queued at 100) takes the node at 200 and j1 starts at 1200, held out of the queue for the whole 360 s.
    # With prefetch j1 is first in line at 200 and waits for its data ("waiting-for-data") until 361: 161 s
    # held, the other 199 s of the transfer hidden behind j0; j2 then starts at 1361
    jobs = queue_behind_a_long_job(450.0, first_s=200.0)
    plain = run_scenario(scenario(incremental=True), jobs, NODES)
    assert starts(plain) == [0.0, 1200.0, 200.0] and plain.transfers["waited_s"].tolist() == [360.0]
    ahead = run_scenario(scenario(prefetch=True), jobs, NODES)
    assert starts(ahead) == [0.0, 361.0, 1361.0]
    held = ahead.decisions[ahead.decisions["decision"] == "waiting-for-data"]
    assert held[["time_s", "job_id"]].values.tolist() == [[200.0, "j1"]]
    kpis = data_kpis(ahead, REGIONS, scenario(prefetch=True).data)
    assert kpis["data_wait_hours"] == pytest.approx(161 / 3600)
    assert kpis["data_hidden_hours"] == pytest.approx(199 / 3600)


def test_a_transfer_longer_than_the_wait_holds_the_job_for_the_rest_only():
    # 2250 GB: 1800 s, there at 1801. j1's turn comes at 1000 (j0 ends); it waits for its data until 1801
    # ("waiting-for-data", its reason), 801 s, of which 999 s of the transfer were hidden in its queue wait
    ahead = run_scenario(scenario(prefetch=True), queue_behind_a_long_job(2250.0), NODES)
    assert starts(ahead) == [0.0, 1801.0, 2801.0]
    held = ahead.decisions[ahead.decisions["decision"] == "waiting-for-data"]
    assert held[["time_s", "job_id"]].values.tolist() == [[1000.0, "j1"]]
    assert ahead.transfers["waited_s"].tolist() == [801.0]
    kpis = data_kpis(ahead, REGIONS, scenario(prefetch=True).data)
    assert kpis["data_wait_hours"] == pytest.approx(801 / 3600)
    assert kpis["data_hidden_hours"] == pytest.approx(999 / 3600)


def repeat_jobs(n: int, gb: float = 100.0) -> pd.DataFrame:
    """n jobs in r, one an hour, each reading `gb` GB of dataset "corpus" (its home "far"), 600 s each."""
    return pd.DataFrame([with_data(job(i, 3600 * i, 600, 1), "far", gb, "corpus") for i in range(n)])


def test_a_replica_is_made_after_the_nth_job_and_read_from_then_on():
    # replicate_after = 3: j0, j1 move their 100 GB (80 s each at 10 Gbit/s); j2 is the third job in r that
    # needs "corpus": the whole dataset (its largest read: 400 GB for j2) is copied, 320 s, and j2 waits
    # for the copy; j3 and j4 read the replica, moving nothing
    jobs = repeat_jobs(5).assign(data_size_gb=[100.0, 100.0, 400.0, 100.0, 100.0])
    result = run_scenario(scenario(replicate_after=3), jobs, NODES, World(regions=REGIONS))
    moves = result.transfers
    assert moves["kind"].tolist() == ["full", "full", "replica", "replica-hit", "replica-hit"]
    assert moves["moved_gb"].tolist() == [100.0, 100.0, 400.0, 0.0, 0.0]
    assert starts(result) == [80.0, 3680.0, 7520.0, 10800.0, 14400.0]
    table = result.datasets.set_index("dataset")
    assert table.loc["corpus", "replicas"] == "r" and float(table.loc["corpus", "replica_s"]) == 7520.0
    assert table.loc["corpus", "size_gb"] == 400.0 and table.loc["corpus", "home_region"] == "far"
    kpis = data_kpis(result, REGIONS, scenario(replicate_after=3).data)
    assert kpis["replicas_created"] == 1.0
    assert kpis["replica_egress_usd"] == pytest.approx(400 * 0.05)            # the copy out of "far"
    assert kpis["replica_egress_saved_usd"] == pytest.approx(2 * 100 * 0.05)  # what j3 and j4 did not move
    one_before = run_scenario(scenario(replicate_after=4), jobs, NODES)
    assert one_before.transfers["kind"].tolist() == ["full", "full", "full", "replica", "replica-hit"]


def test_egress_of_the_transfers_and_the_replica_storage_are_in_cost_usd():
    jobs = repeat_jobs(5)
    model = scenario(replicate_after=3, storage_usd_per_gb_month=0.03)
    result = run_scenario(model, jobs, NODES, World(regions=REGIONS))
    report = world_report(result, NODES, pd.DataFrame(), REGIONS, pd.DataFrame(), jobs=jobs, data=model.data)
    # 100 + 100 + the 100 GB copy, out of "far" at $0.05; the copy, complete at 7200 + 80 s, is stored until
    # the window's end at $0.03 per GB-month
    storage = 100 * 0.03 * (window_s(result) - 7280) / MONTH_S
    assert report.kpis["egress_usd"] == pytest.approx(300 * 0.05)
    assert report.kpis["replica_storage_usd"] == pytest.approx(storage)
    assert report.kpis["cost_usd"] == pytest.approx(report.cost.spend["usd"].sum() + 15.0 + storage)
    assert report.cost.totals["usd_storage"] == pytest.approx(storage)
    assert set(KPI_KEYS) <= set(report.kpis) and keys("data") == set(KPI_KEYS)


def test_the_transfers_and_datasets_tables_are_exported(tmp_path):
    result = run_scenario(scenario(replicate_after=1), repeat_jobs(2), NODES)
    names = {path.name for path in result.to_csv(tmp_path)}
    assert {"transfers.csv", "datasets.csv"} <= names
    assert pd.read_csv(tmp_path / "datasets.csv")["replicas"].tolist() == ["r"]


def test_compression_and_incremental_sync_move_less():
    # ratio 2 and 1 CPU-s per GB: j0 sends 50 of its 100 GB in 100 s of CPU + 40 s on the wire; each later
    # job on the same dataset in r moves only its changed 10 %: 5 GB sent, 10 s CPU + 4 s
    result = run_scenario(scenario(compression_ratio=2.0, compress_s_per_gb=1.0, incremental=True,
                                   changed_fraction=0.1), repeat_jobs(3), NODES)
    moves = result.transfers
    assert moves["kind"].tolist() == ["full", "incremental", "incremental"]
    assert moves["moved_gb"].tolist() == pytest.approx([50.0, 5.0, 5.0])
    assert moves["cpu_s"].tolist() == pytest.approx([100.0, 10.0, 10.0])
    assert starts(result) == pytest.approx([140.0, 3614.0, 7214.0])


def test_without_data_mechanisms_the_run_keeps_its_plain_transfer_and_has_no_tables():
    result = run_scenario(scenario(), queue_behind_a_long_job(450.0, first_s=200.0), NODES)
    assert result.transfers is None and result.datasets is None
    assert starts(result) == [0.0, 1200.0, 200.0]


def test_datasets_are_derived_from_project_and_data_location_when_jobs_name_none():
    jobs = pd.DataFrame({"job_id": ["a", "b", "c", "d", "e"], "project": ["p", "p", "", "p", "q"],
                         "data_location": ["x", "x", "x", "y", None], "data_size_gb": [10.0, 30.0, 5.0, 1.0, 9.0]})
    assert datasets.dataset_ids(jobs).tolist() == ["p@x", "p@x", "c@x", "p@y", None]
    table = datasets.table(jobs)
    assert table.values.tolist() == [["c@x", 5.0, "x", 1, ""], ["p@x", 30.0, "x", 2, ""], ["p@y", 1.0, "y", 1, ""]]
    named = jobs.assign(dataset=["shared", "", "shared", None, "z"])
    assert datasets.dataset_ids(named).tolist() == ["shared", "p@x", "shared", "p@y", None]


@pytest.mark.parametrize("data, message", [
    ({"replicate_after": -1}, r"replicate_after must be from 0 to .* \(jobs\)"),
    ({"replicate_after": 2.5}, "replicate_after must be a whole number"),
    ({"compression_ratio": 0.5}, r"compression_ratio must be from 1 to 1,000 \(x\)"),
    ({"changed_fraction": 1.5}, r"changed_fraction must be from 0 to 1 \(fraction\)"),
    ({"transfer_gbps": float("inf")}, r"transfer_gbps must be a finite number \(Gbit/s\)"),
    ({"storage_usd_per_gb_month": True}, "storage_usd_per_gb_month must be a number"),
    ({"prefetch": 1}, "prefetch must be true or false"),
    ({"gbps": 1}, "unknown \\[data\\] key gbps; valid: changed_fraction, compress_s_per_gb"),
])
def test_the_data_table_is_held_to_the_scenario_contract(data, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_dict({"name": "x", "data": data}, source="x.toml")


TAGS = st.sampled_from([None, "EU", "US"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tags=st.lists(TAGS, min_size=1, max_size=12), homes=st.lists(st.sampled_from(["r", "far", "b"]), min_size=12,
                                                                   max_size=12),
       routing=st.sampled_from(["home-only", "overflow", "follow-the-sun", "cheapest"]),
       after=st.integers(1, 3))
def test_replicas_never_go_where_residency_forbids(tags, homes, routing, after):
    # r (US) and b (EU) hold one 1-GPU node each, far (EU) the data: jobs of two datasets, EU- or US-tagged or
    # not, submitted together so that routers overflow them; a replica must be allowed for every reader
    nodes = pd.concat([fleet(1), fleet(1, region="b").assign(node="b0"), fleet(8, region="far").assign(node="f0")],
                      ignore_index=True)
    regions = pd.concat([REGIONS, pd.DataFrame({"region": ["b"], "timezone": ["UTC"], "country": ["DE"],
                                                "jurisdiction": ["EU"], "egress_usd_per_gb": [0.02]})])
    jobs = pd.DataFrame([{**with_data(job(i, i, 600, 1, region=homes[i]), "far", 50.0, f"d{i % 2}"), "residency": tag}
                         for i, tag in enumerate(tags)])
    spec = {"name": "p", "policies": {"routing": {"key": routing}}, "data": {"replicate_after": after}}
    result = run_scenario(Scenario.from_dict(spec), jobs, nodes, World(regions=regions))
    readers = jobs.groupby("dataset")["residency"].agg(lambda t: {x for x in t if isinstance(x, str) and x})
    jurisdiction = dict(zip(regions["region"], regions["jurisdiction"]))
    for row in result.datasets.itertuples():
        for region in filter(None, row.replicas.split(";")):
            assert all(jurisdiction[region] == tag for tag in readers[row.dataset]), (row.dataset, region)
