"""The jobs data contract's staged-workflow columns (issue 26 item 3): depends_on and checkpoint_gb are
imported and stored, and a depends_on that names no job of the file, its own job, or closes a cycle is
rejected with the file and the lines; a stored chain runs as one."""
from __future__ import annotations

import pandas as pd
import pytest

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.generic_csv import parse_csv
from engine.telemetry.ingest import ingest_path
from engine.telemetry.store import Store

HEADER = "job_id,submit_utc,start_utc,end_utc,gpus,region,depends_on,checkpoint_gb\n"


def _parse(rows: str):
    return parse_csv((HEADER + rows).encode(), "jobs.csv", ImportOptions())


def test_depends_on_and_checkpoint_gb_are_read():
    jobs = _parse("a,2026-01-01T00:00Z,2026-01-01T00:00Z,2026-01-01T01:00Z,8,r,,\n"
                  "b,2026-01-01T00:10Z,2026-01-01T01:00Z,2026-01-01T02:00Z,8,far,a,450\n").tables["jobs"]
    assert jobs["depends_on"].tolist()[1] == "a" and pd.isna(jobs["depends_on"].tolist()[0])
    assert jobs["checkpoint_gb"].tolist()[1] == 450.0


def test_unknown_ids_self_links_and_cycles_are_rejected_with_their_lines():
    rows = ("a,2026-01-01T00:00Z,,,1,r,c,\n"        # line 2: a waits for c
            "b,2026-01-01T00:00Z,,,1,r,zz,\n"       # line 3: zz is no job of the file
            "c,2026-01-01T00:00Z,,,1,r,d,\n"        # line 4
            "d,2026-01-01T00:00Z,,,1,r,a,\n"        # line 5: a -> c -> d -> a
            "e,2026-01-01T00:00Z,,,1,r,e,-3\n")     # line 6: itself; a negative checkpoint
    with pytest.raises(ImportRejected) as rejected:
        _parse(rows)
    found = [(e.file, e.line, e.reason) for e in rejected.value.errors]
    cycle = "jobs 'a' -> 'c' -> 'd' -> 'a' (each waits for the next) form a cycle (column 'depends_on')"
    assert ("jobs.csv", 3, "job 'b' depends on 'zz', which is not in the jobs table (column 'depends_on')") in found
    assert [("jobs.csv", line, cycle) for line in (2, 4, 5)] == [f for f in found if f[2] == cycle]
    assert ("jobs.csv", 6, "job 'e' depends on itself (column 'depends_on')") in found
    assert any(f[1] == 6 and "checkpoint_gb" in f[2] for f in found)


def test_a_stored_chain_reaches_the_simulator(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text(HEADER + "a,2026-01-01T00:00Z,2026-01-01T00:00Z,2026-01-01T01:00Z,8,r,,\n"
                             "b,2026-01-01T00:10Z,2026-01-01T01:00Z,2026-01-01T02:00Z,8,r,a,10\n", encoding="utf-8")
    store = Store.open(tmp_path / "m.duckdb")
    try:
        result = ingest_path(store, path)
        jobs = store.jobs(result.dataset)
    finally:
        store.close()
    assert jobs["depends_on"].tolist()[1] == "a" and jobs["checkpoint_gb"].tolist()[1] == 10.0
    from engine.sim.state.workload import build_workload

    fleet = pd.DataFrame([{"region": "r", "node": "n0", "gpu_type": None, "gpus": 8, "cpus": 8, "memory_gib": 64}])
    assert build_workload(jobs, fleet).predecessor.tolist() == [-1, 0]


def test_links_across_chunks_are_checked_over_the_whole_file():
    # forty rows read in chunks of ~200 bytes: a job may wait for one in an earlier or later chunk; a cycle
    # spanning chunks is found once the last chunk is read, with every line of it
    from unittest import mock

    from engine.telemetry.importers import csv_chunks

    def rows(depends: dict[int, str]) -> bytes:
        return (HEADER + "".join(f"j{k},2026-01-01T00:{k:02d}Z,,,1,r,{depends.get(k, '')},\n"
                                 for k in range(40))).encode()

    with mock.patch.object(csv_chunks, "CHUNK_BYTES", 200):
        jobs = parse_csv(rows({39: "j0", 1: "j38"}), "c.csv", ImportOptions()).tables["jobs"]
        assert jobs["depends_on"].tolist()[39] == "j0" and jobs["depends_on"].tolist()[1] == "j38"
        with pytest.raises(ImportRejected) as rejected:
            parse_csv(rows({0: "j39", 39: "j0"}), "c.csv", ImportOptions())
    cycle = "jobs 'j0' -> 'j39' -> 'j0' (each waits for the next) form a cycle (column 'depends_on')"
    assert [(e.line, e.reason) for e in rejected.value.errors] == [(2, cycle), (41, cycle)]
