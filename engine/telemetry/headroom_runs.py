"""Headroom runs in the store: the `headroom_runs` and `headroom_searches` tables (migration 005).

A run is saved when it starts (`save_run`, status "running", owned by this process); each search is
stored the moment it finishes (`keep_search`: one insert of its JSON record under its key, the
digest of everything it depends on), and the run finished with its wall time and status
(`finish_run`). A run whose process died is marked "interrupted" when the database is next opened
for writing (engine.telemetry.orphans); asking for the same searches again finds the ones it kept
(`kept_searches`), so only the rest run. Values travel as bound parameters.
"""
from __future__ import annotations

import datetime as dt
import json

import pandas as pd

from engine.telemetry.orphans import owner
from engine.telemetry.store import Store

STATUSES = ("running", "ok", "failed", "interrupted")


def save_run(store: Store, source: str, scenarios: list[str], searches: int) -> int:
    """Insert a running headroom run; returns its new run_id."""
    run_id = int(store.con.execute("SELECT nextval('headroom_run_ids')").fetchall()[0][0])
    store.con.execute("INSERT INTO headroom_runs VALUES (?, ?, ?, ?, ?, ?, NULL, 'running')",
                      [run_id, _utcnow(), source, ", ".join(scenarios), int(searches), owner()])
    return run_id


def keep_search(store: Store, run_id: int, key: str, record: dict) -> None:
    """Store one finished search's record under `key` (a later identical search replaces nothing)."""
    store.con.execute("INSERT OR IGNORE INTO headroom_searches VALUES (?, ?, ?)",
                      [key, run_id, json.dumps(record, allow_nan=False, separators=(",", ":"))])


def kept_searches(store: Store, keys: list[str]) -> dict[str, dict]:
    """key -> record of the searches stored under any of `keys`."""
    if not keys:
        return {}
    rows = store.con.execute("SELECT search_key, outcome FROM headroom_searches WHERE list_contains(?, search_key)",
                             [list(keys)]).fetchall()
    return {key: json.loads(text) for key, text in rows}


def finish_run(store: Store, run_id: int, elapsed_s: float, status: str) -> None:
    """Record a run's wall-clock seconds and final status ("ok", "failed" or "interrupted")."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    store.con.execute("UPDATE headroom_runs SET elapsed_s = ?, status = ? WHERE run_id = ?",
                      [float(elapsed_s), status, run_id])


def list_runs(store: Store) -> pd.DataFrame:
    """One row per headroom run, oldest first: run_id, created_utc, source, scenarios, searches, stored
    (searches it computed and stored), elapsed_s, status."""
    return store.con.execute(
        """
        SELECT r.run_id, r.created_utc, r.source, r.scenarios, r.searches, count(s.search_key) AS stored,
               r.elapsed_s, r.status
        FROM headroom_runs r LEFT JOIN headroom_searches s USING (run_id)
        GROUP BY ALL ORDER BY r.run_id
        """).df()


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)
