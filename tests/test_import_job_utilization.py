"""Per-job measured GPU use (gpu_util_pct, gpus_used_max): import, validation, the schema upgrade."""
import numpy as np
import pandas as pd
import pytest

import engine.telemetry.store as store_module
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.generic_csv import parse_csv
from engine.telemetry.ingest import ingest_bytes
from engine.telemetry.sample import SAMPLE_DIR, read_bundle
from engine.telemetry.store import Store

HEAD = "id,submit_utc,gpus"
T = "2024-05-01T10:00:00Z"


def _values(frame: pd.DataFrame, column: str) -> list:
    return [None if pd.isna(v) else float(v) for v in frame[column]]


@pytest.fixture
def store(tmp_path):
    store = Store.open(tmp_path / "m.duckdb")
    yield store
    store.close()


def test_canonical_columns_and_aliases_are_stored_exactly(store):
    text = (f"{HEAD},GPU Util,Peak GPUs Used\n"
            f"a,{T},8,42.5,4\n"
            f"b,{T},0.5,100,0.5\n"
            f"c,{T},2,,\n"
            f"d,{T},1,0,0\n")
    result = ingest_bytes(store, text.encode(), "util.csv")
    jobs = store.jobs(result.dataset)
    assert _values(jobs, "gpu_util_pct") == [42.5, 100.0, None, 0.0]
    assert _values(jobs, "gpus_used_max") == [4.0, 0.5, None, 0.0]
    assert not any("ignored" in note for note in result.notes)


def test_pai_gpu_wrk_util_counts_busy_gpus_in_percent_of_one_gpu():
    text = (f"{HEAD},gpu_wrk_util\n"
            f"a,{T},8,400\n"        # four GPUs' worth busy of eight: 50 %
            f"b,{T},0.5,25\n"       # a quarter GPU busy of a half: 50 %
            f"c,{T},0,0\n"          # no GPUs: no utilisation
            f"d,{T},2,\n")
    batch = parse_csv(text.encode(), "pai.csv", ImportOptions())
    jobs = batch.tables["jobs"]
    assert _values(jobs, "gpu_util_pct") == [50.0, 50.0, None, None]
    assert "gpus_used_pct" not in jobs.columns
    assert "gpu_util_pct is 'gpu_wrk_util' (GPUs busy, in percent of one GPU) divided by the job's GPUs" in batch.notes


def test_percent_of_own_gpus_wins_over_the_pai_form_unless_the_pai_form_is_mapped():
    text = f"{HEAD},gpu_wrk_util,gpu_util\na,{T},8,400,70\n"
    batch = parse_csv(text.encode(), "both.csv", ImportOptions())
    assert _values(batch.tables["jobs"], "gpu_util_pct") == [70.0]
    assert ("ignored duplicate column(s): 'gpu_wrk_util' (Meridian's gpu_util_pct comes from 'gpu_util')"
            in batch.notes)
    mapped = parse_csv(text.encode(), "both.csv", ImportOptions(mapping={"gpu_wrk_util": "gpus_used_pct"}))
    assert _values(mapped.tables["jobs"], "gpu_util_pct") == [50.0]
    assert ("ignored duplicate column(s): 'gpu_util' (Meridian's gpu_util_pct comes from 'gpu_wrk_util')"
            in mapped.notes)


# header extra columns, rows (gpus, values...) -> [(line, reason)] exactly as reported
BAD = [
    ("gpu_util", [("8", "101"), ("8", "-3"), ("8", "busy"), ("8", "nan")], [
        (2, "value '101' in column 'gpu_util' is above 100"),
        (3, "negative value '-3' in column 'gpu_util'"),
        (4, "non-numeric value 'busy' in column 'gpu_util'"),
        (5, "non-numeric value 'nan' in column 'gpu_util'")]),
    ("max_gpus_used", [("8", "9"), ("0.5", "1"), ("4", "-1"), ("4", "two")], [
        (2, "'9' in column 'max_gpus_used' is more than the job's GPUs ('8' in column 'gpus')"),
        (3, "'1' in column 'max_gpus_used' is more than the job's GPUs ('0.5' in column 'gpus')"),
        (4, "negative value '-1' in column 'max_gpus_used'"),
        (5, "non-numeric value 'two' in column 'max_gpus_used'")]),
    ("gpu_wrk_util", [("8", "801"), ("0", "10"), ("1", "-5")], [
        (2, "'801' in column 'gpu_wrk_util' is more than 100 x the job's GPUs ('8' in column 'gpus')"),
        (3, "'10' in column 'gpu_wrk_util' is more than 100 x the job's GPUs ('0' in column 'gpus')"),
        (4, "negative value '-5' in column 'gpu_wrk_util'")]),
]


@pytest.mark.parametrize("column, rows, expected", BAD, ids=[b[0] for b in BAD])
def test_bad_values_are_rejected_with_their_file_and_line(store, column, rows, expected):
    text = f"{HEAD},{column}\n" + "".join(f"j{i},{T},{gpus},{value}\n" for i, (gpus, value) in enumerate(rows))
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, text.encode(), "bad.csv")
    assert [(e.file, e.line, e.reason) for e in caught.value.errors] == [("bad.csv", *e) for e in expected]
    assert store.content_digest() == before


def test_files_without_the_columns_store_null(store):
    result = ingest_bytes(store, f"{HEAD}\na,{T},8\n".encode(), "plain.csv")
    jobs = store.jobs(result.dataset)
    assert jobs[["gpu_util_pct", "gpus_used_max"]].isna().all().all()


def test_a_version_2_database_upgrades_in_place_losing_nothing(tmp_path, monkeypatch):
    path = tmp_path / "old.duckdb"
    every = store_module._migrations()
    monkeypatch.setattr(store_module, "_migrations", lambda: [m for m in every if m[0] <= 2])
    old = Store.open(path)
    assert old.schema_version() == 2
    jobs = pd.DataFrame({"job_id": ["1", "2"], "workload_class": ["training", "hpo"],
                         "submit_utc": pd.to_datetime(["2024-01-01", "2024-01-02"]), "gpus": [8.0, 1.0],
                         "region": ["eu-west", "eu-west"], "status": ["completed", "failed"], "team": ["a", None]})
    fleet = pd.DataFrame({"region": ["eu-west"], "node": ["n1"], "gpus": [8], "tier": ["reserved"]})
    old.add_import("legacy", ImportBatch("csv", {"jobs": jobs, "fleet": fleet}), "a.csv", "sha-a")
    old.set_meta("sample_loaded", "digest")
    before = {table: old.table(table, "legacy") for table in ("jobs", "fleet", "imports")}
    assert "gpu_util_pct" not in before["jobs"].columns
    digest = old.content_digest()
    old.close()
    monkeypatch.undo()

    upgraded = Store.open(path)
    assert upgraded.schema_version() == max(v for v, _ in every) >= 3
    assert dict(upgraded.content_digest()).items() >= dict(digest).items()   # and the new, empty tables
    assert upgraded.get_meta("sample_loaded") == "digest"
    after = upgraded.jobs("legacy")
    pd.testing.assert_frame_equal(after[list(before["jobs"].columns)], before["jobs"])
    assert after[["gpu_util_pct", "gpus_used_max"]].isna().all().all()
    for table in ("fleet", "imports"):
        pd.testing.assert_frame_equal(upgraded.table(table, "legacy")[list(before[table].columns)], before[table])
    result = ingest_bytes(upgraded, f"{HEAD},gpu_util_pct,gpus_used_max\nz,{T},4,25,1\n".encode(), "new.csv")
    assert _values(upgraded.jobs(result.dataset), "gpus_used_max") == [1.0]
    upgraded.close()
    assert Store.open(path).schema_version() == max(v for v, _ in every)   # migrating twice is a no-op


def test_the_sample_carries_the_columns_within_their_ranges():
    jobs = read_bundle(SAMPLE_DIR).tables["jobs"]
    measured = jobs[jobs["gpus_used_max"].notna()]
    assert measured["gpu_util_pct"].notna().all() and jobs.loc[jobs["gpus_used_max"].isna(), "gpu_util_pct"].isna().all()
    assert measured["gpu_util_pct"].between(0, 100).all()
    assert (measured["gpus_used_max"] <= measured["gpus"]).all() and (measured["gpus_used_max"] >= 0).all()
    mean_gpus = measured["gpus"] * measured["gpu_util_pct"] / 100
    assert (mean_gpus <= measured["gpus_used_max"] + 1e-9).all()
    assert jobs.loc[jobs["start_utc"].isna(), "gpus_used_max"].isna().all()
    by_class = measured.groupby("workload_class")["gpu_util_pct"].mean()
    assert by_class["training"] > 70 and by_class["development"] < 25 and 40 < by_class["inference"] < 75
    assert np.isclose(len(measured) / jobs["start_utc"].notna().sum(), 0.98, atol=0.02)
