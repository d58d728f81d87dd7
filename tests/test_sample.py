"""Loading the committed sample bundle as the dataset `sample`."""
import gzip
import hashlib
import shutil

import pandas as pd
import pytest

from engine.telemetry.batch import JOB_COLUMNS, TABLE_COLUMNS
from engine.telemetry.errors import ImportRejected
from engine.telemetry.sample import META_KEY, SAMPLE_DIR, bundle_digest, ensure_sample, load_sample, read_bundle
from engine.telemetry.store import Store
from engine.telemetry.synth.generate import BUNDLE_FILES


@pytest.fixture(scope="module")
def committed_batch():
    return read_bundle(SAMPLE_DIR)


def test_bundle_tables_use_the_canonical_columns(committed_batch):
    assert set(committed_batch.tables) == set(BUNDLE_FILES)
    for table, frame in committed_batch.tables.items():
        assert set(frame.columns) <= set(TABLE_COLUMNS[table]), table
    # the sample records no staged workflows: depends_on and checkpoint_gb are a jobs CSV's optional chain
    # columns ([[chain]] scenarios build chains from its jobs)
    chain_columns = {"depends_on", "checkpoint_gb"}
    assert list(committed_batch.tables["jobs"].columns) == [c for c in JOB_COLUMNS
                                                            if c != "source_line" and c not in chain_columns]


def test_bundle_timestamps_are_naive_utc(committed_batch):
    jobs = committed_batch.tables["jobs"]
    assert str(jobs["submit_utc"].dtype).startswith("datetime64")
    assert jobs["submit_utc"].dt.tz is None
    first = jobs.iloc[0]
    assert first["submit_utc"] == pd.Timestamp("2026-08-03 00:00:00")
    assert jobs["end_utc"].isna().sum() == (jobs["status"].isin(["running", "pending"])).sum()


def test_digest_is_sha256_of_the_files_in_bundle_order():
    expected = hashlib.sha256(b"".join((SAMPLE_DIR / name).read_bytes() for name in BUNDLE_FILES.values()))
    assert bundle_digest(SAMPLE_DIR) == expected.hexdigest()


def test_load_sample_imports_every_table_in_one_import(tmp_path, committed_batch):
    store = Store.open(tmp_path / "m.duckdb")
    load_sample(store)
    row = store.datasets().set_index("name").loc["sample"]
    assert (row["format"], row["files"]) == ("sample", 1)
    assert row["rows"] == len(committed_batch.tables["jobs"])
    imports = store.table("imports", "sample")
    assert len(imports) == 1 and imports.iloc[0]["content_sha256"] == bundle_digest()
    for table, frame in committed_batch.tables.items():
        assert len(store.table(table, "sample")) == len(frame), table
    jobs = store.jobs("sample")
    assert jobs["job_id"].iloc[0] == "j0000001" and jobs["source_line"].isna().all()


def test_ensure_sample_loads_once_and_respects_a_deletion(tmp_path):
    path = tmp_path / "m.duckdb"
    store = Store.open(path)
    assert ensure_sample(store) is True
    assert store.get_meta(META_KEY) == bundle_digest()
    digest = store.content_digest()
    assert ensure_sample(store) is False
    assert store.content_digest() == digest
    assert store.delete_dataset("sample")
    store.close()
    reopened = Store.open(path)
    assert ensure_sample(reopened) is False
    assert not reopened.dataset_exists("sample")


def test_ensure_sample_does_not_copy_a_bundle_already_imported_under_another_name(tmp_path):
    store = Store.open(tmp_path / "m.duckdb")
    load_sample(store, dataset="demo")
    assert ensure_sample(store) is False
    assert list(store.datasets()["name"]) == ["demo"]


def test_a_broken_bundle_is_rejected_and_changes_nothing(tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(SAMPLE_DIR, bundle)
    store = Store.open(tmp_path / "m.duckdb")
    before = store.content_digest()
    (bundle / "teams.csv").unlink()
    with pytest.raises(ImportRejected) as missing:
        load_sample(store, bundle)
    assert "teams.csv" in str(missing.value.errors[0])
    shutil.copy(SAMPLE_DIR / "teams.csv", bundle / "teams.csv")
    (bundle / "fleet.csv").write_text("region,cluster\nus-east,x\n")
    with pytest.raises(ImportRejected):
        load_sample(store, bundle)
    shutil.copy(SAMPLE_DIR / "fleet.csv", bundle / "fleet.csv")
    jobs = gzip.decompress((SAMPLE_DIR / "jobs.csv.gz").read_bytes()).replace(b",completed,", b",done,", 1)
    (bundle / "jobs.csv.gz").write_bytes(gzip.compress(jobs))
    with pytest.raises(ImportRejected) as bad_row:
        load_sample(store, bundle)
    line = jobs.split(b"\n").index(next(row for row in jobs.split(b"\n") if b",done," in row)) + 1
    assert bad_row.value.errors[0].line == line
    assert store.content_digest() == before
    assert store.get_meta(META_KEY) is None
