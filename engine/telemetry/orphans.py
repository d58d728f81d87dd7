"""Long computations whose process is gone: sweeps and headroom runs left 'running' by a killed process.

DuckDB lets one process hold a database file for writing, so when a process opens it for writing, a
run that another process left 'running' can no longer be running: that process was killed (or lost
power) before it could record how the run ended. `interrupt_orphans` marks such runs 'interrupted'
(their finished points and searches stay stored, and can be resumed); runs of this process, which
may be running in another thread, keep their status. `owner()` names this process in those rows.
"""
from __future__ import annotations

import os
import socket
import uuid

_OWNER: dict[int, str] = {}
# The tables with a `status` and an `owner` column, as migration 005 gives them.
RUN_TABLES = ("sweeps", "headroom_runs")


def owner() -> str:
    """host:pid:token of this process (a forked child gets its own)."""
    pid = os.getpid()
    if pid not in _OWNER:
        _OWNER[pid] = f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:12]}"
    return _OWNER[pid]


def interrupt_orphans(con) -> int:
    """Mark the runs left 'running' by another process 'interrupted'; how many were."""
    count = 0
    owned = {row[0] for row in con.execute(
        "SELECT table_name FROM information_schema.columns WHERE column_name = 'owner'").fetchall()}
    for table in (t for t in RUN_TABLES if t in owned):   # a database older than migration 005 has none
        rows = con.execute(f"UPDATE {table} SET status = 'interrupted' "
                           "WHERE status = 'running' AND (owner IS NULL OR owner <> ?) RETURNING 1",
                           [owner()]).fetchall()
        count += len(rows)
    return count
