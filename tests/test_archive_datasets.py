"""Datasets kept in an archive region ([roles] datasets, engine.sim.processes.dataset_archive) on a hand-built
fleet, the restore delays, storage and egress worked out by hand in the comments."""
from __future__ import annotations

import pandas as pd
import pytest

from engine.analysis.runs.catalogue import keys
from engine.analysis.runs.roles_kpis import DATASET_KEYS
from engine.analysis.runs.world_kpis import world_report
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.facts import World
from tests.sim_helpers import fleet, job

MONTH = 30 * 86_400.0
# h: the datasets' home (one 8-GPU node, egress $0.02/GB); arc: the archive (egress $0.05/GB, a node of another
# type, so nothing runs there)
NODES = pd.concat([fleet(8, region="h"), fleet(1, gpu_type="S", region="arc").assign(node="s0")], ignore_index=True)
REGIONS = pd.DataFrame({"region": ["h", "arc"], "timezone": "UTC", "country": None, "jurisdiction": "X",
                        "egress_usd_per_gb": [0.02, 0.05]})


def reads(i: int, submit: float, run: float, project: str, gb: float) -> dict:
    return dict(job(i, submit, run, 8, region="h"), project=project, data_location="h", data_size_gb=gb)


def jobs() -> pd.DataFrame:
    """j0 (t=0, 1000 s) reads p@h (500 GB, the most any of its jobs reads); j1 (t=100, 1000 s) reads 400 GB of it;
    j2 (t=200, 100 s) reads q@h (50 GB). The recorded data end at 100,000 s (j9's end: a 1-GPU job of arc's
    type, 100,000 s), so W = 100,000 s."""
    return pd.DataFrame([reads(0, 0, 1000, "p", 500.0), reads(1, 100, 1000, "p", 400.0), reads(2, 200, 100, "q", 50.0),
                         job(9, 0, 100_000, 1, gpu_type="S", region="arc")])


def simulate(roles: dict, frame: pd.DataFrame | None = None):
    spec = {"name": "t", "data": {"transfer_gbps": 10, "storage_usd_per_gb_month": 0.02},
            "roles": {"archive": ["arc"], "storage_usd_per_gb_month": 0.004, "restore_delay_s": 3600, **roles}}
    result = run_scenario(Scenario.from_dict(spec), jobs() if frame is None else frame, NODES, World(regions=REGIONS))
    return result, world_report(result, NODES, pd.DataFrame(), REGIONS, pd.DataFrame())


def test_a_job_waits_the_restore_delay_plus_the_transfer_home():
    # every dataset archived from the start. j0 arrives at 0: p@h (500 GB) is restored to h, ready at
    # 0 + 3600 + 500 x 8 / 10 = 4000 s; j1 (t=100) waits for the same restore. j2 (t=200) asks for q@h (50 GB):
    # 200 + 3600 + 40 = 3840. At 3840 j2 takes the node (100 s, to 3940); j0 at 4000 (to 5000), j1 after it.
    result, _ = simulate({"datasets": "all"})
    out = result.jobs.set_index("job_id")
    assert out.loc[["j0", "j1", "j2"], "start_s"].tolist() == [4000.0, 5000.0, 3840.0]
    assert out.loc[["j0", "j2"], "reason"].tolist() == ["restoring-dataset", "restoring-dataset"]
    table = result.archived_datasets.set_index("dataset")
    assert table.loc["p@h", ["archive_region", "gb", "stored_s", "asked_s", "restored_s", "job_id"]].tolist() == [
        "arc", 500.0, 0.0, 0.0, 4000.0, "j0"]
    # held: j0 4000 s, j1 3900 s
    assert table.loc["p@h", ["jobs_held", "held_s"]].tolist() == [2, 7900.0]
    assert table.loc["q@h", ["restored_s", "jobs_held", "held_s"]].tolist() == [3840.0, 1, 3640.0]
    logged = result.decisions[result.decisions["decision"] == "restoring-dataset"]
    assert logged[["time_s", "job_id"]].values.tolist() == [[0.0, "j0"], [100.0, "j1"], [200.0, "j2"]]


def test_the_storage_and_egress_of_archived_datasets_are_in_the_bill():
    result, report = simulate({"datasets": "all"})
    # storage: 500 GB x $0.004 x 4000 s + 50 GB x $0.004 x 3840 s, in months; egress: the writes out of h, 550 GB x
    # $0.02 = $11, and the restores out of arc, 550 GB x $0.05 = $27.5: $38.5, p@h's $10 + $25 booked to j0, q@h's
    # $1 + $2.5 to j2
    storage = (500 * 4000 + 50 * 3840) * 0.004 / MONTH
    plain = world_report(result.__class__(**{**result.__dict__, "archived_datasets": None}), NODES, pd.DataFrame(),
                         REGIONS, pd.DataFrame())
    assert report.kpis["dataset_storage_usd"] == pytest.approx(storage)
    assert result.archived_datasets["egress_usd"].tolist() == pytest.approx([35.0, 3.5])
    assert report.kpis["dataset_egress_usd"] == pytest.approx(38.5)
    assert report.kpis["cost_usd"] - plain.kpis["cost_usd"] == pytest.approx(storage + 38.5)
    assert report.kpis["egress_usd"] - plain.kpis["egress_usd"] == pytest.approx(38.5)
    assert report.kpis["dataset_storage_saved_usd"] == pytest.approx(storage / 0.004 * (0.02 - 0.004))
    assert report.kpis["dataset_restores"] == 2.0 and report.kpis["datasets_archived"] == 2.0
    assert report.kpis["dataset_restore_wait_hours"] == pytest.approx((7900 + 3640) / 3600)
    booked = report.cost.jobs.set_index("job_id")["egress_usd"]
    assert booked["j0"] == pytest.approx(35.0) and booked["j2"] == pytest.approx(3.5)
    assert set(DATASET_KEYS) <= keys("roles")


def test_only_the_named_datasets_are_archived():
    # q@h alone: j2 waits 3600 + 40 s; j0 and j1 run at once, one after the other (0-1000, 1000-2000); j2 at 3840
    result, _ = simulate({"datasets": "named", "dataset_names": ["q@h"]})
    assert result.archived_datasets["dataset"].tolist() == ["q@h"]
    out = result.jobs.set_index("job_id")
    assert out.loc[["j0", "j1", "j2"], "start_s"].tolist() == [0.0, 1000.0, 3840.0]


def test_a_dataset_idle_for_n_days_goes_to_the_archive_and_is_restored_when_next_used():
    # dataset_idle_days 0.01 = 864 s. p@h is used by j0's arrival (0) and end (1000); j1 reads it at 5000, after
    # 1000 + 864 = 1864: it was archived at 1864 and is restored for j1, ready at 5000 + 3600 + 400 = 9000
    # (the table's size: 500 GB, the most a job reads: 500 x 8 / 10 = 400 s). Archived again at 10000 + 864.
    # q@h's first use is j2's submit (3000 s, more than 864 s after the start): hot then, j2 starts at once
    frame = pd.DataFrame([reads(0, 0, 1000, "p", 500.0), reads(1, 5000, 1000, "p", 500.0),
                          reads(2, 3000, 100, "q", 50.0), job(9, 0, 100_000, 1, gpu_type="S", region="arc")])
    result, report = simulate({"datasets": "all", "dataset_idle_days": 0.01}, frame)
    out = result.jobs.set_index("job_id")
    assert out.loc[["j0", "j1", "j2"], "start_s"].tolist() == [0.0, 9000.0, 3000.0]
    table = result.archived_datasets
    assert table["dataset"].tolist() == ["p@h", "p@h", "q@h"]  # q@h: archived 864 s after j2's end (3100 s)
    assert table["stored_s"].tolist()[2] == 3964.0
    assert table[["stored_s", "asked_s", "restored_s", "job_id"]].values.tolist()[0] == [1864.0, 5000.0, 9000.0, "j1"]
    assert table["stored_s"].tolist()[1] == 10864.0 and table["job_id"].tolist()[1] == ""
    # storage: p@h 1864 -> 9000 and 10864 -> W (100,000 s); q@h 3964 -> W
    months = ((9000 - 1864) + (100_000 - 10864)) / MONTH
    assert report.kpis["dataset_storage_usd"] == pytest.approx((500 * months + 50 * (100_000 - 3964) / MONTH) * 0.004)
    # egress: each write out of h (500 GB x $0.02 twice, 50 GB x $0.02) and p@h's restore out of arc (500 x $0.05),
    # the first period's $10 + $25 booked to j1; the writes never restored ($10 + $1) to no job, in the total
    assert table["egress_usd"].tolist() == pytest.approx([35.0, 10.0, 1.0])
    assert report.kpis["dataset_egress_usd"] == pytest.approx(46.0)
    assert report.cost.jobs.set_index("job_id")["egress_usd"].sum() == pytest.approx(35.0)
    assert report.kpis["egress_usd"] == pytest.approx(46.0)


def test_a_dataset_is_not_archived_under_a_running_job():
    # dataset_idle_days 0.01 = 864 s. j0 reads p@h and runs 0-5000 s on the only node; j1 reads it, arrives at
    # 3000 s and waits for the node. p@h is in use while j0 runs, so j1 finds it hot (archived at 864 s under j0, it
    # would be restored for j1: 3000 + 3600 + 400 = 7000 s) and starts at j0's end, 5000 s, to 6000 s. p@h is
    # archived 864 s after that last use: 6864 s, never asked for again
    frame = pd.DataFrame([reads(0, 0, 5000, "p", 500.0), reads(1, 3000, 1000, "p", 500.0),
                          job(9, 0, 100_000, 1, gpu_type="S", region="arc")])
    result, _ = simulate({"datasets": "all", "dataset_idle_days": 0.01}, frame)
    out = result.jobs.set_index("job_id")
    assert out.loc[["j0", "j1"], "start_s"].tolist() == [0.0, 5000.0]
    assert out.loc["j1", "reason"] != "restoring-dataset"
    table = result.archived_datasets
    assert table[["dataset", "stored_s", "job_id"]].values.tolist() == [["p@h", 6864.0, ""]]


def test_without_archived_datasets_the_run_is_the_one_before():
    base, _ = simulate({})
    archived, _ = simulate({"datasets": "named", "dataset_names": ["nobody@h"]})
    pd.testing.assert_frame_equal(base.jobs, archived.jobs)
    assert base.archived_datasets is None and archived.archived_datasets.empty


@pytest.mark.parametrize("roles, message", [
    ({"datasets": "cold"}, "[roles] datasets 'cold' is unknown; choose from none, all, named"),
    ({"datasets": "all"}, "needs an archive region"),
    ({"archive": ["arc"], "datasets": "named"}, "needs dataset_names"),
    ({"archive": ["arc"], "dataset_names": ["x"]}, "dataset_names is only read with datasets = \"named\""),
    ({"archive": ["arc"], "datasets": "named", "dataset_names": "x"}, "dataset_names must be a list"),
    ({"archive": ["arc"], "datasets": "all", "dataset_idle_days": -1}, "[roles] dataset_idle_days must be from 0"),
])
def test_bad_dataset_archiving_is_refused_with_the_key_named(roles, message):
    with pytest.raises(ScenarioError) as error:
        Scenario.from_dict({"name": "t", "roles": roles}, source="s.toml")
    assert message in str(error.value) and "s.toml" in str(error.value)
