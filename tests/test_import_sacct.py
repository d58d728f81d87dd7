"""sacct importer: a realistic export (steps, DST changes, every state family) and malformed exports."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.sacct import parse_sacct
from engine.telemetry.importers.slurm_fields import Tres, job_state, time_limit_s, tres, workload_from_partition
from engine.telemetry.importers.timestamps import localise
from engine.telemetry.ingest import ingest_bytes, ingest_path
from engine.telemetry.store import Store

DATA = Path(__file__).parent / "data" / "sacct"
NEW_YORK = ImportOptions(tz="America/New_York")


@pytest.fixture
def store(tmp_path):
    store = Store.open(tmp_path / "meridian.duckdb")
    yield store
    store.close()


def test_export_imports_one_row_per_job(store):
    result = ingest_path(store, DATA / "cluster_ny.txt", options=NEW_YORK)
    assert (result.format, result.rows) == ("sacct", 13)
    jobs = store.jobs(result.dataset).set_index("job_id")
    assert sorted(jobs.index) == ["1001", "1002", "1003", "1004_1", "1004_2", "1005+0", "1005+1",
                                  "1006", "1007", "1008", "1009", "1010", "1011"]   # 6 step rows skipped
    assert jobs.loc["1001", "source_line"] == 2 and jobs.loc["1011", "source_line"] == 20
    assert jobs["status"].to_dict() == {
        "1001": "completed", "1002": "running", "1003": "cancelled", "1004_1": "failed", "1004_2": "failed",
        "1005+0": "completed", "1005+1": "completed", "1006": "pending", "1007": "failed",
        "1008": "preempted", "1009": "failed", "1010": "running", "1011": "completed"}
    assert jobs["workload_class"].to_dict() == {
        "1001": "training", "1002": "inference", "1003": "development", "1004_1": "hpo", "1004_2": "hpo",
        "1005+0": "batch", "1005+1": "training", "1006": "hpo", "1007": "batch", "1008": "unknown",
        "1009": "development", "1010": "training", "1011": "inference"}
    assert store.regions(result.dataset)["timezone"].tolist() == ["America/New_York"]


def test_local_times_become_utc_across_daylight_saving(store):
    jobs = store.jobs(ingest_path(store, DATA / "cluster_ny.txt", options=NEW_YORK).dataset).set_index("job_id")
    ts = pd.Timestamp
    # 1001 starts at 22:12:30 EST and ends at 04:12:30 EDT, after clocks went forward: 5 hours.
    assert jobs.loc["1001", ["submit_utc", "start_utc", "end_utc"]].tolist() == [
        ts("2024-03-10 02:58:41"), ts("2024-03-10 03:12:30"), ts("2024-03-10 08:12:30")]
    # 1003 runs in the repeated hour of 3 Nov: the first (EDT, UTC-4) occurrence is used.
    assert jobs.loc["1003", ["submit_utc", "start_utc", "end_utc"]].tolist() == [
        ts("2024-11-03 05:29:40"), ts("2024-11-03 05:30:10"), ts("2024-11-03 05:45:10")]
    assert jobs.loc["1004_1", "submit_utc"] == ts("2024-04-02 13:00:00")          # EDT
    assert pd.isna(jobs.loc["1002", "end_utc"]) and pd.isna(jobs.loc["1006", "start_utc"])


def test_tres_sizes_limits_and_accounts(store):
    jobs = store.jobs(ingest_path(store, DATA / "cluster_ny.txt", options=NEW_YORK).dataset).set_index("job_id")
    sizes = jobs[["gpus", "gpu_type", "cpus", "memory_gib", "nodes"]].astype(object).where(jobs.notna(), None)
    assert sizes.loc["1001"].tolist() == [16, "A100", 64, 1000, 2]
    assert sizes.loc["1002"].tolist() == [1, "T4", 8, 32, 1]
    assert sizes.loc["1005+0"].tolist() == [0, None, 16, 64, 1]       # CPU-only job
    assert sizes.loc["1005+1"].tolist() == [2, None, 8, 64, 1]        # untyped gres/gpu
    assert sizes.loc["1006"].tolist() == [2, None, 8, 64, 1]          # pending: sizes from ReqTRES
    assert sizes.loc["1007"].tolist() == [0, None, 2, 0.5, 1]         # mem=512M
    assert sizes.loc["1010"].tolist() == [32, "H100", 128, 2048, 4]   # mem=2T
    assert sizes.loc["1011"].tolist() == [4, "H100", 16, 128, 1]      # only gres/gpu:h100
    limits = jobs["requested_runtime_s"].astype(object).where(jobs["requested_runtime_s"].notna(), None)
    assert limits.to_dict() == {
        "1001": 86400, "1002": None, "1003": 7200, "1004_1": 14400, "1004_2": 14400, "1005+0": 3600,
        "1005+1": 3600, "1006": 28800, "1007": 1800, "1008": 216000, "1009": None, "1010": 259200,
        "1011": 3600}
    assert jobs.loc["1001", ["user_name", "team", "queue", "qos", "priority"]].tolist() == [
        "alice", "nlp", "gpu-train", "normal", 4294]


def test_parsable_with_trailing_pipes_reads_the_same():
    plain = (DATA / "cluster_ny.txt").read_bytes()
    piped = b"".join(line.rstrip(b"\n") + b"|\n" for line in plain.splitlines(keepends=True))
    a = parse_sacct(plain, "a.txt", NEW_YORK).tables["jobs"]
    b = parse_sacct(piped, "b.txt", NEW_YORK).tables["jobs"]
    assert a.drop(columns="source_line").equals(b.drop(columns="source_line"))


def test_malformed_export_reports_every_row_and_changes_nothing(store):
    ingest_path(store, DATA / "cluster_ny.txt", options=NEW_YORK)
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_path(store, DATA / "malformed.txt", options=ImportOptions(tz="Europe/Zurich"))
    name = str(DATA / "malformed.txt")
    assert caught.value.lines() == [f"{name}:{line}: {reason}" for line, reason in [
        (3, "unknown state 'EXPLODED'"),
        (4, "Start is not a time: '2024-13-45T00:00:00' (expected YYYY-MM-DDTHH:MM:SS)"),
        (5, "expected 11 fields separated by '|', found 10"),
        (6, "AllocTRES: gres/gpu is not a number: 'abc'"),
        (7, "End 2024-05-01T09:00:00 is before Start 2024-05-01T10:00:05"),
        (8, "Submit is 'Unknown'; every job needs one"),
        (9, "Timelimit is not a duration: 'forever'"),
        (11, "AllocTRES: mem is not a size: '12Q'"),
        (12, "JobID is empty"),
    ]]   # line 10 is a job step: never validated
    assert store.content_digest() == before


@pytest.mark.parametrize(("tz", "reason"), [
    (None, "sacct timestamps are local times; state the cluster's time zone (--tz on the CLI, the time-zone choice on the Data page)"),
    ("Mars/Olympus", "unknown time zone 'Mars/Olympus'; use an IANA name such as Europe/Berlin or America/New_York"),
])
def test_time_zone_is_required(store, tz, reason):
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, (DATA / "cluster_ny.txt").read_bytes(), "cluster_ny.txt", format="sacct",
                     options=ImportOptions(tz=tz))
    assert caught.value.lines() == [f"cluster_ny.txt: {reason}"]
    assert store.content_digest() == before


def test_missing_column_is_named():
    export = b"JobID|User|Submit|Start|State\n1|a|2024-01-01T00:00:00|Unknown|PENDING\n"
    with pytest.raises(ImportRejected) as caught:
        parse_sacct(export, "short.txt", NEW_YORK)
    assert caught.value.lines() == [
        "short.txt:1: missing column(s) end, alloctres; the header has jobid, user, submit, start, state"]


@pytest.mark.parametrize(("text", "seconds"), [
    ("1-00:00:00", 86400), ("12:30:15", 45015), ("30:00", 1800), ("45", 2700), ("2-12", 216000),
    ("1-02:30", 95400), ("UNLIMITED", None), ("Partition_Limit", None), ("", None),
])
def test_time_limits(text, seconds):
    assert time_limit_s(text) == seconds


@pytest.mark.parametrize(("text", "expected"), [
    ("cpu=8,mem=64G,node=1,billing=8,gres/gpu=4,gres/gpu:a100=4", Tres(4, "A100", 8, 64, 1)),
    ("cpu=2,mem=1536M,node=1", Tres(None, None, 2, 1.5, 1)),
    ("gres/gpu:a100=2,gres/gpu:h100=2", Tres(4, "A100|H100", None, None, None)),
    ("", Tres()),
])
def test_tres_lists(text, expected):
    assert tres(text, "AllocTRES") == expected


@pytest.mark.parametrize(("text", "status"), [
    ("CANCELLED by 1234", "cancelled"), ("TIMEOUT", "failed"), ("DEADLINE", "failed"),
    ("BOOT_FAIL", "failed"), ("SUSPENDED", "running"), ("RESIZING", "running"), ("PENDING", "pending"),
])
def test_states(text, status):
    assert job_state(text) == status


def test_partition_hints():
    assert [workload_from_partition(p) for p in ("a100-interactive", "debug", "batch", "sweep", "gpu", None)] == [
        "development", "development", "batch", "hpo", "unknown", "unknown"]


def test_skipped_and_repeated_wall_times():
    wall = np.array(["2024-03-10T02:30:00", "2024-11-03T01:30:00", "NaT"], dtype="datetime64[us]")
    utc, skipped, repeated = localise(wall, "America/New_York")
    assert skipped.tolist() == [True, False, False]             # skipped hour: no such time in New York
    assert utc[0] == np.datetime64("2024-03-10T07:30:00")       # read with EST, the offset before: 03:30 EDT
    assert repeated.tolist() == [False, True, False]
    assert utc[1] == np.datetime64("2024-11-03T05:30:00")       # repeated hour: first occurrence (EDT)
    assert np.isnat(utc[2])


def test_a_time_in_the_skipped_hour_moves_forward_or_is_rejected_by_rule_and_the_repeated_hour_is_a_note():
    header = b"JobID|Submit|Start|End|State|AllocTRES\n"
    gap = header + b"1|2024-03-10T01:00:00|2024-03-10T02:30:00|2024-03-10T04:00:00|COMPLETED|gres/gpu=1\n"
    shifted = parse_sacct(gap, "gap.txt", NEW_YORK)
    assert shifted.tables["jobs"]["start_utc"].tolist() == [pd.Timestamp("2024-03-10 07:30")]   # 03:30 EDT
    assert any("column 'Start' fall in the hour skipped" in note for note in shifted.notes)
    with pytest.raises(ImportRejected) as caught:
        parse_sacct(gap, "gap.txt", replace(NEW_YORK, dst="reject"))
    assert caught.value.lines() == [
        "gap.txt:2: local time '2024-03-10T02:30:00' in column 'Start' does not exist in America/New_York "
        "(clocks were set forward); the daylight-saving rule 'reject' refuses it (the rule 'shift' would read it "
        "as the time the gap's length later)"]
    notes = parse_sacct((DATA / "cluster_ny.txt").read_bytes(), "ny.txt", NEW_YORK).notes
    assert [n for n in notes if "repeated" in n] == [
        f"1 local time(s) in column '{column}' fall in the hour repeated when clocks go back in America/New_York: "
        "read as the first (earlier, daylight-saving) occurrence" for column in ("Submit", "Start", "End")]


def test_quotes_in_values_are_plain_text():
    export = (b"JobID|JobName|User|Submit|Start|End|State|AllocTRES\n"
              b'1|"my job|ann|2024-01-01T00:00:00|Unknown|Unknown|PENDING|\n'
              b'2|say "hi"|"bo|2024-01-01T00:00:00|Unknown|Unknown|PENDING|\n')
    jobs = parse_sacct(export, "q.txt", NEW_YORK).tables["jobs"]
    assert jobs[["job_id", "user_name", "source_line"]].values.tolist() == [["1", "ann", 2], ["2", '"bo', 3]]


def test_only_steps_is_rejected(store):
    export = b"JobID|Submit|Start|End|State|AllocTRES\n1.batch|2024-01-01T00:00:00|Unknown|Unknown|PENDING|\n"
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, export, "steps.txt", options=NEW_YORK)
    assert caught.value.lines() == ["steps.txt: no job rows (only the header, or only job steps)"]
    assert not store.datasets().size


def test_minimal_columns_suffice(store):
    export = (b"JobID|Submit|Start|End|State|AllocTRES\n"
              b"7|2024-01-01T00:00:00|Unknown|Unknown|PENDING|\n"
              b"8|2024-01-01T00:00:00|2024-01-01T00:00:01|2024-01-01T00:00:05|COMPLETED|gres/gpu=1\n")
    jobs = store.jobs(ingest_bytes(store, export, "min.txt", options=ImportOptions(tz="Asia/Kolkata")).dataset)
    assert jobs["submit_utc"].tolist() == [pd.Timestamp("2023-12-31 18:30:00")] * 2     # UTC+05:30
    assert jobs["gpus"].tolist() == [0, 1] and jobs["status"].tolist() == ["pending", "completed"]
    assert jobs["user_name"].isna().all() and jobs["requested_runtime_s"].isna().all()
