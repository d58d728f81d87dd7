"""A jobs CSV read in chunks (issue 28, item 3): the same jobs, problems, lines and notes as the whole file read
at once, rules over the whole file kept across chunks, and one transaction: a problem in the last chunk leaves
the database file byte for byte as it was."""
import hashlib
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cli.main import main
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers import csv_chunks, job_ids
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.generic_csv import parse_csv
from engine.telemetry.ingest import ingest_bytes
from engine.telemetry.store import Store

HEADER = "job_id,submit_utc,gpus,region\n"


def jobs_csv(rows: int, bad: dict[int, str] | None = None) -> str:
    """`rows` valid jobs (data row k on line k + 2), with the rows in `bad` (index -> whole row) replaced."""
    lines = [f"j{k},2025-01-01 00:{k % 60:02d}:00,{k % 4},r{k % 3}" for k in range(rows)]
    for k, row in (bad or {}).items():
        lines[k] = row
    return HEADER + "\n".join(lines) + "\n"


def outcome(text: bytes, chunk_bytes: int, options: ImportOptions | None = None):
    """What parse_csv makes of `text` read in pieces of `chunk_bytes`: the jobs and notes, or the problems."""
    with mock.patch.object(csv_chunks, "CHUNK_BYTES", chunk_bytes):
        try:
            batch = parse_csv(text, "c.csv", options or ImportOptions())
        except ImportRejected as exc:
            return ("rejected", exc.total, [str(e) for e in exc.errors])
    return ("imported", batch.tables["jobs"].to_dict("list"), batch.notes, [str(e) for e in batch.rejects])


_CELLS = st.sampled_from(["j1", "j2", " j3 ", "", "x", '"q,1"', '"a\nb"', "2025-01-01", "1", "-1", "1e400", "o\"k",
                          "\x01", "eu", "  ", "x\ry", "é"])


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.lists(_CELLS, min_size=3, max_size=5), max_size=12), crlf=st.booleans(),
       keep=st.booleans(), size=st.integers(1, 64))
def test_pieces_of_any_size_give_what_the_whole_file_gives(rows, crlf, keep, size):
    eol = "\r\n" if crlf else "\n"
    text = (HEADER.strip() + eol + eol.join(",".join(r) for r in rows) + eol).encode()
    options = ImportOptions(keep_valid=keep)
    assert outcome(text, size, options) == outcome(text, 1 << 30, options)


def test_a_large_file_in_many_chunks_imports_the_same_rows(tmp_path):
    text = jobs_csv(3000).encode()
    whole, chunked = Store.open(tmp_path / "whole.duckdb"), Store.open(tmp_path / "chunked.duckdb")
    ingest_bytes(whole, text, "j.csv")
    with mock.patch.object(csv_chunks, "CHUNK_BYTES", 2048):
        result = ingest_bytes(chunked, text, "j.csv")
    assert result.rows == 3000
    for table in ("jobs", "regions", "prices"):
        pd.testing.assert_frame_equal(whole.table(table, "j").drop(columns="import_id", errors="ignore"),
                                      chunked.table(table, "j").drop(columns="import_id", errors="ignore"))


def test_a_bad_last_row_leaves_the_database_file_byte_for_byte_as_it_was(tmp_path, capsys):
    db = tmp_path / "m.duckdb"
    (tmp_path / "base.csv").write_text(jobs_csv(5))
    assert main(["ingest", str(tmp_path / "base.csv"), "--db", str(db)]) == 0
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    bad = tmp_path / "big.csv"
    bad.write_text(jobs_csv(5000, {4999: "j4999,2025-01-01 00:00:00,-1,r0"}))
    capsys.readouterr()
    with mock.patch.object(csv_chunks, "CHUNK_BYTES", 4096):   # about 40 chunks, the bad row in the last
        assert main(["ingest", str(bad), "--db", str(db)]) == 2
    assert f"{bad}:5001: negative GPUs '-1' in column 'gpus'" in capsys.readouterr().err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_job_id_repeated_chunks_later_names_its_first_line():
    text = jobs_csv(2000, {1500: "j7,2025-01-01 00:00:00,1,r0", 1900: "j7,2025-01-01 00:00:00,1,r0"}).encode()
    for size in (512, 1 << 30):
        kind, total, errors = outcome(text, size)
        assert (kind, total) == ("rejected", 2)
        assert errors == ["c.csv:1502: duplicate job id 'j7' in column 'job_id' (first on line 9)",
                          "c.csv:1902: duplicate job id 'j7' in column 'job_id' (first on line 9)"]


def test_set_aside_rows_and_notes_add_up_across_chunks():
    text = jobs_csv(2000, {3: "j3,2025-01-01 00:00:00,1,", 10: "j2,2025-01-01 00:00:00,1,r0",
                           1999: "j1999,2025-01-01 00:00:00,x,"}).encode()
    whole, chunked = outcome(text, 1 << 30, ImportOptions(keep_valid=True)), outcome(text, 300,
                                                                                  ImportOptions(keep_valid=True))
    assert chunked == whole
    assert whole[2] == [("status derived from the times for 1998 job(s) without one: completed if ended, running if "
                         "only started, else pending"), "1998 job(s) without a workload class recorded as 'unknown'",
                        "1 job(s) without a region assigned to region 'default'"]
    assert whole[3] == ["c.csv:12: duplicate job id 'j2' in column 'job_id' (first on line 4)",
                        "c.csv:2001: non-numeric GPUs 'x' in column 'gpus'"]


def test_naive_times_without_a_zone_are_one_problem_for_the_file():
    text = ("job_id,submit,gpus\n" + "".join(f"j{k},2025-01-01 00:00:00,1\n" for k in range(500))).encode()
    assert outcome(text, 256) == ("rejected", 1, [("c.csv:2: timestamps in column 'submit' have no time zone; state "
                                                   "it (--tz Europe/Berlin on the CLI, the time-zone choice on the "
                                                   "Data page) or add an offset")])


def test_a_byte_that_is_not_utf8_in_a_late_chunk_names_its_line_and_column():
    text = jobs_csv(1000).encode().replace(b"j900,", b"j9\xe900,")
    assert outcome(text, 1024) == outcome(text, 1 << 30) == (
        "rejected", 1, ["c.csv:902: byte 0xe9 at column 3 is not valid UTF-8; save the file as UTF-8"])


def test_ids_with_the_same_hash_are_not_duplicates(monkeypatch):
    monkeypatch.setattr(job_ids.pd.util, "hash_array", lambda values, categorize: np.zeros(len(values), np.uint64))
    seen = job_ids.SeenIds()
    assert seen.first_lines(np.array(["a", "b"], dtype=object), np.array([2, 3])).tolist() == [-1, -1]
    assert seen.first_lines(np.array(["c", "b", "a"], dtype=object), np.array([7, 8, 9])).tolist() == [-1, 3, 2]
    assert seen.first_lines(np.array(["a", "c", "d"], dtype=object), np.array([10, 11, 12])).tolist() == [2, 7, -1]


@settings(max_examples=100, deadline=None)
@given(chunks=st.lists(st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=6), max_size=10))
def test_seen_ids_name_the_first_line_of_each_id_over_any_chunks(chunks):
    seen, first, line = job_ids.SeenIds(), {}, 0
    for chunk in chunks:
        lines = np.arange(line, line + len(chunk))
        line += len(chunk)
        expected = [first.get(i, -1) for i in chunk]
        for i, at in zip(chunk, lines):
            first.setdefault(i, int(at))
        assert seen.first_lines(np.array(chunk, dtype=object), lines).tolist() == expected


@pytest.mark.parametrize("size", [64, 1 << 30])
def test_a_record_longer_than_a_piece_is_read_whole(size):
    long = "x" * 200
    text = (HEADER + f'j1,2025-01-01 00:00:00,1,"{long}"\nj2,2025-01-01 00:00:00,2,r\n').encode()
    kind, jobs, _, _ = outcome(text, size)
    assert kind == "imported" and jobs["region"] == [long, "r"] and jobs["source_line"] == [2, 3]


def test_after_a_stray_quote_the_exact_reader_reads_the_rest_in_tables_of_rows():
    text = jobs_csv(3000, {1: 'j1,2025-01-01 00:00:00,1,o"k', 2500: "j2500,2025-01-01 00:00:00,-1,r0"}).encode()
    with mock.patch.object(csv_chunks, "EXACT_CHUNK_ROWS", 100):
        assert outcome(text, 1024) == outcome(text, 1 << 30) == (
            "rejected", 1, ["c.csv:2502: negative GPUs '-1' in column 'gpus'"])
        good = text.replace(b"j2500,2025-01-01 00:00:00,-1", b"j2500,2025-01-01 00:00:00,1")
        chunked = outcome(good, 1024)
    assert chunked == outcome(good, 1 << 30) and chunked[1]["region"][1] == 'o"k' and len(chunked[1]["job_id"]) == 3000
