"""The recorded scheduler of the sample: strict first-come-first-served on one pool.

One pool is every node of one GPU type in one region. Jobs are taken in the order given
(submit time, then job id). The head job starts as soon as enough capacity is free: a
single-node job on the best-fitting node (the fullest node with room, lowest index on
ties), a multi-node gang on whole free nodes. There is no backfilling: while the head job
waits, every job behind it waits too, even if it would fit. A job whose user gives up
(`patience_s` >= 0) leaves the queue at submit + patience if it has not started by then.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

_NEVER = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Replay:
    """Outcome per job, in input order; -1 where there is no value (Unix seconds)."""

    start_s: np.ndarray
    end_s: np.ndarray
    gave_up: np.ndarray   # bool: cancelled while still queued (end_s = when the user gave up)


def replay_pool(capacity_milli: np.ndarray, submit_s: np.ndarray, node_milli: np.ndarray, nodes: np.ndarray,
                run_s: np.ndarray, patience_s: np.ndarray, horizon_s: int) -> Replay:
    """FIFO-replay one pool until `horizon_s`; jobs not started by then stay pending.

    capacity_milli: milli-GPUs of each node. Per job: node_milli = milli-GPUs needed on each of
    its `nodes` nodes (a gang of nodes > 1 always asks for whole nodes). Every job must fit the
    empty pool, or the queue would block forever.

    Steps of the loop, for the job at the head of the queue:
    1. advance the clock to its submit time and release every job that has finished by now;
    2. drop it if its user gave up before now;
    3. start it if it fits;
    4. otherwise wait for the next completion (or its user's deadline) and go to 1.
    """
    n = len(submit_s)
    start = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    gave_up = np.zeros(n, dtype=bool)
    free = capacity_milli.astype(np.int64).copy()
    total_free = int(free.sum())
    submit, need, count = submit_s.tolist(), node_milli.tolist(), nodes.tolist()
    run, patience = run_s.tolist(), patience_s.tolist()
    _check_fits(capacity_milli, need, count)
    running: list[tuple[int, int]] = []  # heap of (end second, job)
    placed_on: dict[int, object] = {}
    t = submit[0] if n else 0
    head = 0
    while head < n:
        j = head
        if submit[j] > t:
            t = submit[j]
        if t >= horizon_s:
            break
        while running and running[0][0] <= t:                       # step 1
            _, done = heapq.heappop(running)
            free[placed_on[done]] += need[done]
            total_free += need[done] * count[done]
            del placed_on[done]
        deadline = submit[j] + patience[j] if patience[j] >= 0 else _NEVER
        if deadline <= t:                                            # step 2
            gave_up[j], end[j] = True, deadline
            head += 1
            continue
        where = _place(free, need[j], count[j]) if need[j] * count[j] <= total_free else None
        if where is not None:                                        # step 3
            free[where] -= need[j]
            total_free -= need[j] * count[j]
            placed_on[j] = where
            start[j], end[j] = t, t + run[j]
            heapq.heappush(running, (t + run[j], j))
            head += 1
            continue
        t = min(running[0][0], deadline)                             # step 4
    for j in range(head, n):   # still queued at the horizon: gave up before it, or pending
        deadline = submit[j] + patience[j] if patience[j] >= 0 else _NEVER
        if deadline < horizon_s:
            gave_up[j], end[j] = True, deadline
    return Replay(start, end, gave_up)


def _place(free: np.ndarray, need: int, count: int):
    """Node index (single node) or index array (gang) to run on, or None if it does not fit now."""
    if count == 1:
        room = np.where(free >= need, free, _NEVER)
        best = int(room.argmin())
        return best if room[best] != _NEVER else None
    fitting = np.flatnonzero(free >= need)
    if len(fitting) < count:
        return None
    return fitting[np.argsort(free[fitting], kind="stable")[:count]]


def _check_fits(capacity_milli: np.ndarray, need: list[int], count: list[int]) -> None:
    ascending = np.sort(capacity_milli)
    fitting_nodes = len(ascending) - np.searchsorted(ascending, np.asarray(need, dtype=np.int64), side="left")
    if (fitting_nodes < np.asarray(count, dtype=np.int64)).any():
        raise ValueError("a job asks for more than the empty pool has; cap job sizes to the pool first")
