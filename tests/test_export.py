"""Spreadsheet export neutralises formula-like text and keeps numbers as numbers."""
import csv
import io

import numpy as np
import pandas as pd
import pytest

from engine.core.escaping import FORMULA_TRIGGERS, neutralise_text, to_spreadsheet_csv
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.ingest import ingest_path
from engine.telemetry.store import Store


def _read_back(data: bytes) -> list[list[str]]:
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 byte-order mark, for Excel
    return list(csv.reader(io.StringIO(data[3:].decode("utf-8"), newline="")))


@pytest.mark.parametrize("value, written", [
    ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
    ("+1+1", "'+1+1"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
    ("\tcmd", "'\tcmd"),
    ("\r=1", "'\r=1"),
    ("  =1+1", "'  =1+1"),
    ("\uff1d1+1", "'\uff1d1+1"),   # full-width equals sign
    ("-1.5", "-1.5"),               # a plain number is never a formula
    ("+7", "+7"),
    ("a=b", "a=b"),
    ("alice", "alice"),
    ("", ""),
])
def test_text_cells_are_neutralised(value, written):
    assert neutralise_text(pd.Series([value], dtype="str")).tolist() == [written]


def test_every_trigger_character_is_neutralised():
    cells = pd.Series([c + "x" for c in FORMULA_TRIGGERS], dtype="str")
    assert (neutralise_text(cells) == "'" + cells).all()


def test_export_quotes_text_keeps_numbers_and_blanks():
    frame = pd.DataFrame({
        "job_id": ["=1+2", "ok", None],
        "gpus": [-1.5, 2.0, np.nan],
        "nodes": pd.array([1, None, 3], dtype="Int64"),
        "submit_utc": pd.to_datetime(["2024-05-01 10:00", "2024-05-01 11:30", None]),
    })
    data = to_spreadsheet_csv(frame)
    lines = data[3:].decode("utf-8").split("\r\n")
    assert lines[:4] == [
        '"job_id","gpus","nodes","submit_utc"',
        "\"'=1+2\",-1.5,1,\"2024-05-01 10:00:00\"",
        '"ok",2.0,"","2024-05-01 11:30:00"',
        '"","",3,""',
    ]
    assert _read_back(data)[1] == ["'=1+2", "-1.5", "1", "2024-05-01 10:00:00"]


def test_formula_header_names_are_neutralised_too():
    data = to_spreadsheet_csv(pd.DataFrame({"=cmd": ["x"], "gpus": [1]}))
    assert _read_back(data)[0] == ["'=cmd", "gpus"]


def test_imported_formula_values_are_data_in_store_and_neutralised_on_export(tmp_path):
    path = tmp_path / "evil.csv"
    path.write_text('job_id,user,submit,gpus\n"=HYPERLINK(""http://x"",""y"")",@admin,1714557600,-0\n')
    store = Store.open(tmp_path / "m.duckdb")
    ingest_path(store, path, options=ImportOptions())
    jobs = store.jobs("evil")
    assert jobs[["job_id", "user_name"]].values.tolist() == [['=HYPERLINK("http://x","y")', "@admin"]]
    rows = _read_back(to_spreadsheet_csv(jobs[["job_id", "user_name", "gpus"]]))
    assert rows[1] == ['\'=HYPERLINK("http://x","y")', "'@admin", "0.0"]
    store.close()
