"""Datasets kept in an archive region ([roles] datasets = "all" or "named", engine.world.roles).

Attached only when the scenario's [roles] archives datasets, so every other run is the same to the bit.
The datasets are engine.world.datasets' (a job's `dataset` column, else `project@data_location`); the
chosen ones are every dataset ("all") or those in `dataset_names` ("named") whose home region is in the
fleet. A dataset d of S GB (its table's size_gb) with home h is archived in the archive region a nearest
to h (the round trips of [latency]; ties and unknown round trips: the order of [roles] archive):

- `dataset_idle_days` 0: archived from the run's start (stored at 0 s) until a job needs it;
- N > 0: hot from its first use; archived at u + N days, u its last use (the first submit of a job
  reading it, then the latest arrival or stop of such a job: its end, or its eviction), once that moment
  has passed when a job next needs it (or at the run's last event, when that moment lies before it) and no
  job reading it is running then: a running job uses its dataset, so it is never archived under one.

A job j reading d arrives (is submitted, or handed over by a chain, before it is routed) at time t while
d is archived: the first such job asks for d at t and d is restored to its home h, ready at
r = max(t, stored) + `restore_delay_s` + S x 8 / [data] transfer_gbps (the transfer when a != h and a
bandwidth is given, else 0 s). Every job reading d that arrives before r is held: logged
"restoring-dataset" (its reason) at its arrival and arrives again at r (a deferred arrival), then is
routed and moves its data as any job. From r on d is hot (and, with N > 0, archived again after N idle
days). Writing d into an archive in another region (a != h) sends S GB out of h.

Dollars, per archived period: storage S x `storage_usd_per_gb_month` x the months (30 days) from stored
to restored (to the window's end when never asked for) inside the window, and egress S x e(h) for the
write plus S x e(a) for the restore when a != h (e: the regions table's egress_usd_per_gb, $0 unknown),
booked to the job that asked for the restore, to no job while never asked for
(engine.analysis.runs.roles_kpis). The hot storage it saved is the same GB-months at [data]
storage_usd_per_gb_month.

Result: `archived_datasets`, one row per archived period (DATASET_COLUMNS): dataset, home_region,
archive_region, gb, stored_s, asked_s and restored_s (NaN when never asked for), job_id (the job that
asked, "" when none), jobs_held (the jobs held by the restore), held_s (the seconds they were held, summed),
usd_per_gb_month, hot_usd_per_gb_month, egress_usd.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.core.reasons import RESTORING_DATASET
from engine.sim.processes.base import WorldProcess
from engine.sim.state.events import DEFERRED
from engine.world import datasets

DAY_S = 86_400.0
DATASET_COLUMNS = ["dataset", "home_region", "archive_region", "gb", "stored_s", "asked_s", "restored_s", "job_id",
                   "jobs_held", "held_s", "usd_per_gb_month", "hot_usd_per_gb_month", "egress_usd"]
# A row while it is built: [dataset, archive, stored, asked, restored, job, jobs_held, held_s, egress]
_STORED, _ASKED, _RESTORED, _JOB, _JOBS, _HELD, _EGRESS = range(2, 9)


class DatasetArchive(WorldProcess):
    """The archived datasets of one run, and the restores that hold jobs back."""

    cause = "datasets restored from the archive ([roles] datasets)"
    result_fields = ("archived_datasets",)

    def __init__(self, run, roles, data) -> None:
        self.run, self.roles, self.gbps = run, roles, float(data.transfer_gbps)
        self.hot_price = float(data.storage_usd_per_gb_month)
        ids, self.table = datasets.of_workload(run.w)
        index = {name: i for i, name in enumerate(self.table["dataset"])}
        self.dataset = [-1 if d is None else index[d] for d in ids.tolist()]
        self.size = self.table["size_gb"].astype(float).tolist()
        self.home = [run.region_index.get(h, -1) for h in self.table["home_region"]]
        facts = run.region_facts()
        self.egress = [float(e) if e == e else 0.0 for e in facts.egress_usd_per_gb.tolist()]
        archives = [run.region_index[a] for a in roles.archive if a in run.region_index]  # in [roles] order
        chosen = set(roles.dataset_names) if roles.datasets == "named" else None
        self.archive = [min(archives, key=lambda k: (facts.latency_ms[h, k], archives.index(k)))
                        if h >= 0 and archives and (chosen is None or name in chosen) else -1
                        for h, name in zip(self.home, self.table["dataset"])]
        self.idle_s = roles.dataset_idle_days * DAY_S
        first = np.full(len(self.table), np.inf)  # each dataset's first use: the first submit of a job reading it
        reads = np.flatnonzero(np.asarray(self.dataset) >= 0)
        np.minimum.at(first, np.asarray(self.dataset)[reads], np.asarray(run.submit, np.float64)[reads])
        self.last_use = first.tolist()
        self.running = [0] * len(self.table)  # jobs reading each dataset that run now
        self.rows: list[list] = []
        self.open: dict[int, int] = {}  # dataset -> its row while archived and not yet restored
        if self.idle_s == 0:
            for d, a in enumerate(self.archive):
                if a >= 0:
                    self._store(d, 0.0)

    @classmethod
    def attach(cls, run) -> DatasetArchive | None:
        roles = run.world.roles if run.world is not None else None
        if roles is None or not roles.archives_datasets:
            return None
        archive = cls(run, roles, run.world.data)
        run.dataset_archive = archive
        return archive

    def _store(self, d: int, at: float) -> None:
        a, h = self.archive[d], self.home[d]
        self.open[d] = len(self.rows)
        self.rows.append([d, a, at, math.nan, math.nan, -1, 0, 0.0, self.size[d] * self.egress[h] if a != h else 0.0])

    def _idle(self, d: int, now: float) -> bool:
        """Has dataset d, hot, been idle `dataset_idle_days` by `now`: no job reading it runs and its last use
        lies that long before?"""
        return d not in self.open and self.idle_s > 0 and not self.running[d] and now >= self.last_use[d] + self.idle_s

    def _archived(self, d: int, now: float) -> int | None:
        """Dataset d's open row at `now` (archiving it first when it has been idle long enough), else None."""
        if self._idle(d, now):
            self._store(d, self.last_use[d] + self.idle_s)
        return self.open.get(d)

    def waits(self, j: int, now: float) -> bool:
        """Job j arrives at `now`: True while its dataset is archived (it arrives again when restored)."""
        d = self.dataset[j]
        if d < 0 or self.archive[d] < 0:
            return False
        k = self._archived(d, now)
        if k is not None:
            row = self.rows[k]
            if row[_ASKED] != row[_ASKED]:  # not asked for yet: restore it to its home now
                a, h, gb = row[1], self.home[d], self.size[d]
                wire = gb * 8.0 / self.gbps if a != h and self.gbps > 0 else 0.0
                row[_ASKED], row[_RESTORED], row[_JOB] = now, max(now, row[_STORED]) + self.roles.restore_delay_s + wire, j
                row[_EGRESS] += gb * self.egress[a] if a != h else 0.0
            if row[_RESTORED] > now:
                row[_JOBS] += 1
                row[_HELD] += row[_RESTORED] - now
                self.run.decide(now, j, RESTORING_DATASET)
                self.run.events.push(row[_RESTORED], DEFERRED, j)
                return True
            del self.open[d]
        self.last_use[d] = max(self.last_use[d], now)
        return False

    def on_start(self, j: int, now: float, running_s: float) -> None:
        d = self.dataset[j]
        if d >= 0 and self.archive[d] >= 0:
            self.running[d] += 1

    def on_release(self, j: int, now: float) -> None:
        """Job j stopped running at `now` (it ended or was evicted): a use of its dataset."""
        d = self.dataset[j]
        if d >= 0 and self.archive[d] >= 0:
            self.running[d] -= 1
            self.last_use[d] = max(self.last_use[d], now)

    def finish(self, last: float) -> None:
        # archived after its last use, before the run's last event (storage: clipped to W)
        for d, a in enumerate(self.archive):
            if a >= 0 and self._idle(d, last):
                self._store(d, self.last_use[d] + self.idle_s)

    def result(self) -> dict[str, object]:
        names, rows, w = list(self.run.regions), self.rows, self.run.w
        d = np.array([r[0] for r in rows], np.int64)
        job = [r[_JOB] for r in rows]
        frame = pd.DataFrame({
            "dataset": self.table["dataset"].to_numpy(object)[d] if len(d) else np.array([], object),
            "home_region": [names[self.home[k]] for k in d.tolist()],
            "archive_region": [names[r[1]] for r in rows], "gb": np.asarray(self.size, np.float64)[d],
            **{c: np.array([r[k] for r in rows], np.float64) for c, k in
               (("stored_s", _STORED), ("asked_s", _ASKED), ("restored_s", _RESTORED))},
            "job_id": [str(w.job_id[j]) if j >= 0 else "" for j in job],
            "jobs_held": np.array([r[_JOBS] for r in rows], np.int64),
            "held_s": np.array([r[_HELD] for r in rows], np.float64),
            "usd_per_gb_month": self.roles.storage_usd_per_gb_month, "hot_usd_per_gb_month": self.hot_price,
            "egress_usd": np.array([r[_EGRESS] for r in rows], np.float64)}, columns=DATASET_COLUMNS)
        return {"archived_datasets": frame}
