"""`meridian ingest DIR`: a folder written by `meridian sample` becomes one dataset (jobs, fleet,
prices, regions, carbon, teams, utilisation), atomically; a wrong folder changes nothing."""
from __future__ import annotations

import gzip
import json
import shutil

import pytest
from test_cli import meridian

from engine.telemetry.store import Store


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "small"
    meridian("sample", "--scale", "0.02", "--out", str(out))
    return out


def datasets(db) -> dict:
    return {d["name"]: d for d in json.loads(meridian("datasets", "--json", "--db", db).stdout)}


def test_a_sample_folder_becomes_one_dataset_with_its_world(bundle, tmp_path):
    db = str(tmp_path / "m.duckdb")
    done = meridian("ingest", str(bundle), "--dataset", "small", "--db", db)
    with gzip.open(bundle / "jobs.csv.gz", "rt") as jobs:
        rows = sum(1 for _ in jobs) - 1
    assert f"imported {rows} rows (sample)" in done.stdout and "into dataset 'small'" in done.stdout
    listed = datasets(db)["small"]
    assert listed["rows"] == rows and listed["scheduler"] == "per-pool-fifo"
    store = Store.open(db, read_only=True)
    try:
        for table in ("fleet", "regions", "prices"):
            assert len(store.table(table, "small")) > 0, table
        assert len(store.jobs("small")) == rows
    finally:
        store.close()
    again = meridian("ingest", str(bundle), "--db", db)
    assert "already imported into dataset 'small'; nothing added" in again.stdout
    simulated = json.loads(meridian("simulate", "--dataset", "small", "--db", db, "--scenario",
                                    "sample_data/scenarios/fifo.toml", "--json").stdout)
    assert simulated["kpis"]["jobs_completed"] > 0


def test_a_folder_missing_a_file_or_naming_an_existing_dataset_changes_nothing(bundle, tmp_path):
    db = str(tmp_path / "m.duckdb")
    before = datasets(db)
    broken = tmp_path / "broken"
    shutil.copytree(bundle, broken)
    (broken / "teams.csv").unlink()
    failed = meridian("ingest", str(broken), "--db", db, check_code=2)
    assert "broken: a folder must be one written by `meridian sample`; this one lacks teams.csv" in failed.stderr
    assert "Traceback" not in failed.stderr
    clash = meridian("ingest", str(bundle), "--dataset", "sample", "--db", db, check_code=2)
    assert "dataset 'sample' exists already" in clash.stderr
    assert datasets(db) == before
