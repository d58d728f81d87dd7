"""Region roles ([roles], engine.world.roles): edge regions for inference, overflow and disaster recovery
masks, archived checkpoints, on hand-built fleets with the expected figures worked out in the comments."""
from __future__ import annotations

import pandas as pd
import pytest

from engine.analysis.runs.roles_kpis import checkpoint_storage_usd, roles_kpis
from engine.analysis.runs.world_kpis import world_report
from engine.core.errors import ScenarioError
from engine.scenario.edits import FleetEdit, edit_fleet, like_world
from engine.scenario.spec import Scenario
from engine.service.compare import run_one, with_world
from engine.service.report.tables import region_figures
from engine.service.run import prepared, run_scenario
from engine.world.facts import World
from engine.world.roles import RoleMasks, Roles
from tests.sim_helpers import fleet, job, outage_table

LATENCY = {"slo_ms": 100, "ms": {"h:e": 10, "h:o": 50}}


def _regions(*names: str, egress=None) -> pd.DataFrame:
    return pd.DataFrame({"region": list(names), "timezone": "UTC", "country": None, "jurisdiction": "X",
                         "egress_usd_per_gb": egress or [0.0] * len(names)})


def _edge_run(rows, nodes, roles=None, routing="latency-aware"):
    spec = {"name": "t", "policies": {"routing": {"key": routing}}, "latency": LATENCY,
            "roles": roles if roles is not None else {"edge": ["e"]}}
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(rows), nodes, World(regions=_regions("h", "e", "o")))


def _three(home=(8,), edge=(1,), other=(8,)) -> pd.DataFrame:
    parts = [fleet(*home, region="h").assign(node=lambda f: "h" + f["node"]),
             fleet(*edge, region="e").assign(node=lambda f: "e" + f["node"]),
             fleet(*other, region="o").assign(node=lambda f: "o" + f["node"])]
    return pd.concat(parts, ignore_index=True)


def test_edge_is_chosen_first_for_inference_even_with_room_at_home():
    # h has 8 free GPUs, e (10 ms from h, within the 100 ms SLO) has 1: the inference job goes to e.
    result = _edge_run([job(0, 0, 100, 1, region="h", workload_class="inference")], _three())
    assert result.jobs["region"].tolist() == ["e"]
    assert result.jobs["latency_ms"].tolist() == [10.0]


def test_edge_is_never_chosen_for_training_even_when_home_is_full():
    # j0 fills h; j1 (training, flexible) overflows under latency-aware to the region with the most free
    # GPUs: e has 8 free, o has 4, but e is an edge location, so o.
    rows = [job(0, 0, 1000, 8, region="h"), job(1, 10, 100, 4, region="h")]
    result = _edge_run(rows, _three(edge=(8,), other=(4,)))
    assert result.jobs["region"].tolist() == ["h", "o"]


def test_inference_overflows_home_when_the_edge_is_full():
    # e has one GPU. j0 (t=0) takes it. j1 (t=0 too, routed before any pass: e's GPU is free but j0 is
    # queued for it, free - queued = 0) and j2 (t=5, e busy) stay home.
    rows = [job(i, t, 1000, 1, region="h", workload_class="inference") for i, t in enumerate((0, 0, 5))]
    result = _edge_run(rows, _three())
    assert result.jobs["region"].tolist() == ["e", "h", "h"]
    assert result.jobs["wait_s"].tolist() == [0.0, 0.0, 0.0]


def test_without_edge_regions_latency_aware_keeps_inference_home():
    rows = [job(0, 0, 100, 1, region="h", workload_class="inference")]
    assert _edge_run(rows, _three(), roles={"primary": ["h"]}).jobs["region"].tolist() == ["h"]


def test_overflow_and_disaster_recovery_masks():
    masks = RoleMasks(Roles(overflow=("o",), disaster_recovery=("d",), edge=("e",)), ["h", "o", "d", "e"])
    assert masks.may_go(0, False, False).tolist() == [True, True, False, False]   # home and overflow
    assert masks.may_go(0, True, False).tolist() == [True, True, False, True]     # inference: edge too
    assert masks.may_go(0, False, True).tolist() == [True, False, True, False]    # home down: recovery
    assert RoleMasks(Roles(edge=("e",)), ["h", "o", "e"]).may_go(0, False, False).tolist() == [True, True, False]


def test_work_overflows_only_to_the_overflow_regions():
    # h full; j1 may move. Without roles overflow picks the most free GPUs (e: 8); with overflow = ["o"]
    # it may only go to o (4 free).
    rows = [job(0, 0, 1000, 8, region="h"), job(1, 10, 100, 4, region="h")]
    nodes = _three(edge=(8,), other=(4,))
    free = _edge_run(rows, nodes, roles={"primary": ["h"]}, routing="overflow")
    assert free.jobs["region"].tolist() == ["h", "e"]
    masked = _edge_run(rows, nodes, roles={"overflow": ["o"]}, routing="overflow")
    assert masked.jobs["region"].tolist() == ["h", "o"]


def test_disaster_recovery_regions_take_the_work_while_home_is_down():
    # h is down from 0 to 500 s. e has 8 GPUs, o 16: overflow alone sends j0 to o (the most free); with e
    # as the disaster recovery region (o the overflow one), to e; once h is back, j1 (t=600) stays home.
    rows = [job(0, 10, 100, 4, region="h"), job(1, 600, 100, 4, region="h")]
    spec = {"name": "t", "policies": {"routing": {"key": "overflow"}}, "outage": outage_table("h", 0, 500)}
    nodes = _three(edge=(8,), other=(8, 8))
    alone = run_scenario(Scenario.from_dict({**spec, "roles": {"primary": ["h"]}}), pd.DataFrame(rows), nodes)
    assert alone.jobs["region"].tolist() == ["o", "h"]
    planned = {**spec, "roles": {"overflow": ["o"], "disaster_recovery": ["e"]}}
    result = run_scenario(Scenario.from_dict(planned), pd.DataFrame(rows), nodes)
    assert result.jobs["region"].tolist() == ["e", "h"]


def test_an_edge_region_is_added_like_another():
    nodes = fleet(4, 4, region="us").assign(node=["u0", "u1"])
    edited = edit_fleet(nodes, FleetEdit("edge", "A", 6, None, like="us"))
    added = edited[edited["region"] == "edge"]
    # 6 GPUs in nodes of 4 (the like region's last node): 2 nodes, in a cluster and rack of their own
    assert added["node"].tolist() == ["edge-a-n0000", "edge-a-n0001"]
    assert set(added["cluster"]) == {"edge-a"} and set(added["rack"]) == {"edge-a-r000"}
    world = like_world(World(regions=_regions("us"), prices=pd.DataFrame(
        {"region": ["us"], "gpu_type": ["A"], "tier": ["reserved"], "usd_per_gpu_hour": [2.0]})),
        (FleetEdit("edge", "A", 6, None, like="us"),))
    assert world.regions["region"].tolist() == ["us", "edge"]
    assert world.prices.loc[world.prices["region"] == "edge", "usd_per_gpu_hour"].tolist() == [2.0]


@pytest.mark.parametrize("roles, message", [
    ({"edge": "e"}, "[roles] edge must be a list of region names"),
    ({"checkpoints": "tape"}, "[roles] checkpoints 'tape' is unknown; choose from local, archive"),
    ({"checkpoints": "archive"}, "needs an archive region"),
    ({"restore_delay_s": -1}, "[roles] restore_delay_s must be from 0"),
    ({"vault": ["x"]}, "unknown [roles] key vault"),
])
def test_bad_roles_are_refused_with_the_key_named(roles, message):
    with pytest.raises(ScenarioError) as error:
        Scenario.from_dict({"name": "t", "roles": roles}, source="s.toml")
    assert message in str(error.value)


def test_a_role_region_must_be_in_the_fleet():
    scenario = Scenario.from_dict({"name": "t", "roles": {"edge": ["nowhere"]}})
    with pytest.raises(ScenarioError, match="\\[roles\\] edge region 'nowhere' is not in the fleet"):
        scenario.world(World(), fleet(8, region="h"))


def test_like_needs_add_gpus():
    with pytest.raises(ScenarioError, match="like goes with add_gpus only"):
        Scenario.from_dict({"name": "t", "fleet": [{"region": "e", "gpu_type": "A", "remove_gpus": 8, "like": "h"}]})


ARCHIVE = {"archive": ["arc"], "checkpoints": "archive", "storage_usd_per_gb_month": 0.01, "restore_delay_s": 3600,
           "checkpoint_gb_per_gpu": 10}


def _archived():
    # r: one 8-GPU node; arc: an archive region (a node of another type, so nothing runs there).
    nodes = pd.concat([fleet(8, region="r"), fleet(1, gpu_type="S", region="arc").assign(node="s0")], ignore_index=True)
    rows = [job(0, 0, 10000, 8), job(1, 5400, 1000, 8, workload_class="development")]
    spec = {"name": "t", "policies": {"preemption": {"key": "priority", "min_runtime_s": 0.0, "only_preemptible": False}},
            "data": {"transfer_gbps": 8}, "roles": ARCHIVE}
    scenario = Scenario.from_dict(spec)
    world = World(regions=_regions("r", "arc", egress=[0.1, 0.05]))
    return scenario, run_scenario(scenario, pd.DataFrame(rows), nodes, world), nodes, world, rows


def test_an_archived_checkpoint_is_stored_then_restored_after_the_delay():
    # j0 (training, standard queue: a checkpoint every 3600 s) runs from 0; j1 (development, express)
    # evicts it at 5400: 3600 s of work kept, 1800 lost, 6400 left. Its checkpoint: 8 GPUs x 10 GB = 80 GB,
    # written to arc at 8 Gbit/s: 80 x 8 / 8 = 80 s, stored from 5480. j1 ends at 6400, j0's turn comes:
    # it asks, ready at max(6400, 5480) + 3600 + 80 s back = 10080; runs 6400 s to 16480.
    _, result, *_ = _archived()
    assert result.segments[["job_id", "start_s", "end_s"]].values.tolist() == [
        ["j0", 0.0, 5400.0], ["j1", 5400.0, 6400.0], ["j0", 10080.0, 16480.0]]
    row = result.checkpoints.iloc[0]
    assert (row["from_region"], row["archive_region"], row["to_region"], row["gb"]) == ("r", "arc", "r", 80.0)
    assert (row["stored_s"], row["asked_s"], row["restored_s"]) == (5480.0, 6400.0, 10080.0)
    # egress: the write 80 GB x $0.10 (r's) + the read 80 GB x $0.05 (arc's) = $12
    assert row["egress_usd"] == pytest.approx(12.0)
    assert "restoring-checkpoint" in result.decisions["decision"].tolist()


def test_the_storage_and_egress_of_an_archived_checkpoint_are_in_the_bill():
    scenario, result, nodes, world, rows = _archived()
    # W = 10000 s (the data's last end): stored 5480 -> 10000 inside it, 4520 s = 4520 / 2,592,000 months;
    # 80 GB x $0.01 x that = $0.001395...
    assert result.window_s == 10000.0
    storage = 80 * 0.01 * 4520 / (30 * 86_400)
    assert checkpoint_storage_usd(result) == pytest.approx(storage)
    edited, ran_jobs, ran_fleet = prepared(scenario, pd.DataFrame(rows), nodes, world)
    report = world_report(result, ran_fleet, edited.prices, edited.regions, edited.carbon, jobs=ran_jobs)
    plain = world_report(result.__class__(**{**result.__dict__, "checkpoints": None}), ran_fleet, edited.prices,
                         edited.regions, edited.carbon, jobs=ran_jobs)
    assert report.kpis["cost_usd"] - plain.kpis["cost_usd"] == pytest.approx(storage + 12.0)
    assert report.kpis["egress_usd"] - plain.kpis["egress_usd"] == pytest.approx(12.0)
    assert report.kpis["checkpoint_storage_usd"] == pytest.approx(storage)
    assert report.kpis["restore_wait_hours"] == pytest.approx((10080 - 6400) / 3600)
    assert report.kpis["checkpoints_archived"] == 1.0


def test_edge_kpis_count_request_hours_by_hand():
    # j0 inference, 1 GPU, at e (0-3600 s); j1 inference at h (t=0, e's one GPU already queued for: 0-7200 s):
    # 1 + 2 = 3 request-hours, 1 of them at the edge. Cost per request-hour: the two jobs' dollars (the cost
    # report's job usd) / 3.
    rows = [job(0, 0, 3600, 1, region="h", workload_class="inference"),
            job(1, 0, 7200, 1, region="h", workload_class="inference")]
    result = _edge_run(rows, _three())
    assert result.jobs["region"].tolist() == ["e", "h"]
    cost = world_report(result, _three(), pd.DataFrame(columns=["region", "gpu_type", "tier", "usd_per_gpu_hour"]),
                        _regions("h", "e", "o"), pd.DataFrame(columns=["region", "local_hour", "g_co2e_per_kwh"])).cost
    values = roles_kpis(result, cost)
    assert values["request_hours"] == pytest.approx(3.0)
    assert values["edge_request_share"] == pytest.approx(1 / 3)
    spend = cost.jobs["usd"].sum()
    assert spend > 0
    assert values["usd_per_request_hour"] == pytest.approx(spend / 3.0)


def test_no_change_when_the_roles_table_changes_nothing():
    # [roles] naming only primary regions moves no job: the same per-job table to the bit, and no
    # checkpoints table; without [roles] there is no roles table either.
    rows = [job(i, 10 * i, 500 + 50 * i, 1 + i % 4, region="h" if i % 2 else "o",
                workload_class=("inference", "training", "batch")[i % 3]) for i in range(12)]
    nodes = _three(edge=(8,), other=(8,))
    base = {"name": "t", "policies": {"routing": {"key": "latency-aware"}}, "latency": LATENCY}
    plain = run_scenario(Scenario.from_dict(base), pd.DataFrame(rows), nodes)
    named = run_scenario(Scenario.from_dict({**base, "roles": {"primary": ["h", "o"]}}), pd.DataFrame(rows), nodes)
    pd.testing.assert_frame_equal(plain.jobs, named.jobs)
    pd.testing.assert_frame_equal(plain.decisions, named.decisions)
    assert plain.roles is None and named.checkpoints is None
    assert named.roles.set_index("region")["roles"].to_dict() == {"h": "primary", "e": "", "o": "primary"}


def test_the_report_books_checkpoint_storage_to_the_archive_region_and_egress_to_the_job():
    scenario, _, nodes, world, rows = _archived()
    run = with_world(run_one(scenario, pd.DataFrame(rows), nodes, world, strand=False), nodes, world)
    cost = run.world.cost
    gpu = cost.by_region.set_index("region")["usd"]
    year = 365.0 * 86_400 / cost.totals["window_s"]
    figures = region_figures(run, 365.0).set_index("region")["spend_usd_per_year"]
    # arc: its own node's (reserved, idle) spend + the checkpoint's storage; r: its GPU spend + the $12 of
    # checkpoint egress booked to j0, which ran there
    assert figures["arc"] == pytest.approx((gpu["arc"] + checkpoint_storage_usd(run.result)) * year)
    assert figures["r"] == pytest.approx((gpu["r"] + 12.0) * year)
