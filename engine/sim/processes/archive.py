"""Checkpoints of evicted jobs kept in an archive region ([roles] checkpoints = "archive", engine.world.roles).

Attached only when the scenario's [roles] sends checkpoints to an archive, so every other run is the
same to the bit. When a job that has checkpointed work (some work kept by this or an earlier
eviction) is evicted at time t from region r (preemption, reclaim, a spot interruption, an outage),
its checkpoint, `checkpoint_gb_per_gpu` x the GPUs it asked for (g GB), goes to the archive region a
nearest to r (the round trips of [latency]; ties and unknown round trips: the order of [roles]
archive): it is stored from t + the write's transfer (g x 8 / [data] transfer_gbps seconds when a != r
and a bandwidth is given, else 0). When the job's turn next comes (its GPUs are free: the same moment
prefetched data is checked, engine.sim.cycle.starts) in region q, it asks for the checkpoint and is held
("restoring-checkpoint") until ready = max(now, stored) + `restore_delay_s` + the read's transfer
(g x 8 / transfer_gbps when q != a); a RESTORED event at `ready` re-runs q's pass. The checkpoint is
stored until `ready` (to the window's end when never asked for).

Dollars, per checkpoint: storage g x `storage_usd_per_gb_month` x the months (30 days) stored inside
the window (engine.analysis.runs.roles_kpis), and egress g x e(r) for a write to another region plus
g x e(a) for a read into another region (e: the regions table's egress_usd_per_gb, $0 unknown).

Result: `checkpoints`, one row per archived checkpoint (CHECKPOINT_COLUMNS): row, job_id, from_region,
archive_region, to_region ("" while never asked for), gb, stored_s, asked_s and restored_s (NaN when
never asked for), usd_per_gb_month, egress_usd.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.sim.processes.base import WorldProcess

RESTORED = 21
CHECKPOINT_COLUMNS = ["row", "job_id", "from_region", "archive_region", "to_region", "gb", "stored_s", "asked_s",
                      "restored_s", "usd_per_gb_month", "egress_usd"]


class Archive(WorldProcess):
    """The archived checkpoints of one run, and the restores that hold jobs back."""

    kinds = (RESTORED,)
    cause = "checkpoints restored from the archive ([roles] checkpoints = \"archive\")"
    result_fields = ("checkpoints",)

    def __init__(self, run, roles, gbps: float) -> None:
        self.run, self.roles, self.gbps = run, roles, gbps
        self.names = list(run.regions)
        facts = run.region_facts()
        self.latency, egress = facts.latency_ms, facts.egress_usd_per_gb
        self.egress = [float(e) if e == e else 0.0 for e in egress.tolist()]
        order = {name: k for k, name in enumerate(roles.archive)}
        self.archives = sorted((run.region_index[a] for a in roles.archive if a in run.region_index),
                               key=lambda r: order[self.names[r]])
        self.rows: list[list] = []
        self.pending: dict[int, int] = {}  # job -> its row while its checkpoint is archived and not yet restored

    @classmethod
    def attach(cls, run) -> Archive | None:
        roles = run.world.roles if run.world is not None else None
        if roles is None or not roles.archives:
            return None
        archive = cls(run, roles, float(run.world.data.transfer_gbps))
        if not archive.archives:
            return None
        run.archive = archive
        return archive

    def _wire_s(self, gb: float, a: int, b: int) -> float:
        return gb * 8.0 / self.gbps if a != b and self.gbps > 0 else 0.0

    def evicted(self, j: int, region: str, now: float) -> None:
        """Job j, with checkpointed work, was evicted from `region` at `now`: its checkpoint goes to the archive."""
        r = self.run.region_index[region]
        a = min(self.archives, key=lambda k: (self.latency[r, k], self.archives.index(k)))
        gb = float(self.run.gpus[j]) * self.roles.checkpoint_gb_per_gpu
        stored = now + self._wire_s(gb, r, a)
        egress = gb * self.egress[r] if a != r else 0.0
        self.pending[j] = len(self.rows)
        self.rows.append([j, r, a, -1, gb, stored, math.nan, math.nan, self.roles.storage_usd_per_gb_month, egress])

    def holds_back(self, j: int, now: float) -> bool:
        """Job j's turn came at `now` (its GPUs are free): True while its archived checkpoint is not restored;
        the first time, it asks for the checkpoint."""
        k = self.pending.get(j)
        if k is None:
            return False
        row = self.rows[k]
        if row[6] != row[6]:  # not asked for yet: ask now, for the region it queues in
            q = self.run.region_index[self.run.region_name[j]]
            ready = max(now, row[5]) + self.roles.restore_delay_s + self._wire_s(row[4], row[2], q)
            row[3], row[6], row[7] = q, now, ready
            if q != row[2]:
                row[9] += row[4] * self.egress[row[2]]
            if ready > now:
                self.run.events.push(ready, RESTORED, q)
        if row[7] > now:
            return True
        del self.pending[j]
        return False

    def restoring(self, j: int, now: float) -> bool:
        """Job j has asked for its checkpoint and it is not there yet (the reason it waits)."""
        k = self.pending.get(j)
        return k is not None and self.rows[k][7] > now

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        name = self.names[payload]
        self.run.freed[name] = True  # a job held for its checkpoint may start now: retry the blocked head
        return [name]

    def result(self) -> dict[str, object]:
        names, w = self.names, self.run.w
        rows = self.rows
        row = np.array([r[0] for r in rows], np.int64)
        frame = pd.DataFrame({
            "row": row, "job_id": w.job_id[row].astype(str), "from_region": [names[r[1]] for r in rows],
            "archive_region": [names[r[2]] for r in rows], "to_region": [names[r[3]] if r[3] >= 0 else ""
                                                                         for r in rows],
            **{column: np.array([r[k] for r in rows], np.float64)
               for k, column in enumerate(CHECKPOINT_COLUMNS[5:], start=4)}}, columns=CHECKPOINT_COLUMNS)
        return {"checkpoints": frame}
