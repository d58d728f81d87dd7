"""`meridian sweep` and `meridian sweeps`: exit codes, JSON shape, progress on stderr, stored sweeps."""
import argparse
import json
import sys
from pathlib import Path

import pytest

from engine.cli.sweep import add_parsers

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "tests" / "data" / "swf" / "small.swf"
GRID = """
name = "small"
[[axis]]
name = "backfill"
set = "policies.backfill"
values = ["none", "easy"]
[[axis]]
name = "default cpu"
fleet = { region = "default", gpu_type = "cpu" }
gpus = [0, 4]
"""
FAILING = GRID + """
[[scenario]]
name = "nowhere"
fleet = [{ region = "atlantis", gpu_type = "cpu", add_gpus = 4 }]
"""


def meridian(capsys, *argv) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the sweep commands, parsed as `meridian` parses them."""
    parser = argparse.ArgumentParser(prog="meridian")
    add_parsers(parser.add_subparsers(dest="command", required=True), "DuckDB file")
    args = parser.parse_args([str(a) for a in argv])
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def _grid(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_sweep_json_progress_and_stored_sweep(tmp_path, capsys):
    db = tmp_path / "m.duckdb"
    code, out, err = meridian(capsys, "sweep", "--trace", SMALL, "--grid", _grid(tmp_path, GRID), "--workers", 2,
                              "--json", "--db", db)
    assert code == 0, err
    document = json.loads(out)
    assert set(document) == {"sweep_id", "name", "outcomes"} and document["name"] == "small"
    outcomes = document["outcomes"]
    assert [o["index"] for o in outcomes] == [0, 1, 2, 3]
    assert outcomes[3]["name"] == "small[backfill=easy, default cpu=+4]"
    assert outcomes[3]["params"] == {"backfill": "easy", "default cpu": 4}
    assert set(outcomes[0]) == {"index", "name", "params", "status", "error", "kpis", "classes", "elapsed_s", "worker"}
    assert {o["status"] for o in outcomes} == {"ok"} and 0 <= outcomes[0]["kpis"]["utilization"] <= 1
    progress = err.splitlines()
    assert len(progress) == 4 and {line[:6] for line in progress} == {"[1/4] ", "[2/4] ", "[3/4] ", "[4/4] "}
    assert all(": ok " in line and line.endswith(" s") for line in progress)

    code, out, _ = meridian(capsys, "sweeps", "--json", "--db", db)
    listed = json.loads(out)
    assert code == 0 and [(s["sweep_id"], s["name"], s["source"], s["points"], s["done"], s["failed"], s["status"],
                           s["backend"], s["workers"]) for s in listed] == [
        (document["sweep_id"], "small", str(SMALL), 4, 4, 0, "ok", "local", 2)]
    code, out, _ = meridian(capsys, "sweeps", document["sweep_id"], "--json", "--db", db)
    shown = json.loads(out)
    assert code == 0 and shown["outcomes"] == outcomes and shown["grid_text"] == GRID
    code, out, _ = meridian(capsys, "sweeps", document["sweep_id"], "--db", db)
    assert code == 0 and out.startswith(f"sweep {document['sweep_id']} small on {SMALL}: ok, 4 of 4 points")


def test_a_failed_point_exits_1_and_the_table_still_shows_every_point(tmp_path, capsys):
    db = tmp_path / "m.duckdb"
    code, out, err = meridian(capsys, "sweep", "--trace", SMALL, "--grid", _grid(tmp_path, FAILING), "--workers", 1,
                              "--db", db)
    assert code == 1
    header, *rows = out.split("\n\n")[0].splitlines()
    assert header.split()[:6] == ["backfill", "default", "cpu", "scenario", "status", "utilization"]
    assert "wait_p95_h" in header and "unknown p95 h" in header and header.rstrip().endswith("cost_usd")
    assert len(rows) == 5 and [" failed " in row for row in rows] == [False] * 4 + [True]
    assert rows[4].split()[:2] == ["nowhere", "failed"] and set(rows[4].split()[2:]) == {"-"}
    assert "[5/5] small[nowhere]: failed: ScenarioError: fleet edit: no cpu nodes in region 'atlantis'" in err
    assert "stored as sweep 1" in out
    code, out, _ = meridian(capsys, "sweeps", "--db", db)
    assert code == 0 and out.splitlines()[1].split()[-7:-4] == ["5", "5", "1"]
    assert out.splitlines()[1].split()[-1] == "failed"


def test_no_store_writes_no_database(tmp_path, capsys):
    db = tmp_path / "m.duckdb"
    code, out, _ = meridian(capsys, "sweep", "--trace", SMALL, "--grid", _grid(tmp_path, GRID), "--workers", 1,
                            "--json", "--no-store", "--db", db)
    assert code == 0 and json.loads(out)["sweep_id"] is None and not db.exists()


@pytest.mark.parametrize("argv, expected", [
    (["sweep", "--trace", SMALL, "--grid", "BAD"], "grid.toml: axis[1].values must be a non-empty list"),
    (["sweep", "--trace", SMALL, "--grid", "MISSING"], "absent.toml: cannot read grid"),
    (["sweep", "--dataset", "nope", "--grid", "GOOD", "--db", "SAMPLE"], "unknown dataset 'nope'; choose from sample"),
    (["sweep", "--trace", SMALL, "--grid", "GOOD", "--workers", 0], "--workers must be a positive integer, got 0"),
    (["sweeps", 7, "--db", "SAMPLE"], "no sweep 7; stored sweeps: none"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, sample_db, argv, expected):
    good, bad = _grid(tmp_path, GRID), tmp_path / "grid.toml"
    swap = {"GOOD": good, "MISSING": tmp_path / "absent.toml", "SAMPLE": sample_db}
    if "BAD" in argv:
        bad.write_text("[[axis]]\nset = 'seed'\nvalues = []\n", encoding="utf-8")
        swap["BAD"] = bad
    code, out, err = meridian(capsys, *[swap.get(a, a) if isinstance(a, str) else a for a in argv])
    assert (code, out) == (2, "")
    assert err.startswith("meridian: ") and expected in err and len(err.splitlines()) == 1, err


def test_a_trace_that_cannot_be_read_exits_2_naming_the_file(tmp_path, capsys):
    code, out, err = meridian(capsys, "sweep", "--trace", REPO / "nope.swf", "--grid", _grid(tmp_path, GRID))
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"{REPO / 'nope.swf'}: cannot read file (No such file or directory)",
                                "meridian: 1 problem found; nothing was imported"], err


def test_missing_dask_exits_2_naming_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    code, _, err = meridian(capsys, "sweep", "--trace", SMALL, "--grid", _grid(tmp_path, GRID), "--dask", "local",
                            "--no-store")
    assert code == 2 and "pip install 'meridian[dask]'" in err


def test_sweep_on_a_running_dask_scheduler_by_address(tmp_path, capsys):
    import distributed

    db = tmp_path / "m.duckdb"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        code, out, err = meridian(capsys, "sweep", "--trace", SMALL, "--grid", _grid(tmp_path, GRID), "--dask", address,
                                  "--json", "--db", db)
    assert code == 0, err
    assert [o["status"] for o in json.loads(out)["outcomes"]] == ["ok"] * 4
    code, out, _ = meridian(capsys, "sweeps", "--json", "--db", db)
    assert [(s["backend"], s["workers"]) for s in json.loads(out)] == [(address, None)]


def test_an_unreachable_dask_scheduler_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("engine.service.sweep.backends.CONNECT_TIMEOUT_S", 1)
    code, out, err = meridian(capsys, "sweep", "--trace", SMALL, "--grid", _grid(tmp_path, GRID), "--dask",
                              "tcp://127.0.0.1:1", "--no-store")
    assert (code, out) == (2, "") and err.startswith("meridian: cannot reach the Dask scheduler at tcp://127.0.0.1:1")
