"""Generic CSV importer: aliases, mappings, time zones, defaults, exact stored values, dedupe."""
import gzip

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.telemetry.batch import JOB_COLUMNS
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers import csv_records
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.generic_csv import parse_csv
from engine.telemetry.ingest import ingest_path
from engine.telemetry.store import Store

T = pd.Timestamp
NaT = pd.NaT

# Aliases in mixed case, epoch and ISO times mixed in one column, Berlin local times on both
# daylight-saving changes of 2024, fractional GPUs, a quoted newline, a blank line, and values
# a spreadsheet would take for formulas.
HAPPY = (
    "JobID,User,Account,Project,Type,Submit Time,Start,END,num_gpus,GPU_Model,State,Partition,Walltime,Extra\n"
    "a1,alice,vision,p1,train,2024-03-31 01:30,2024-03-31T03:10:00,1711850400,0.5,H100,Done,gpu,02:00:00,x\n"
    "a2,bob,nlp,p2,Serving,2024-10-27 02:30,2024-10-27T02:45:00+01:00,2024-10-27T03:00:00Z,0.125,"
    'A100,FAILED,gpu,3600,"two\n'
    'lines"\n'
    "\n"
    "a3,carol,nlp,p2,notebook,1711846800.25,,,1,,,,,\n"
    '"=HYPERLINK(""http://evil.example"",""x"")",+cmd,-2+3,@SUM(A1),hpo,2024-01-15T12:00:00Z,2024-01-15 13:00,,2,'
    "H100,running,gpu,,\n"
)
FORMULA_ID = '=HYPERLINK("http://evil.example","x")'


@pytest.fixture
def store(tmp_path):
    store = Store.open(tmp_path / "meridian.duckdb")
    yield store
    store.close()


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_happy_path_stores_exact_values(store, tmp_path):
    result = ingest_path(store, _write(tmp_path, "happy.csv", HAPPY), options=ImportOptions(tz="Europe/Berlin"))
    assert (result.dataset, result.format, result.rows) == ("happy", "csv", 4)
    jobs = store.jobs("happy")
    columns = ["source_line", "job_id", "user_name", "team", "project", "workload_class", "submit_utc",
               "start_utc", "end_utc", "gpus", "gpu_type", "status", "queue", "requested_runtime_s", "region"]
    expected = pd.DataFrame([
        # 13:00 CET = 12:00 UTC
        (7, FORMULA_ID, "+cmd", "-2+3", "@SUM(A1)", "hpo", T("2024-01-15 12:00"), T("2024-01-15 12:00"), NaT,
         2.0, "H100", "running", "gpu", np.nan, "default"),
        # 01:30 CET (before the spring change) = 00:30 UTC; 03:10 CEST (after it) = 01:10 UTC
        (2, "a1", "alice", "vision", "p1", "training", T("2024-03-31 00:30"), T("2024-03-31 01:10"),
         T("2024-03-31 02:00"), 0.5, "H100", "completed", "gpu", 7200.0, "default"),
        (6, "a3", "carol", "nlp", "p2", "development", T("2024-03-31 01:00:00.250"), NaT, NaT,
         1.0, None, "pending", None, np.nan, "default"),
        # 02:30 happens twice on 27 October; the first (CEST, UTC+2) is taken
        (3, "a2", "bob", "nlp", "p2", "inference", T("2024-10-27 00:30"), T("2024-10-27 01:45"),
         T("2024-10-27 03:00"), 0.125, "A100", "failed", "gpu", 3600.0, "default"),
    ], columns=columns)
    got = jobs[columns]
    assert got.astype(object).where(got.notna(), None).values.tolist() == \
        expected.astype(object).where(expected.notna(), None).values.tolist()
    assert "ignored column(s) Meridian does not use: 'Extra'" in result.notes
    assert ("1 local time(s) in column 'Submit Time' fall in the hour repeated when clocks go back in "
            "Europe/Berlin: read as the first (earlier, daylight-saving) occurrence") in result.notes
    assert ("status derived from the times for 1 job(s) without one: completed if ended, running if only "
            "started, else pending") in result.notes


def test_formula_like_values_round_trip_unchanged(store, tmp_path):
    text = ("job_id,user,team,project,submit,gpus\n"
            '"=HYPERLINK(""http://x"",""y"")",+1+1,-cmd,@me,1714557600,1\n'
            "=1+2,=A1,-1.5,@@,1714557601,1\n")
    ingest_path(store, _write(tmp_path, "f.csv", text))
    jobs = store.jobs("f")
    assert jobs[["job_id", "user_name", "team", "project"]].values.tolist() == [
        ['=HYPERLINK("http://x","y")', "+1+1", "-cmd", "@me"],
        ["=1+2", "=A1", "-1.5", "@@"],
    ]


def _canonical_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "job_id": ["j1", "j2"], "user_name": ["u1", None], "team": ["t1", "t2"], "project": ["p", None],
        "workload_class": ["batch", "unknown"], "priority": [5.0, -1.5], "qos": ["low", None],
        "queue": ["q", None], "submit_utc": [T("2025-02-01 10:00"), T("2025-02-01 11:00:00.5")],
        "start_utc": [T("2025-02-01 10:05"), NaT], "end_utc": [T("2025-02-01 12:00"), NaT],
        "gpus": [8.0, 0.25], "gpu_milli": pd.array([1000, 250], dtype="Int64"), "gpu_type": ["H100", "T4"],
        "cpus": [64.0, np.nan], "memory_gib": [512.0, 8.0], "nodes": pd.array([1, None], dtype="Int64"),
        "region": ["eu-west", "ap-south"], "cluster": ["c1", None], "status": ["completed", "pending"],
        "requested_runtime_s": [14400.0, np.nan], "deadline_utc": [T("2025-02-02"), NaT],
        "data_location": ["eu-west", None], "data_size_gb": [120.5, np.nan], "residency": ["EU", None],
        "gpu_util_pct": [42.5, np.nan], "gpus_used_max": [4.0, np.nan], "memory_used_gib_max": [300.5, np.nan],
        "depends_on": [None, "j1"],
        "checkpoint_gb": [np.nan, 75.5],
    })


def test_canonical_names_round_trip_exactly_through_gzip(store, tmp_path):
    frame = _canonical_frame()
    assert list(frame.columns) == [c for c in JOB_COLUMNS if c != "source_line"]
    path = tmp_path / "jobs.csv.gz"
    path.write_bytes(gzip.compress(frame.to_csv(index=False).encode()))
    result = ingest_path(store, path)
    assert not any("ignored" in note or "derived" in note for note in result.notes)
    stored = store.jobs(result.dataset)[list(frame.columns)]
    for column in frame.columns:
        got, want = stored[column].tolist(), frame[column].tolist()
        assert [None if pd.isna(v) else v for v in got] == [None if pd.isna(v) else v for v in want], column


def test_mapping_override_wins_over_aliases(tmp_path):
    text = "job,user,owner,when,n\n1,alias-user,mapped-user,1714557600,2\n"
    batch = parse_csv(text.encode(), "m.csv", ImportOptions(mapping={"owner": "user_name", "When": "submit",
                                                                     "n": "gpus"}))
    jobs = batch.tables["jobs"]
    assert jobs[["job_id", "user_name", "gpus"]].values.tolist() == [["1", "mapped-user", 2.0]]
    assert jobs["submit_utc"].tolist() == [T("2024-05-01 10:00")]
    assert "ignored duplicate column(s): 'user' (Meridian's user_name comes from 'owner')" in batch.notes


def test_mapping_to_an_unknown_column_name_is_an_error():
    with pytest.raises(ImportRejected) as caught:
        parse_csv(b"id,submit,gpus,x\n1,1714557600,1,2\n", "m.csv", ImportOptions(mapping={"x": "colour"}))
    assert [(e.line, e.reason) for e in caught.value.errors] == [
        (1, "column mapping sends 'x' to 'colour', which is not a Meridian job column; choose from: "
            "job_id, user_name, team, project, workload_class, priority, qos, queue, submit, start, "
            "end, gpus, gpu_milli, gpu_type, cpus, memory_gib, nodes, region, cluster, status, "
            "requested_runtime_s, deadline, data_location, data_size_gb, residency, gpu_util_pct, "
            "gpus_used_max, gpus_used_pct, memory_used_gib_max, depends_on, checkpoint_gb, elapsed_s, tres")]


def test_headers_are_matched_ignoring_case_spaces_and_hyphens_canonical_name_first():
    text = "  Job ID ,ID,SUBMIT-TIME,GPU Count,Region\nx1,other,2024-05-01T10:00:00+02:00,3,\n"
    batch = parse_csv(text.encode(), "h.csv", ImportOptions(region="me-central"))
    jobs = batch.tables["jobs"]
    assert jobs[["job_id", "gpus", "region", "submit_utc"]].values.tolist() == [
        ["x1", 3.0, "me-central", T("2024-05-01 08:00")]]
    assert "ignored duplicate column(s): 'ID' (Meridian's job_id comes from '  Job ID ')" in batch.notes


def test_status_is_derived_from_times_when_missing():
    text = ("id,submit,start,end,gpus,status\n"
            "1,1714557600,1714557601,1714557700,1,\n"
            "2,1714557600,1714557601,,1,\n"
            "3,1714557600,,,1,\n"
            "4,1714557600,,,1,Preempted\n")
    jobs = parse_csv(text.encode(), "s.csv", ImportOptions()).tables["jobs"]
    assert jobs["status"].tolist() == ["completed", "running", "pending", "preempted"]


def test_naive_times_under_a_utc_header_are_utc_even_with_a_tz():
    text = "job_id,submit_utc,gpus\n1,2024-07-01 12:00:00,1\n"
    for options in (ImportOptions(), ImportOptions(tz="Asia/Tokyo")):
        jobs = parse_csv(text.encode(), "u.csv", options).tables["jobs"]
        assert jobs["submit_utc"].tolist() == [T("2024-07-01 12:00")]


def test_a_skipped_local_time_moves_forward_by_the_gap_with_a_note_or_is_rejected_by_rule():
    data = b"id,submit,gpus\n1,2024-03-31 02:30,1\n"
    batch = parse_csv(data, "g.csv", ImportOptions(tz="Europe/Berlin"))
    assert batch.tables["jobs"]["submit_utc"].tolist() == [pd.Timestamp("2024-03-31 01:30")]   # 03:30 CEST
    assert ("1 local time(s) in column 'submit' fall in the hour skipped when clocks go forward in Europe/Berlin: "
            "shifted forward by the gap (read with the offset before the change, so 02:30 on a one-hour change reads "
            "as 03:30)") in batch.notes
    with pytest.raises(ImportRejected) as caught:
        parse_csv(data, "g.csv", ImportOptions(tz="Europe/Berlin", dst="reject"))
    assert caught.value.lines() == [
        "g.csv:2: local time '2024-03-31 02:30' in column 'submit' does not exist in Europe/Berlin (clocks were set "
        "forward); the daylight-saving rule 'reject' refuses it (the rule 'shift' would read it as the time the "
        "gap's length later)"]


def test_reimport_is_detected_by_content_hash(store, tmp_path):
    first = ingest_path(store, _write(tmp_path, "happy.csv", HAPPY), options=ImportOptions(tz="Europe/Berlin"))
    digest = store.content_digest()
    again = ingest_path(store, tmp_path / "happy.csv", options=ImportOptions(tz="Europe/Berlin"))
    renamed = ingest_path(store, _write(tmp_path, "other-name.csv", HAPPY))
    assert (again.rows, again.import_id, again.duplicate_of) == (0, None, first.dataset)
    assert (renamed.rows, renamed.import_id, renamed.duplicate_of) == (0, None, first.dataset)
    assert store.content_digest() == digest
    assert len(store.jobs("happy")) == 4


# -- the fast (numpy + pyarrow) reader agrees with the exact csv-module reader ----------------

_FIELDS = st.one_of(
    st.sampled_from(["", "a", " b ", "1.5", "-2", "=x", "x y", '"q"', '"a,b"', '"l1\nl2"', '"d""q"', '"r\r\nn"',
                     'o"k', '"x"y', ' "s"', "\r", "p|q", '"p|q"', "|"]),
    st.text(alphabet='ab ,|"\n', max_size=4),
)
# Generic CSV; sacct's pipes with quotes as plain text; pipes with RFC 4180 quoting.
_DIALECTS = [csv_records.CSV, csv_records.Dialect("|", quoting=False), csv_records.Dialect("|")]


@settings(max_examples=400, deadline=None)
@given(width=st.integers(1, 4), rows=st.lists(st.lists(_FIELDS, min_size=0, max_size=5), max_size=8),
       crlf=st.booleans(), final_newline=st.booleans(), dialect=st.sampled_from(_DIALECTS))
def test_fast_reader_matches_exact_reader(width, rows, crlf, final_newline, dialect):
    eol = "\r\n" if crlf else "\n"
    sep = dialect.delimiter
    lines = [sep.join(f"h{i}" for i in range(width))] + [sep.join(r) for r in rows]
    text = eol.join(lines) + (eol if final_newline else "")
    every = lambda header, line: list(range(len(header)))  # noqa: E731
    exact = csv_records._read_exact(text, "h.csv", every, dialect)
    buf = text.encode()
    records = csv_records._scan(buf, dialect)
    fast = csv_records._read_fast(buf, records, every, dialect) if records is not None else None
    if fast is None:
        return  # the fast reader declined; read_csv_table uses the exact one
    assert (fast.header, fast.header_line, fast.bad_rows) == (exact.header, exact.header_line, exact.bad_rows)
    assert fast.lines.tolist() == exact.lines.tolist()
    assert {i: c.tolist() for i, c in fast.columns.items()} == {i: c.tolist() for i, c in exact.columns.items()}


@pytest.mark.parametrize("user", ['"""q"""', 'o"k'], ids=["fast-reader", "exact-reader"])
def test_line_numbers_are_physical_lines_in_both_readers(user):
    text = ('id,user,submit,gpus\n\n1,"a\nb",1714557600,1\n2,x,1714557600,-1\n\n\n'
            f"3,{user},1714557600,-2\n")
    assert (csv_records._scan(text.encode()) is None) == (user == 'o"k')
    with pytest.raises(ImportRejected) as caught:
        parse_csv(text.encode(), "l.csv", ImportOptions())
    assert [(e.line, e.reason) for e in caught.value.errors] == [
        (5, "negative GPUs '-1' in column 'gpus'"), (8, "negative GPUs '-2' in column 'gpus'")]
