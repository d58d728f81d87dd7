"""Every file in tests/data/malformed/ is rejected with exactly the expected errors, and the store
that already holds a dataset is left exactly as it was (all-or-nothing imports)."""
from pathlib import Path

import pandas as pd
import pytest

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.ingest import ingest_path
from engine.telemetry.store import Store

MALFORMED = Path(__file__).parent / "data" / "malformed"
NEG = "negative GPUs '-1' in column 'gpus'"
ALL_STATES = "completed, failed, cancelled, preempted, running, pending"
ALL_CLASSES = "training, inference, development, batch, hpo, unknown"

# file -> (options, [(line, reason), ...] exactly as reported, total problem count)
EXPECTED = {
    "missing_gpus_column.csv": (None, [
        (1, "missing required column 'gpus': none of the file's columns ('job_id', 'user', 'submit', 'status') is "
            "named gpus, gpu, num_gpus, gpu_count, ngpus, n_gpus, or a Slurm TRES list (alloc_tres, alloctres, tres, "
            "req_tres, reqtres); rename one, or map it (--map 'YOUR COLUMN=gpus' on the CLI, the column mapping on "
            "the Data page)")], 1),
    "mapping_to_missing_column.csv": (ImportOptions(mapping={"user": "user_name"}), [
        (1, "column mapping names column 'user', which is not in the file; "
            "the file's columns are: 'job_id', 'owner', 'submit', 'gpus'")], 1),
    "unparsable_time.csv": (None, [
        (3, "unparsable time 'yesterday' in column 'submit'"),
        (4, "unparsable time '2024-13-01T10:00:00Z' in column 'start'")], 2),
    "negative_gpus.csv": (None, [
        (3, NEG),
        (4, "negative GPUs '-0.5' in column 'gpus'")], 2),
    "non_numeric_gpus.csv": (None, [
        (2, "non-numeric GPUs 'two' in column 'gpus'"),
        (3, "missing GPUs in column 'gpus'"),
        (4, "non-numeric GPUs 'nan' in column 'gpus'"),
        (6, "non-numeric GPUs '1e400' in column 'gpus'")], 4),
    "end_before_start.csv": (None, [
        (2, "end_time '2024-05-01T10:04:00Z' is before start_time '2024-05-01T10:05:00Z'"),
        (3, "start_time '2024-05-01T09:59:00Z' is before submit_time '2024-05-01T10:00:00Z'"),
        (4, "end_time '2024-05-01T09:00:00Z' is before submit_time '2024-05-01T10:00:00Z'")], 3),
    "unknown_status.csv": (None, [
        (3, f"unknown status 'Finished'; expected one of {ALL_STATES}"),
        (4, f"unknown workload class 'research'; expected one of {ALL_CLASSES}")], 2),
    "duplicate_job_id.csv": (None, [
        (4, "duplicate job id 'A' in column 'id' (first on line 2)"),
        (6, "duplicate job id 'A' in column 'id' (first on line 2)")], 2),
    "bad_numbers.csv": (None, [
        (2, "'1.5' in column 'nodes' is not a whole number"),
        (2, "negative value '-1' in column 'memory_gib'"),
        (2, "non-numeric value 'soon' in column 'walltime'"),
        (2, "non-numeric value 'x' in column 'cpus'"),
        (2, "value '1200' in column 'gpu_milli' is above 1000"),
        (3, "epoch seconds '99999999999' in column 'submit' are outside 1970-2100"),
        (4, "epoch seconds '-1' in column 'submit' are outside 1970-2100"),
        (4, "non-numeric value 'high' in column 'priority'"),
        (5, "non-numeric value '1e400' in column 'gpu_milli'"),
        (5, "non-numeric value 'inf' in column 'nodes'")], 10),
    "naive_times_no_tz.csv": (None, [
        (3, "timestamps in columns 'submit', 'start' have no time zone; "
            "state it (--tz Europe/Berlin on the CLI, the time-zone choice on the Data page) or add an offset")], 1),
    "nonexistent_local_time.csv": (ImportOptions(tz="Europe/Berlin", dst="reject"), [
        (3, "local time '2024-03-31 02:30' in column 'submit' does not exist in Europe/Berlin (clocks were set "
            "forward); the daylight-saving rule 'reject' refuses it (the rule 'shift' would read it as the time the "
            "gap's length later)"),
        (5, "local time '2024-10-27 02:30' in column 'submit' happened twice in Europe/Berlin (clocks were set "
            "back); the daylight-saving rule 'reject' refuses it (the rule 'shift' would read it as its first "
            "occurrence)")], 2),
    "unknown_time_zone.csv": (ImportOptions(tz="Mars/Olympus"), [
        (0, "unknown time zone 'Mars/Olympus'; use an IANA name such as Europe/Berlin or America/New_York")], 1),
    # Line numbers stay physical across blank lines, quoted newlines, CRLF and odd quoting.
    "wrong_field_count.csv": (None, [
        (6, "expected 4 fields, found 3"),
        (7, "expected 4 fields, found 5"),
        (9, "negative GPUs '-2' in column 'gpus'")], 3),
    "crlf_quoted_newline.csv": (None, [(5, "negative GPUs '-3' in column 'gpus'")], 1),
    "irregular_quotes.csv": (None, [(4, NEG)], 1),
    "latin1.csv": (None, [(3, "byte 0xe9 at column 6 is not valid UTF-8; save the file as UTF-8")], 1),
    "empty.csv": (None, [(0, "file is empty")], 1),
    "binary_junk.png": (None, [(0, "file is binary (contains NUL bytes), not text")], 1),
    "utf16.csv": (None, [(0, "file is UTF-16 encoded; save it as UTF-8")], 1),
    "utf32.csv": (None, [(0, "file is UTF-32 encoded; save it as UTF-8")], 1),
    "corrupt.csv.gz": (None, [
        (0, "corrupt gzip file (Compressed file ended before the end-of-stream marker was reached)")], 1),
    "header_only.csv": (None, [(0, "no data rows (the file has only a header)")], 1),
    # 150 of 200 rows are bad: the first 100 are listed, all 150 counted.
    "many_bad_rows.csv": (None, [(i + 1, NEG) for i in range(1, 201) if i % 4][:100], 150),
}

BASE_CSV = (
    "job_id,user,submit,start,end,gpus,status,workload_class,region\n"
    "b1,ann,2024-05-01T08:00:00Z,2024-05-01T08:01:00Z,2024-05-01T09:00:00Z,4,completed,training,eu-west\n"
    "b2,ben,2024-05-01T08:30:00Z,,,0.5,pending,inference,eu-west\n"
)


@pytest.fixture
def store_with_base(tmp_path):
    """A store already holding the dataset 'base' (two jobs)."""
    store = Store.open(tmp_path / "meridian.duckdb")
    base = tmp_path / "base.csv"
    base.write_text(BASE_CSV)
    assert ingest_path(store, base).rows == 2
    yield store
    store.close()


def test_the_corpus_and_the_table_list_the_same_files():
    assert sorted(p.name for p in MALFORMED.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_is_rejected_with_exact_errors_and_store_unchanged(store_with_base, name):
    store = store_with_base
    options, expected, total = EXPECTED[name]
    before = (store.content_digest(), store.fingerprint(), store.datasets(), store.jobs("base"))
    path = MALFORMED / name

    with pytest.raises(ImportRejected) as caught:
        ingest_path(store, path, options=options)

    assert [(e.file, e.line, e.reason) for e in caught.value.errors] == [(str(path), *e) for e in expected]
    assert caught.value.total == total
    assert store.content_digest() == before[0]
    assert store.fingerprint() == before[1]
    pd.testing.assert_frame_equal(store.datasets(), before[2])
    pd.testing.assert_frame_equal(store.jobs("base"), before[3])


def test_summary_says_how_many_were_shown(store_with_base):
    with pytest.raises(ImportRejected) as caught:
        ingest_path(store_with_base, MALFORMED / "many_bad_rows.csv")
    assert caught.value.summary() == "150 problems found (first 100 shown); nothing was imported"
