"""SWF importer: the real Parallel Workloads Archive logs end to end, a hand-made log, malformed lines."""
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import TRACES, shared

from engine.sim.state.workload import build_workload
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.ingest import ingest_bytes, ingest_path
from engine.telemetry.store import Store

DATA = Path(__file__).parent / "data" / "swf"
CTC = TRACES / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"
HPC2N = TRACES / "swf" / "HPC2N-2002-2.2-cln.swf.gz"


@pytest.fixture
def store(tmp_path):
    store = Store.open(tmp_path / "meridian.duckdb")
    yield store
    store.close()


def _seconds(epoch_s: int) -> pd.Timestamp:
    return pd.Timestamp(epoch_s, unit="s")


@shared("traces/swf/CTC-SP2-1996-3.1-cln.swf.gz")
def test_ctc_sp2_log(store):
    assert detect_format(CTC.name, CTC.read_bytes()) == "swf"
    result = ingest_path(store, CTC)
    assert (result.dataset, result.format, result.rows) == ("CTC-SP2-1996-3.1-cln", "swf", 77_222)
    jobs = store.jobs(result.dataset)
    assert len(jobs) == 77_222
    assert jobs["status"].value_counts().to_dict() == {"completed": 60_553, "failed": 16_669}  # 21.6% failed
    assert set(jobs["gpu_type"]) == {"cpu"} and set(jobs["workload_class"]) == {"unknown"}
    first = jobs.iloc[0]  # job 1: submit 0, wait 588530, run 937, 306 processors, estimate 35100 s
    assert first["job_id"] == "1" and first["source_line"] == 30
    assert first["submit_utc"] == _seconds(835_823_160)
    assert first["start_utc"] == _seconds(835_823_160 + 588_530)
    assert first["end_utc"] == _seconds(835_823_160 + 588_530 + 937)
    assert (first["gpus"], first["cpus"], first["nodes"]) == (306, 306, 306)
    assert (first["user_name"], first["queue"], first["requested_runtime_s"]) == ("u97", "q3", 35_100)
    assert first["team"] == "u97"  # the log records no groups (-1): each user is a team
    assert (jobs["team"] == jobs["user_name"]).all() and jobs["team"].nunique() == 679
    assert jobs["requested_runtime_s"].isna().sum() == 6
    assert "the log records no groups (-1): each user is a team (user id u<N>)" in result.notes
    fleet = store.fleet(result.dataset)
    assert len(fleet) == 338 and fleet["gpus"].sum() == 338  # "338 (batch partition; 512 total)"
    assert set(fleet["tier"]) == {"reserved"} and fleet["node"].iloc[0] == "node-0001"
    regions = store.regions(result.dataset)
    assert regions[["region", "timezone"]].values.tolist() == [["default", "US/Eastern"]]
    summary = store.datasets().set_index("name").loc[result.dataset]
    assert (summary["format"], summary["rows"]) == ("swf", 77_222)


@shared("traces/swf/HPC2N-2002-2.2-cln.swf.gz")
def test_hpc2n_log(store):
    assert detect_format(HPC2N.name, HPC2N.read_bytes()) == "swf"
    result = ingest_path(store, HPC2N)
    assert result.rows == 202_871
    assert "status unknown (-1) for 878 job(s) with a run time: stored as completed" in result.notes
    jobs = store.jobs(result.dataset)
    assert len(jobs) == 202_871
    assert jobs["submit_utc"].iloc[0] == _seconds(1_027_839_845 + 342_072)
    assert (jobs["job_id"].iloc[0], jobs["user_name"].iloc[0], jobs["team"].iloc[0]) == ("11", "u4", "g1")
    assert jobs["queue"].isna().all()  # queue -1 throughout
    assert jobs["status"].eq("completed").all()
    fleet = store.fleet(result.dataset)
    assert len(fleet) == 240 and fleet["gpus"].sum() == 240
    assert store.regions(result.dataset)["timezone"].tolist() == ["Europe/Stockholm"]
    assert set(store.prices(result.dataset)["gpu_type"]) == {"cpu"}


@shared("traces/swf/SDSC-BLUE-2000-4.2-cln.swf.gz")
def test_sdsc_blue_eight_processors_per_node():
    path = TRACES / "swf" / "SDSC-BLUE-2000-4.2-cln.swf.gz"
    batch = parse_swf(path.read_bytes(), path.name, ImportOptions())
    jobs, fleet = batch.tables["jobs"], batch.tables["fleet"]
    assert len(jobs) == 243_306
    assert len(fleet) == 144 and set(fleet["gpus"]) == {8}          # MaxNodes 144, MaxProcs 1152
    assert jobs["status"].value_counts().to_dict() == {"completed": 195_586, "cancelled": 47_720}
    first = jobs.iloc[0]
    assert (first["gpus"], first["nodes"]) == (256, 32)
    assert jobs["gpus"].max() == 1152 and jobs["nodes"].max() == 144
    assert batch.tables["regions"]["timezone"].tolist() == ["US/Pacific"]


@shared("traces/swf/lublin_256.swf")
def test_lublin_log_without_start_time_or_max_procs():
    path = TRACES / "swf" / "lublin_256.swf"
    batch = parse_swf(path.read_bytes(), path.name, ImportOptions())
    jobs = batch.tables["jobs"]
    assert len(jobs) == 10_000
    assert "no UnixStartTime header: submit times are counted from 1970-01-01 00:00 UTC" in batch.notes
    assert jobs["submit_utc"].iloc[0] == pd.Timestamp("1970-01-01 01:24:54")
    assert jobs["start_utc"].isna().all()            # wait time -1 throughout
    assert len(batch.tables["fleet"]) == 256          # MaxProcs falls back to MaxNodes
    assert "regions" not in batch.tables              # no zone in the header


def test_small_log_every_rule():
    batch = parse_swf((DATA / "small.swf").read_bytes(), "small.swf", ImportOptions())
    jobs = batch.tables["jobs"]
    assert jobs["source_line"].tolist() == [9, 10, 12, 14, 15, 16, 17]   # comment and blank lines skipped
    assert jobs["job_id"].tolist() == ["1", "2", "3", "4", "5", "6", "6"]
    assert jobs["status"].tolist() == ["completed", "cancelled", "failed", "completed", "cancelled",
                                       "preempted", "completed"]
    assert jobs["gpus"].tolist() == [4, 8, 6, 16, 1, 1, 1]       # job 2: allocated -1 -> requested 8
    assert jobs["nodes"].tolist() == [1, 2, 2, 4, 1, 1, 1]       # 4 processors per node
    base = 1_700_000_000
    assert jobs["submit_utc"].tolist() == [_seconds(base + s) for s in (0, 60, 120, 180, 240, 300, 900)]
    assert jobs["start_utc"].iloc[0] == _seconds(base + 10) and pd.isna(jobs["start_utc"].iloc[1])
    assert jobs["end_utc"].iloc[0] == _seconds(base + 110) and pd.isna(jobs["end_utc"].iloc[4])
    assert jobs["requested_runtime_s"].iloc[:4].tolist()[:3] == [200, 300, 100]
    assert pd.isna(jobs["requested_runtime_s"].iloc[3])
    assert jobs["queue"].tolist()[:3] == ["q1", "q2", "q1"] and pd.isna(jobs["queue"].iloc[3])
    assert jobs["team"].tolist() == ["g1", "g1", "g2", "u3", "u3", "u3", "u3"]   # no group: the user
    fleet = batch.tables["fleet"]
    assert fleet["node"].tolist() == ["node-0001", "node-0002", "node-0003", "node-0004"]
    assert fleet["gpus"].tolist() == [4, 4, 4, 4]
    assert batch.tables["regions"].to_dict("records") == [{"region": "default", "timezone": "Europe/Berlin"}]
    assert batch.notes == [
        "SWF logs describe CPU clusters: each processor is treated as one slot "
        "(gpus = cpus = processors, gpu type 'cpu')",
        "status unknown (-1) for 1 job(s) with a run time: stored as completed",
        "status and run time both unknown (-1) for 1 job(s): stored as cancelled",
        "2 records are parts of checkpointed jobs (status 2-4): interrupted parts are stored as "
        "preempted, last parts as completed or failed",
        "4 job(s) without a group (-1) take their user as their team",
        "fleet: 4 nodes with 16 processors in all, tier 'reserved' (on-premise hardware is paid for "
        "whether used or not)",
    ]


def test_a_job_cancelled_before_it_started_is_a_user_giving_up():
    # SWF: a cancelled job's wait is the time until it was cancelled; with no run time it never ran.
    # SDSC-BLUE has 10,742 such jobs: stored with a start, the replay ran each for its request (up to
    # 36 h), inflating the log's load by half; stored as withdrawn, its user gives up after the wait.
    text = ("; UnixStartTime: 0\n; MaxProcs: 4\n"
            "1 0 600 -1 4 -1 -1 4 7200 -1 5 1 1 -1 1 -1 -1 -1\n"
            "2 0 0 100 4 -1 -1 4 7200 -1 5 1 1 -1 1 -1 -1 -1\n")
    batch = parse_swf(text.encode(), "c.swf", ImportOptions())
    jobs = batch.tables["jobs"]
    assert pd.isna(jobs["start_utc"].iloc[0]) and jobs["end_utc"].iloc[0] == _seconds(600)
    assert jobs["status"].tolist() == ["cancelled", "cancelled"]
    assert (jobs["start_utc"].iloc[1], jobs["end_utc"].iloc[1]) == (_seconds(0), _seconds(100))  # ran, then cancelled
    assert ("1 job(s) cancelled before they started (status 5, no run time): stored with no start, ending when "
            "they were withdrawn (submit + wait)") in batch.notes
    workload = build_workload(jobs, batch.tables["fleet"])
    assert workload.patience_s[0] == 600 and np.isnan(workload.patience_s[1])


def test_options_override_zone_and_region():
    options = ImportOptions(tz="Asia/Tokyo", region="jp-east")
    batch = parse_swf((DATA / "small.swf").read_bytes(), "small.swf", options)
    assert batch.tables["regions"].to_dict("records") == [{"region": "jp-east", "timezone": "Asia/Tokyo"}]
    assert set(batch.tables["jobs"]["region"]) == {"jp-east"} and set(batch.tables["fleet"]["region"]) == {"jp-east"}
    assert "time zone Asia/Tokyo given for the import overrides the log's Europe/Berlin" in batch.notes


def test_fixed_offset_zone_when_no_zone_name():
    log = b"; UnixStartTime: 0\n; TimeZone: 3600\n; MaxProcs: 2\n1 0 0 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1\n"
    batch = parse_swf(log, "x.swf", ImportOptions())
    assert batch.tables["regions"]["timezone"].tolist() == ["Etc/GMT-1"]
    assert ("no TimeZoneString header; using the fixed offset of the TimeZone header (Etc/GMT-1, no DST)"
            in batch.notes)


def test_gzip_and_plain_give_the_same_jobs(store):
    plain = (DATA / "small.swf").read_bytes()
    zipped = ingest_bytes(store, gzip.compress(plain), "small.swf.gz")
    again = ingest_bytes(store, plain, "small.swf")
    columns = ["job_id", "submit_utc", "start_utc", "end_utc", "gpus", "status"]
    assert store.jobs(zipped.dataset)[columns].equals(store.jobs(again.dataset)[columns])


def test_malformed_log_is_rejected_with_every_line(store):
    ingest_path(store, DATA / "small.swf")
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_path(store, DATA / "malformed.swf")
    name = str(DATA / "malformed.swf")
    assert caught.value.lines() == [f"{name}:{line}: {reason}" for line, reason in [
        (9, "expected 18 numeric fields, found 17"),
        (10, "field 5 (allocated processors) is not a number: 'x'"),
        (11, "negative value '-3' in field 5 (allocated processors), where only -1 (unknown) may be below 0"),
        (12, "fields 5 and 8 (allocated and requested processors) are both unknown (-1)"),
        (13, "value '7' in field 11 (status) is above 5"),
        (14, "negative value '-1' in field 2 (submit time)"),
        (16, "negative value '-7' in field 3 (wait time), where only -1 (unknown) may be below 0"),
        (17, "expected 18 numeric fields, found 19"),
    ]]
    assert store.content_digest() == before


def test_numbers_too_large_to_store_are_rejected_with_their_lines(store):
    # found by fuzzing: a submit time of 1e20 s reached the database and failed there, unexplained;
    # a job of 4e9 processors (no MaxProcs header) would have sized a fleet of 4e9 nodes; a job
    # without a number (-1) failed the database's NOT NULL
    ingest_path(store, DATA / "small.swf")
    before = store.content_digest()
    rest = "10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1"

    def log(*rows: str) -> bytes:
        return "\n".join(["; UnixStartTime: 1700000000", f"1 0 {rest}", *rows]).encode()

    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, log(f"2 1e20 {rest}", "3 60 4e9 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1",
                                f"1e17 60 {rest}", "6 60 10 100 4e9 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1",
                                f"7 2500000000 {rest}"), "huge.swf")
    assert caught.value.lines() == [
        "huge.swf:3: value '1e+20' in field 2 (submit time) is above 3153600000",
        "huge.swf:4: value '4e+09' in field 3 (wait time) is above 3153600000",
        "huge.swf:5: value '1e+17' in field 1 (job id) is above 9007199254740991",
        "huge.swf:6: value '4e+09' in field 5 (allocated processors) is above 1048576",
        "huge.swf:7: the job would end after 2100: submit time 2.5e+09 + wait time 10 + run time 100 s after the "
        "log's start"]
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, log(f"-1 60 {rest}"), "unnumbered.swf")
    assert caught.value.lines() == ["unnumbered.swf:3: negative value '-1' in field 1 (job id)"]
    with pytest.raises(ImportRejected) as caught:  # a fleet that size would not fit in memory
        ingest_bytes(store, f"; MaxNodes: 100000000\n1 0 {rest}\n".encode(), "wide.swf")
    assert caught.value.lines() == [
        "wide.swf:1: the header's MaxNodes / MaxProcs (100000000 / 100000000) exceed the 1,048,576 a fleet may have"]
    assert store.content_digest() == before


def test_header_only_log_is_rejected():
    with pytest.raises(ImportRejected) as caught:
        parse_swf(b"; MaxNodes: 4\n;\n", "empty.swf", ImportOptions())
    assert caught.value.lines() == ["empty.swf: no job lines after the header"]
