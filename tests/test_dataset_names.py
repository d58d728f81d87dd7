"""The dataset name policy (engine.telemetry.names) at every entry point: `meridian ingest`, the
store's own gate, and the Data page; a refused name adds nothing and says which rule it broke."""
from __future__ import annotations

import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from test_app_pages import GOOD_CSV

from engine.telemetry.errors import ImportRejected
from engine.telemetry.ingest import dataset_name_for, ingest_bytes
from engine.telemetry.names import MAX_LENGTH, BadName, check_name, name_from
from engine.telemetry.store import Store

HOSTILE = {
    "10,000 characters": "x" * 10_000, "100,000 characters": "y" * 100_000, "newline": "a\nb", "tab": "a\tb",
    "carriage return": "a\rb", "escape sequence": "a\x1b[31mred", "right-to-left override": "abc\u202edcba",
    "zero-width space": "a\u200bb", "zero-width joiner": "a\u200db", "blank": "   ", "empty": "",
    "line separator": "a\u2028b", "NUL": "a\x00b", "81 bytes of UTF-8": "\u96c6" * 27,
}


@pytest.mark.parametrize("label", list(HOSTILE))
def test_every_hostile_name_is_refused_with_its_rule(label):
    with pytest.raises(BadName) as caught:
        check_name(HOSTILE[label])
    message = str(caught.value)
    assert "blank" in message or "characters" in message or "U+" in message or "bytes in UTF-8" in message
    assert "\n" not in message and "\x1b" not in message and len(message) < 300


def test_good_names_are_normalised_and_kept():
    assert check_name("  gpu-fleet 2026  ") == "gpu-fleet 2026"
    decomposed = unicodedata.normalize("NFD", "Café Zürich")
    assert check_name(decomposed) == "Café Zürich" and check_name("集群-东京") == "集群-东京"
    assert check_name("<b>x</b> ../etc a\\b") == "<b>x</b> ../etc a\\b"   # printable: shown escaped, stored encoded
    assert len(check_name("z" * MAX_LENGTH)) == MAX_LENGTH


def test_a_name_made_from_a_file_name_always_passes():
    for stem in ("x" * 10_000, "a\nb\tc", "\u202eevil", "...", "report (final) v2", "集群"):
        assert check_name(name_from(stem)) == name_from(stem)
    assert dataset_name_for("/tmp/" + "j" * 5000 + ".csv.gz") == "j" * MAX_LENGTH


def _tables(db: Path) -> list:
    store = Store.open(db)
    try:
        return [tuple(r) for r in store.con.execute("SELECT name FROM datasets ORDER BY name").fetchall()]
    finally:
        store.close()


@pytest.mark.parametrize("label", ["100,000 characters", "newline", "right-to-left override", "blank",
                                   "81 bytes of UTF-8"])
def test_an_import_into_a_refused_name_adds_nothing(tmp_path, label):
    db = tmp_path / "m.duckdb"
    store = Store.open(db)
    try:
        before = store.con.execute("SELECT count(*) FROM datasets").fetchall()
        with pytest.raises(ImportRejected) as caught:
            ingest_bytes(store, GOOD_CSV, "jobs.csv", dataset=HOSTILE[label])
        assert caught.value.errors[0].file == "jobs.csv"
        assert store.con.execute("SELECT count(*) FROM datasets").fetchall() == before
        with pytest.raises(BadName):   # the store's own gate, for any caller that skips ingest
            from engine.telemetry.importers import parser_for
            from engine.telemetry.importers.common import ImportOptions
            store.add_import(HOSTILE[label], parser_for("csv")(GOOD_CSV, "jobs.csv", ImportOptions()), "jobs.csv", "s")
    finally:
        store.close()


def test_the_cli_refuses_a_hostile_name_in_one_line_and_exit_2(tmp_path):
    csv = tmp_path / "jobs.csv"
    csv.write_bytes(GOOD_CSV)
    out = subprocess.run([sys.executable, "-m", "engine.cli", "ingest", str(csv), "--dataset", "bad\nname",
                          "--db", str(tmp_path / "m.duckdb")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "control character (U+000A) at position 4" in out.stderr
    assert "bad\nname" not in out.stdout + out.stderr


def test_the_data_page_shows_the_rule_and_imports_nothing(sample_db, monkeypatch):
    from conftest import open_page

    at = open_page(sample_db, monkeypatch, "app_pages/data.py", dataset="sample")
    datasets = set(at.selectbox(key="dataset").options)
    at.text_input(key="new_dataset_name").input("evil\u202ename").run()
    at.file_uploader[0].set_value(("jobs.csv", GOOD_CSV, "text/csv")).run()
    at.button(key="import").click().run()
    assert not at.exception, at.exception
    assert any("Import rejected" in e.value for e in at.error)
    problems = " ".join(str(v) for d in at.dataframe for v in d.value.to_numpy().ravel())
    assert "an invisible formatting character (U+202E) at position 5" in problems
    assert set(at.selectbox(key="dataset").options) == datasets
