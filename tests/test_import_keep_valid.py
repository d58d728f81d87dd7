"""Importing your own data (issue 29, item 5): all-or-nothing by default, or the valid rows with the rest set
aside and kept (file, line, problem); daylight-saving gaps and repeats read by a stated rule or rejected by it;
the headers of common exports (Slurm's sacct, Submitted/Started/Finished/Elapsed) and the user's own column in
every message; an SWF log's users and groups as teams; a failed import leaves the database as it was."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import REPO

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.ingest import ingest_bytes
from engine.telemetry.store import Store

BERLIN = ImportOptions(tz="Europe/Berlin")
KEEP = ImportOptions(tz="Europe/Berlin", keep_valid=True)


def _csv(rows: int = 200, gap: int = 3, bad: int = 0) -> bytes:
    """`rows` jobs submitted on 2024-03-31 in Berlin, the first `gap` of them in the skipped hour (02:00-03:00)
    and the last `bad` with negative GPUs."""
    lines = ["job_id,Submitted,Started,Finished,gpus"]
    for i in range(rows):
        hour = "02:30" if i < gap else "05:00"
        gpus = -1 if i >= rows - bad else 1
        lines.append(f"j{i},2024-03-31 {hour},2024-03-31 06:00,2024-03-31 07:00,{gpus}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def store(tmp_path):
    store = Store.open(tmp_path / "m.duckdb")
    yield store
    store.close()


def test_a_200_row_csv_with_3_rows_in_a_daylight_saving_gap_imports_all_of_them_by_a_stated_rule(store):
    result = ingest_bytes(store, _csv(), "jobs.csv", options=BERLIN)
    jobs = store.jobs(result.dataset)
    assert result.rows == 200 and len(jobs) == 200
    # 02:30 does not exist in Berlin that night: read with the offset before the change (+1), i.e. 03:30 CEST
    assert (jobs["submit_utc"] == pd.Timestamp("2024-03-31 01:30")).sum() == 3
    assert any(note.startswith("3 local time(s) in column 'Submitted' fall in the hour skipped when clocks go "
                               "forward in Europe/Berlin: shifted forward by the gap") for note in result.notes)
    with pytest.raises(ImportRejected) as caught:   # the other rule, as an option, names itself
        ingest_bytes(store, _csv().replace(b"j0,", b"k0,"), "strict.csv",
                     options=ImportOptions(tz="Europe/Berlin", dst="reject"))
    assert caught.value.total == 3 and "the daylight-saving rule 'reject' refuses it" in caught.value.errors[0].reason


def test_all_or_nothing_is_the_default_and_changes_nothing(store):
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, _csv(bad=2), "bad.csv", options=BERLIN)
    assert caught.value.total == 2 and store.content_digest() == before


def test_keeping_the_valid_rows_imports_them_and_keeps_every_reject(store):
    result = ingest_bytes(store, _csv(rows=10, gap=0, bad=3), "bad.csv", options=KEEP)
    assert (result.rows, result.rejected, result.problems) == (7, 3, 3)
    assert len(store.jobs(result.dataset)) == 7
    rejects = store.rejects(result.dataset)
    assert rejects.values.tolist() == [["bad.csv", line, "negative GPUs '-1' in column 'gpus'"]
                                       for line in (9, 10, 11)]
    assert store.datasets().set_index("name").loc[result.dataset, "rejected"] == 3
    assert any("3 row(s) with problems set aside" in note for note in result.notes)
    store.delete_dataset(result.dataset)
    assert store.rejects(result.dataset).empty


def test_a_file_whose_every_row_is_bad_is_still_rejected_whole(store):
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, _csv(rows=4, gap=0, bad=4), "all-bad.csv", options=KEEP)
    assert caught.value.total == 4 and store.content_digest() == before


def test_an_import_that_fails_while_writing_leaves_the_database_exactly_as_it_was(store, monkeypatch):
    ingest_bytes(store, _csv(rows=5, gap=0), "first.csv", options=BERLIN)
    before = {table: store.con.execute(f'SELECT * FROM "{table}"').df() for table, _ in store.content_digest()}

    def fail(*args):
        raise RuntimeError("disk full")
    monkeypatch.setattr(Store, "_insert_rejects", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        ingest_bytes(store, _csv(rows=6, gap=0, bad=1).replace(b"\nj", b"\nx"), "second.csv", options=KEEP)
    for table, frame in before.items():
        pd.testing.assert_frame_equal(store.con.execute(f'SELECT * FROM "{table}"').df(), frame)


def test_every_format_sets_its_bad_rows_aside(store, tmp_path):
    swf = b"; MaxProcs: 8\n; MaxNodes: 2\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n2 5 zz\n3 9 0 10 2 -1 -1 2 20 -1 1 2 1 -1 1 -1 -1 -1\n"
    sacct = (b"JobID|Submit|Start|End|State|AllocTRES\n1|2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T11:00:00|"
             b"COMPLETED|gres/gpu=2\n2|2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T09:00:00|COMPLETED|gres/gpu=1\n")
    util = b"time,busy_gpus,total_gpus\n2024-05-01T00:00:00Z,1,4\n2024-05-01T00:01:00Z,9,4\n"
    nodes = b"sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,8,A100\nn2,8000,1024,1.5,A100\n"
    pods = b"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,100,1,1000\np2,1000,100,1,2000\n"
    for name, content, fmt, kept in (("log.swf", swf, "swf", 2), ("jobs.txt", sacct, "sacct", 1),
                                     ("util.csv", util, "utilization", 1), ("nodes.csv", nodes, "openb-nodes", 1),
                                     ("pods.csv", pods, "openb-pods", 1)):
        result = ingest_bytes(store, content, name, format=fmt, options=ImportOptions(tz="UTC", keep_valid=True))
        assert (result.rows, result.rejected) == (kept, 1), name
        assert store.rejects(result.dataset)["file"].tolist() == [name] * result.problems


def test_slurm_and_spreadsheet_headers_are_recognised(store):
    export = (b"JobID,User,Account,Partition,Submitted,Started,Finished,Elapsed,Timelimit,State,AllocTRES,NNodes\n"
              b"1,ann,vision,gpu,2024-05-01 10:00,2024-05-01 10:05,,01:30:00,UNLIMITED,COMPLETED,"
              b"\"cpu=8,mem=64G,gres/gpu:a100=4\",1\n"
              b"2,bo,nlp,gpu,2024-05-01 10:00,2024-05-01 10:10,2024-05-01 10:20,00:10:00,1-00:00:00,"
              b"CANCELLED by 123,\"cpu=2,mem=8G\",1\n")
    result = ingest_bytes(store, export, "sacct.csv", options=ImportOptions(tz="UTC"))
    jobs = store.jobs(result.dataset).set_index("job_id")
    assert jobs.loc["1", ["user_name", "team", "queue", "gpus", "gpu_type", "cpus", "status"]].tolist() == [
        "ann", "vision", "gpu", 4.0, "A100", 8.0, "completed"]
    assert jobs.loc["1", "end_utc"] == pd.Timestamp("2024-05-01 11:35")   # Started + Elapsed
    assert np.isnan(jobs.loc["1", "requested_runtime_s"]) and jobs.loc["2", "requested_runtime_s"] == 86_400
    assert jobs.loc["2", ["gpus", "status"]].tolist() == [0.0, "cancelled"]


def test_every_message_names_the_users_own_column_and_the_readme_name(store):
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, b"JobID,When,gpus\n1,2024-05-01,1\n", "no-submit.csv", options=BERLIN)
    assert caught.value.lines() == [
        "no-submit.csv:1: missing required column 'submit': none of the file's columns ('JobID', 'When', 'gpus') is "
        "named submit, submit_utc, submitted, submit_time, submission_time, submitted_at, created, creation_time, "
        "queued_at; rename one, or map it (--map 'YOUR COLUMN=submit' on the CLI, the column mapping on the Data "
        "page)"]
    with pytest.raises(ImportRejected) as caught:
        ingest_bytes(store, b"JobID,Submitted,Started,gpus\n1,2024-05-01 10:00,2024-05-01 09:00,1\n", "order.csv",
                     options=BERLIN)
    assert caught.value.lines() == ["order.csv:2: Started '2024-05-01 09:00' is before Submitted '2024-05-01 10:00'"]
    mapped = ingest_bytes(store, b"JobID,When,gpus\n1,2024-05-01T10:00:00Z,1\n", "mapped.csv",
                          options=ImportOptions(mapping={"When": "submit"}))
    assert mapped.rows == 1


def test_an_swf_log_without_groups_makes_each_user_a_team(tmp_path):
    log = b"; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 20 -1 1 7 -1 -1 1 -1 -1 -1\n2 5 0 10 1 -1 -1 1 20 -1 1 8 -1 -1 1 -1 -1 -1\n"
    batch = parse_swf(log, "t.swf", ImportOptions())
    assert batch.tables["jobs"]["team"].tolist() == ["u7", "u8"]
    grouped = parse_swf(log.replace(b"1 7 -1", b"1 7 3"), "t.swf", ImportOptions())
    assert grouped.tables["jobs"]["team"].tolist() == ["g3", "u8"]


def test_the_cli_keeps_the_valid_rows_and_lists_the_rest(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(_csv(rows=6, gap=1, bad=2))
    db = str(tmp_path / "cli.duckdb")
    run = lambda *args: subprocess.run([sys.executable, "-m", "engine.cli", *args, "--db", db], cwd=REPO,  # noqa: E731
                                       capture_output=True, text=True, timeout=120)
    strict = run("ingest", str(path), "--tz", "Europe/Berlin")
    assert strict.returncode == 2 and "nothing was imported" in strict.stderr and "Traceback" not in strict.stderr
    kept = run("ingest", str(path), "--tz", "Europe/Berlin", "--keep-valid")
    assert kept.returncode == 0, kept.stderr
    assert "imported 4 rows" in kept.stdout and "set aside 2 row(s), 2 problem(s):" in kept.stdout
    assert f"{path}:6: negative GPUs '-1' in column 'gpus'" in kept.stdout
    listed = run("rejects", "bad", "--json")
    assert [r["line"] for r in json.loads(listed.stdout)] == [6, 7]
    datasets = json.loads(run("datasets", "--json").stdout)
    assert {d["name"]: d["rejected"] for d in datasets}["bad"] == 2


def test_the_data_page_offers_both_choices_and_lists_the_rows_set_aside(tmp_path, monkeypatch):
    from conftest import APP, shown
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(tmp_path / "page.duckdb")])
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("app_pages/data.py").run()
    at.selectbox(key="tz").select("Europe/Berlin").run()
    at.file_uploader[0].set_value(("jobs.csv", _csv(rows=8, gap=2, bad=2), "text/csv")).run()
    at.button(key="import").click().run()
    assert any("nothing was imported" in shown(e) for e in at.error)   # the default: all or nothing
    problems = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert problems["line"].tolist() == [8, 9]
    at.radio(key="on_problems").set_value("Import the valid rows and set the rest aside").run()
    at.button(key="import").click().run()
    assert not at.exception, at.exception
    assert any("Imported 6 rows (csv) into dataset jobs" in shown(s) for s in at.success)
    assert any("2 row(s) with 2 problem(s) were set aside" in shown(w) for w in at.warning)
    notes = " ".join(shown(c) for c in at.caption)
    assert "2 local time(s) in column 'Submitted' fall in the hour skipped" in notes
    rejects = next(d.value for d in at.dataframe if "problem" in d.value.columns)
    assert rejects.values.tolist() == [["jobs.csv", 8, "negative GPUs '-1' in column 'gpus'"],
                                       ["jobs.csv", 9, "negative GPUs '-1' in column 'gpus'"]]
    datasets = next(d.value for d in at.dataframe if "rejected" in d.value.columns)
    assert datasets.set_index("name").loc["jobs", "rejected"] == 2
