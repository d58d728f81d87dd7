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
