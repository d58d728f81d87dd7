"""The measured peak memory column (memory_used_gib_max, migration 8): import, bundle, the sample's values."""
import gzip
import shutil

import numpy as np
import pandas as pd
import pytest

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.generic_csv import parse_csv
from engine.telemetry.ingest import ingest_path
from engine.telemetry.sample import SAMPLE_DIR, read_bundle
from engine.telemetry.store import Store
from engine.telemetry.synth.generate import DEFAULT_SEED
from engine.telemetry.synth.memory import MEMORY_STREAM, job_memory


def test_an_alias_of_the_peak_memory_round_trips_through_the_store(tmp_path):
    path = tmp_path / "mem.csv"
    path.write_text("job_id,user,submit,gpus,memory_gib,peak_memory_gib\n"
                    "a,u,2025-01-01T00:00:00Z,8,960,412.5\nb,u,2025-01-01T01:00:00Z,1,120,\n")
    store = Store.open(tmp_path / "m.duckdb")
    try:
        stored = store.jobs(ingest_path(store, path).dataset).sort_values("job_id")
        assert store.schema_version() >= 8
    finally:
        store.close()
    assert stored["memory_used_gib_max"].iloc[0] == 412.5 and pd.isna(stored["memory_used_gib_max"].iloc[1])


def test_a_negative_peak_memory_is_rejected_with_its_line():
    with pytest.raises(ImportRejected) as caught:
        parse_csv(b"job_id,submit,gpus,memory_used_gib_max\n1,1714557600,1,-3\n", "m.csv", ImportOptions())
    assert [(e.line, "memory_used_gib_max" in e.reason) for e in caught.value.errors] == [(2, True)]


def test_a_bundle_written_before_the_column_still_loads(tmp_path):
    for path in SAMPLE_DIR.iterdir():
        if path.is_file():
            shutil.copy(path, tmp_path / path.name)
    lines = gzip.decompress((SAMPLE_DIR / "jobs.csv.gz").read_bytes()).decode().split("\n")[:200]
    (tmp_path / "jobs.csv.gz").write_bytes(gzip.compress(("\n".join(l.rsplit(",", 1)[0] for l in lines) + "\n")
                                                         .encode()))
    jobs = read_bundle(tmp_path).tables["jobs"]
    assert "memory_used_gib_max" not in jobs and len(jobs) == 199


def test_the_samples_memory_is_the_generators_and_within_the_request():
    jobs = read_bundle().tables["jobs"]
    used, asked = jobs["memory_used_gib_max"].to_numpy(float), jobs["memory_gib"].to_numpy(float)
    assert np.array_equal(np.isfinite(used), np.isfinite(jobs["gpus_used_max"].to_numpy(float)))
    assert (used[np.isfinite(used)] <= asked[np.isfinite(used)]).all()
    again = job_memory(np.random.default_rng([DEFAULT_SEED, MEMORY_STREAM]), jobs, asked,
                       jobs["gpus_used_max"].to_numpy(float))
    assert np.array_equal(again, used, equal_nan=True)
