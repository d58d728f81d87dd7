"""Sweeps in DuckDB: outcomes written as they arrive, reloaded equal, kept across reopening."""
import datetime as dt
import subprocess
import sys
from pathlib import Path

import pandas as pd

from engine.service.sweep.outcome import SweepOutcome
from engine.telemetry.batch import ImportBatch
from engine.telemetry.store import Store
from engine.telemetry.sweeps import SweepRecord, append_outcome, list_sweeps, load_sweep, save_sweep

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "tests" / "data" / "swf" / "small.swf"
GRID = """
name = "small"
[[axis]]
set = "policies.backfill"
values = ["none", "easy"]
[[scenario]]
name = "nowhere"
fleet = [{ region = "atlantis", gpu_type = "cpu", add_gpus = 4 }]
"""


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _record(**fields) -> SweepRecord:
    return SweepRecord(**{"name": "g", "source": "sample", "grid_text": "x = 1", "points": 2, "workers": 2,
                          "backend": "local", **fields})


# The sweep runs in a fresh interpreter, as `meridian sweep` does: its forkserver pool must not
# inherit a pytest worker's state (under pytest-xdist its pool workers died at once, in CI only).
SWEEP = """
import sys
from argparse import Namespace
from engine.cli.common import tables
from engine.service.sweep.grid import load_grid
from engine.service.sweep.runner import run_sweep
from engine.telemetry.store import Store
from engine.telemetry.sweeps import SweepRecord, append_outcome, finish_sweep, load_sweep, save_sweep

grid_path, small, db = sys.argv[1:4]
grid = load_grid(grid_path)
data = tables(Namespace(trace=small, dataset=None, db=None))
store = Store.open(db)
record = SweepRecord(name=grid.name, source=small, grid_text=grid.text, points=3, workers=2, backend="local")
sweep_id = save_sweep(store, record)
outcomes = run_sweep(grid.windowed(data[0]), data, workers=2,
                     progress=lambda outcome, done, total: append_outcome(store, sweep_id, outcome.record()))
finish_sweep(store, sweep_id, 4.5, "failed")
store.close()
store = Store.open(db)
assert load_sweep(store, sweep_id)[1] == [o.record() for o in outcomes], "reloaded records differ"
print(sweep_id)
"""


def test_a_real_sweep_is_stored_and_reloaded_equal_after_reopening(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(GRID, encoding="utf-8")
    db = tmp_path / "m.duckdb"
    started = _utcnow()
    done = subprocess.run([sys.executable, "-c", SWEEP, str(path), str(SMALL), str(db)], capture_output=True,
                          text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    sweep_id = int(done.stdout.strip())

    store = Store.open(db)
    meta, records = load_sweep(store, sweep_id)
    assert [r["status"] for r in records] == ["ok", "ok", "failed"], [r.get("error") for r in records]
    assert {k: meta[k] for k in ("sweep_id", "name", "source", "grid_text", "points", "workers", "backend",
                                 "elapsed_s", "status")} == {
        "sweep_id": sweep_id, "name": "small", "source": str(SMALL), "grid_text": GRID, "points": 3, "workers": 2,
        "backend": "local", "elapsed_s": 4.5, "status": "failed"}
    assert started <= meta["created_utc"] <= _utcnow()
    listed = list_sweeps(store)
    assert listed[["sweep_id", "points", "done", "failed", "status"]].to_dict("records") == [
        {"sweep_id": sweep_id, "points": 3, "done": 3, "failed": 1, "status": "failed"}]
    assert load_sweep(store, sweep_id + 1) is None
    store.close()


def test_a_sweep_that_dies_keeps_the_points_that_finished(tmp_path):
    db = tmp_path / "m.duckdb"
    store = Store.open(db)
    first = save_sweep(store, _record())
    done = SweepOutcome(0, "g[a=1]", {"a": 1}, "ok", None, {"utilization": 0.5, "wait_p95_s": None},
                        [{"workload_class": "training", "wait_p95_s": 60.0}], 1.25, "host:1")
    append_outcome(store, first, done.record())
    store.con.close()  # no finish_sweep: the process died

    store = Store.open(db)
    second = save_sweep(store, _record(workers=None, backend="tcp://10.0.0.5:8786"))
    meta, records = load_sweep(store, first)
    assert (meta["status"], meta["elapsed_s"], records) == ("running", None, [done.record()])
    listed = list_sweeps(store)
    assert listed["sweep_id"].tolist() == [first, second] and second > first
    assert listed["done"].tolist() == [1, 0] and listed["workers"].tolist() == [2, pd.NA]
    assert load_sweep(store, second)[1] == []
    store.close()


def test_sweeps_leave_the_dataset_digest_and_deletes_alone(tmp_path):
    store = Store.open(tmp_path / "m.duckdb")
    assert store.schema_version() >= 2
    jobs = pd.DataFrame({"job_id": ["1"], "workload_class": ["training"], "submit_utc": pd.to_datetime(["2024-01-01"]),
                         "gpus": [1.0], "region": ["r"], "status": ["completed"]})
    store.add_import("d", ImportBatch("csv", {"jobs": jobs}), "a.csv", "sha")
    before = store.content_digest()
    sweep_id = save_sweep(store, _record(source="d"))
    append_outcome(store, sweep_id, SweepOutcome(0, "p", {}, "failed", "ValueError: x").record())
    assert store.content_digest() == before
    assert store.delete_dataset("d") and not store.dataset_exists("d")
    assert load_sweep(store, sweep_id)[1][0]["error"] == "ValueError: x"
    store.close()
