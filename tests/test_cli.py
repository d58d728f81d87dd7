"""The `meridian` console script, run as a user would: exit codes, output, JSON."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TRACES, shared

ROOT = Path(__file__).resolve().parents[1]


def meridian(*args, check_code=0):
    proc = subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == check_code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return proc


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "cli.duckdb")


def test_fresh_database_lists_the_sample_dataset_as_json(db):
    records = json.loads(meridian("datasets", "--db", db, "--json").stdout)
    sample = next(r for r in records if r["name"] == "sample")
    assert sample["rows"] > 10_000
    assert sample["format"] == "sample"
    assert sample["start"] < sample["end"]
    assert set(sample) >= {"name", "format", "rows", "start", "end"}


@shared("traces/swf/CTC-SP2-1996-3.1-cln.swf.gz")
def test_ingest_swf_then_list_it(db):
    out = meridian("ingest", str(TRACES / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz"), "--dataset", "ctc", "--db", db)
    assert "77222 rows" in out.stdout
    records = {r["name"]: r for r in json.loads(meridian("datasets", "--db", db, "--json").stdout)}
    assert records["ctc"]["rows"] == 77222 and records["ctc"]["format"] == "swf"
    assert records["ctc"]["start"].startswith("1996-06-2")


def test_reimport_adds_nothing(db, tmp_path):
    csv = tmp_path / "jobs.csv"
    csv.write_text("job_id,submit,start,end,gpus,status\n"
                   "a,2026-01-05T10:00:00Z,2026-01-05T10:05:00Z,2026-01-05T12:00:00Z,2,completed\n")
    meridian("ingest", str(csv), "--db", db)
    again = meridian("ingest", str(csv), "--db", db)
    assert "already imported" in again.stdout
    records = {r["name"]: r for r in json.loads(meridian("datasets", "--db", db, "--json").stdout)}
    assert records["jobs"]["rows"] == 1


def test_bad_input_exits_2_with_located_errors_and_no_traceback(db, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submit,gpus\nx,2026-01-05T10:00:00Z,-3\ny,not-a-time,1\n")
    proc = meridian("ingest", str(bad), "--db", db, check_code=2)
    assert "bad.csv:2:" in proc.stderr and "bad.csv:3:" in proc.stderr
    assert "nothing was imported" in proc.stderr
    names = [r["name"] for r in json.loads(meridian("datasets", "--db", db, "--json").stdout)]
    assert "bad" not in names


def test_missing_file_and_unknown_format_are_bad_input(db, tmp_path):
    proc = meridian("ingest", str(tmp_path / "nope.csv"), "--db", db, check_code=2)
    assert "nope.csv" in proc.stderr and "cannot read file" in proc.stderr
    meridian("ingest", str(tmp_path / "x.csv"), "--format", "xlsx", "--db", db, check_code=2)


def test_delete_dataset(db):
    rows = json.loads(meridian("datasets", "--db", db, "--json").stdout)[0]["rows"]
    assert f" {rows:,} " in meridian("datasets", "--db", db).stdout and rows >= 1000  # grouped
    meridian("delete", "sample", "--db", db)
    assert json.loads(meridian("datasets", "--db", db, "--json").stdout) == []
    proc = meridian("delete", "sample", "--db", db, check_code=2)
    assert "no dataset named 'sample'" in proc.stderr


def test_sample_command_writes_a_bundle(tmp_path):
    out = tmp_path / "bundle"
    meridian("sample", "--scale", "0.05", "--out", str(out))
    assert (out / "jobs.csv.gz").stat().st_size > 0
    assert (out / "fleet.csv").exists() and (out / "regions.csv").exists()
