"""Parameter sweeps in the store: the `sweeps` and `sweep_results` tables (migration 002).

A sweep is saved when it starts (`save_sweep`, status "running", owned by this process), each point's
outcome appended as it arrives (`append_outcome`: one insert, so a sweep that dies keeps the points
that finished), and the sweep finished with its wall time and status (`finish_sweep`). A sweep whose
process died is marked "interrupted" when the database is next opened for writing
(engine.telemetry.orphans); `resume_sweep` takes it up again in this process, and only the points
without a stored outcome run. An outcome is the dict of
engine.service.sweep.outcome.SweepOutcome.record(): index, name, params, status, error, kpis, classes,
elapsed_s, worker; params, kpis and classes are stored as JSON text and read back as Python values.
Values travel as bound parameters.
"""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from engine.telemetry.orphans import owner
from engine.telemetry.store import Store

STATUSES = ("running", "ok", "failed", "interrupted")
_META = ("sweep_id", "name", "created_utc", "source", "grid_text", "points", "workers", "backend", "elapsed_s",
         "status", "owner")
_RESULT = ("idx", "name", "params", "status", "error", "kpis", "classes", "elapsed_s", "worker")


@dataclass(frozen=True)
class SweepRecord:
    """A sweep as it starts: its grid's name and TOML text, the data it runs on (dataset name or
    trace path), how many points, the workers asked for (None: a remote cluster's own) and the
    backend ("local", "dask-local" or a Dask scheduler address)."""

    name: str
    source: str
    grid_text: str
    points: int
    workers: int | None
    backend: str


def save_sweep(store: Store, sweep: SweepRecord) -> int:
    """Insert a running sweep; returns its new sweep_id."""
    sweep_id = int(store.con.execute("SELECT nextval('sweep_ids')").fetchall()[0][0])
    store.con.execute(
        f"INSERT INTO sweeps ({', '.join(_META)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, 'running', ?)",
        [sweep_id, sweep.name, _utcnow(), sweep.source, sweep.grid_text, sweep.points, sweep.workers,
         sweep.backend, owner()])
    return sweep_id


def resume_sweep(store: Store, sweep_id: int, workers: int | None, backend: str) -> set[int]:
    """Take up an interrupted (or failed) sweep in this process: it is 'running' again, owned here, with
    the workers and backend of this run; returns the indices of the points it already has outcomes of
    (the points still to run are the others). Raises ValueError for an unknown sweep or one that is
    running in another process or finished ok."""
    rows = store.con.execute("SELECT status FROM sweeps WHERE sweep_id = ?", [sweep_id]).fetchall()
    if not rows:
        raise ValueError(f"no sweep {sweep_id}")
    if rows[0][0] not in ("interrupted", "failed"):
        raise ValueError(f"sweep {sweep_id} is {rows[0][0]}; only an interrupted or failed sweep can be resumed")
    store.con.execute("UPDATE sweeps SET status = 'running', owner = ?, workers = ?, backend = ? WHERE sweep_id = ?",
                      [owner(), workers, backend, sweep_id])
    # A failed point runs again: its worker may have died with the sweep's process.
    store.con.execute("DELETE FROM sweep_results WHERE sweep_id = ? AND status = 'failed'", [sweep_id])
    done = store.con.execute("SELECT idx FROM sweep_results WHERE sweep_id = ?", [sweep_id]).fetchall()
    return {int(r[0]) for r in done}


def append_outcome(store: Store, sweep_id: int, outcome: Mapping) -> None:
    """Insert one point's outcome (a SweepOutcome.record() dict)."""
    store.con.execute(
        "INSERT INTO sweep_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [sweep_id, outcome["index"], outcome["name"], _json(outcome["params"]), outcome["status"],
         outcome["error"], _json(outcome["kpis"]), _json(outcome["classes"]), float(outcome["elapsed_s"]),
         outcome["worker"]])


def finish_sweep(store: Store, sweep_id: int, elapsed_s: float, status: str) -> None:
    """Record a sweep's wall-clock seconds and final status ("ok", "failed" or "interrupted")."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    store.con.execute("UPDATE sweeps SET elapsed_s = ?, status = ? WHERE sweep_id = ?",
                      [float(elapsed_s), status, sweep_id])


def list_sweeps(store: Store) -> pd.DataFrame:
    """One row per sweep, oldest first: sweep_id, name, created_utc, source, points, done (outcomes
    stored), failed, workers, backend, elapsed_s, status."""
    return store.con.execute(
        """
        SELECT s.sweep_id, s.name, s.created_utc, s.source, s.points,
               count(r.idx) AS done, count(r.idx) FILTER (WHERE r.status = 'failed') AS failed,
               s.workers, s.backend, s.elapsed_s, s.status
        FROM sweeps s LEFT JOIN sweep_results r USING (sweep_id)
        GROUP BY ALL ORDER BY s.sweep_id
        """
    ).df().astype({"workers": "Int64"})


def load_sweep(store: Store, sweep_id: int) -> tuple[dict, list[dict]] | None:
    """(the sweep's row as a dict, its outcomes as record dicts in index order), or None if unknown."""
    rows = store.con.execute(f"SELECT {', '.join(_META)} FROM sweeps WHERE sweep_id = ?", [sweep_id]).fetchall()
    if not rows:
        return None
    meta = dict(zip(_META, rows[0]))
    results = store.con.execute(
        f"SELECT {', '.join(_RESULT)} FROM sweep_results WHERE sweep_id = ? ORDER BY idx", [sweep_id]).fetchall()
    outcomes = []
    for row in results:
        record = dict(zip(_RESULT, row))
        record["index"] = record.pop("idx")
        for key in ("params", "kpis", "classes"):
            record[key] = json.loads(record[key])
        outcomes.append({key: record[key] for key in ("index", *_RESULT[1:])})
    return meta, outcomes


def _json(value) -> str:
    return json.dumps(value, allow_nan=False, separators=(",", ":"))


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)
