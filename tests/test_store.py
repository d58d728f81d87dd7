"""The DuckDB store: migrations, atomic imports, deletes."""
import duckdb
import pandas as pd
import pytest

from engine.telemetry.batch import ImportBatch
from engine.telemetry.store import Store


def _jobs(status="completed"):
    return pd.DataFrame({
        "job_id": ["1", "2"], "workload_class": ["training", "unknown"],
        "submit_utc": pd.to_datetime(["2024-01-01", "2024-01-02"]), "gpus": [1.0, 0.5],
        "region": ["default", "default"], "status": [status, "failed"], "gpu_type": ["H100", None],
    })


def test_fresh_database_is_migrated_to_latest_version(tmp_path):
    store = Store.open(tmp_path / "m.duckdb")
    version = store.schema_version()
    assert version >= 1
    store.close()
    assert Store.open(tmp_path / "m.duckdb").schema_version() == version


def test_failed_insert_leaves_database_unchanged(tmp_path):
    store = Store.open(tmp_path / "m.duckdb")
    store.add_import("good", ImportBatch("csv", {"jobs": _jobs()}), "a.csv", "sha-a")
    before = store.content_digest()
    with pytest.raises(duckdb.ConstraintException):
        store.add_import("bad", ImportBatch("csv", {"jobs": _jobs("bogus")}), "b.csv", "sha-b")
    assert store.content_digest() == before
    assert not store.dataset_exists("bad")


def test_datasets_summary_and_delete(tmp_path):
    store = Store.open(tmp_path / "m.duckdb")
    store.add_import("t", ImportBatch("csv", {"jobs": _jobs()}), "a.csv", "sha-a")
    row = store.datasets().iloc[0]
    assert (row["name"], row["format"], row["rows"]) == ("t", "csv", 2)
    assert row["start"] == pd.Timestamp("2024-01-01")
    assert store.find_import("sha-a") == ("t", "a.csv")
    assert store.delete_dataset("t")
    assert all(n == 0 for _, n in store.content_digest())


def test_migration_versions_are_unique_and_consecutive():
    from engine.telemetry import store as store_module
    versions = [version for version, _ in store_module._migrations()]
    assert versions == list(range(1, len(versions) + 1))


def test_runs_left_running_by_a_gone_process_are_interrupted_on_open_and_ours_are_not(tmp_path, monkeypatch):
    from engine.telemetry import orphans
    from engine.telemetry import store as store_module
    from engine.telemetry.headroom_runs import list_runs, save_run
    from engine.telemetry.sweeps import SweepRecord, list_sweeps, save_sweep

    path = tmp_path / "m.duckdb"
    every = store_module._migrations()
    monkeypatch.setattr(store_module, "_migrations", lambda: [m for m in every if m[0] <= 4])
    old = Store.open(path)   # a version 4 database: its sweeps have no owner
    old.con.execute("INSERT INTO sweeps VALUES (nextval('sweep_ids'), 'g', now()::TIMESTAMP, 'sample', 'x = 1', 2, 2, 'local', NULL, "
                    "'running')")
    old.close()
    monkeypatch.undo()
    store = Store.open(path)
    assert list_sweeps(store)["status"].tolist() == ["interrupted"]
    mine = save_sweep(store, SweepRecord("g", "sample", "x = 1", 2, 2, "local"))
    run = save_run(store, "sample", ["a", "b"], 6)
    store.close()
    store = Store.open(path)   # the same process: its runs may still be running in another thread
    assert list_sweeps(store).set_index("sweep_id").loc[mine, "status"] == "running"
    assert list_runs(store).set_index("run_id").loc[run, "status"] == "running"
    store.close()
    monkeypatch.setattr(orphans, "_OWNER", {})   # as another process would see them
    store = Store.open(path)
    assert list_sweeps(store)["status"].tolist() == ["interrupted", "interrupted"]
    assert list_runs(store)["status"].tolist() == ["interrupted"]
    store.close()
