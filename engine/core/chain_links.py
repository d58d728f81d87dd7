"""A jobs table's `depends_on` column -> each job's predecessor, checked: every named job exists, once,
and no chain loops back on itself.

`depends_on` holds the job id of the job a job waits for (empty: none); `checkpoint_gb` the size of
the checkpoint that predecessor hands over, GB (engine.sim.processes.chains). A problem is a
`ChainError` naming the line of each job involved ("line 7: job 'b' depends on 'x', which is not in the
jobs table"; "lines 3, 5, 9: jobs 'a' -> 'b' -> 'c' -> 'a' (each waits for the next) form a cycle"), so a user can fix the file
from the message alone.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

MAX_SHOWN = 5  # problems listed in one message


class ChainError(ValueError):
    """A depends_on column that names unknown or repeated jobs, or forms a cycle."""


def predecessors(job_id: np.ndarray, depends_on: pd.Series, lines, where: str = "jobs",
                 missing_ok: bool = False) -> np.ndarray:
    """Index of each job's predecessor (-1: none). `lines[k]`: job k's line in the source (for the
    messages); `missing_ok`: a named job absent from the table (before a scenario's window, say) leaves
    the job without a predecessor instead of being an error. Raises ChainError listing the problems."""
    pred, problems = links(job_id, depends_on, lines, missing_ok)
    if problems:
        shown = [f"{_where(found)}: {reason}" for found, reason in problems[:MAX_SHOWN]]
        more = [f"... and {len(problems) - MAX_SHOWN} more"] if len(problems) > MAX_SHOWN else []
        raise ChainError(f"{where}: depends_on: " + "; ".join(shown + more))
    return pred


def links(job_id: np.ndarray, depends_on: pd.Series, lines,
          missing_ok: bool = False) -> tuple[np.ndarray, list[tuple[list[int], str]]]:
    """(each job's predecessor index, -1 for none or a problem; the problems as (lines, reason)): a named id
    not in the table (unless `missing_ok`) or held by several jobs, a job naming itself, cycles."""
    lines = np.asarray(lines)
    named = depends_on.astype(object).where(depends_on.notna(), "").astype(str).str.strip().to_numpy(object)
    ids = pd.Series(np.asarray(job_id).astype(str))
    index = pd.Series(np.arange(len(ids)), index=ids)
    repeated = set(ids[ids.duplicated()])
    problems: list[tuple[list[int], str]] = []
    pred = np.full(len(ids), -1, np.int64)
    for k in np.flatnonzero(named != "").tolist():
        name, line = named[k], [int(lines[k])]
        if name in repeated:
            problems.append((line, f"job {ids[k]!r} depends on {name!r}, an id that more than one job has"))
        elif name == ids[k]:
            problems.append((line, f"job {name!r} depends on itself"))
        elif name in index.index:
            pred[k] = int(index[name])
        elif not missing_ok:
            problems.append((line, f"job {ids[k]!r} depends on {name!r}, which is not in the jobs table"))
    for loop in _cycles(pred):
        names = " -> ".join(repr(ids[k]) for k in [*loop, loop[0]])
        problems.append((sorted(int(lines[k]) for k in loop), f"jobs {names} (each waits for the next) form a cycle"))
        pred[loop] = -1
    return pred, problems


def _where(found: list[int]) -> str:
    return f"line {found[0]}" if len(found) == 1 else f"lines {', '.join(map(str, found))}"


def _cycles(pred: np.ndarray) -> list[list[int]]:
    """The cycles of predecessor links, each as its jobs in link order."""
    state = np.zeros(len(pred), np.int8)  # 0: unseen, 1: on the current path, 2: done
    found = []
    for start in range(len(pred)):
        path, j = [], start
        while j >= 0 and state[j] == 0:
            state[j] = 1
            path.append(j)
            j = int(pred[j])
        if j >= 0 and state[j] == 1:
            found.append(path[path.index(j):])
        state[path] = 2
    return found


def checkpoints(column: pd.Series | None, pred: np.ndarray, lines: np.ndarray, where: str = "jobs") -> np.ndarray:
    """Each job's checkpoint_gb (0 when missing), a number >= 0 where the job has a predecessor."""
    if column is None:
        return np.zeros(len(pred))
    values = pd.to_numeric(column, errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero((pred >= 0) & ~(values >= 0) & column.notna().to_numpy())
    if len(bad):
        raise ChainError(f"{where}: checkpoint_gb: " + "; ".join(
            f"line {lines[k]}: {column.iloc[k]!r} is not a number of GB >= 0" for k in bad[:MAX_SHOWN].tolist()))
    return np.where(np.isfinite(values), values, 0.0)
