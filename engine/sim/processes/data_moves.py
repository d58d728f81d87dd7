"""Moving jobs' input data between regions, with a scenario's [data] mechanisms on (engine.scenario.data):
replicas, prefetch, compression and incremental sync. Attached only when one of them is on; the plain
transfer delay alone stays the loop's (engine.sim.cycle.arrivals).

Each job reads a dataset (engine.world.datasets: its `dataset` column, else `project@data_location`)
of size S (the most any of its jobs reads) living in its home region h; the job reads its own s GB of
it. When the job is sent to a region r != h, at time t (its arrival, after routing):

- a replica of the dataset in r: nothing moves; the job waits only for a replica still being copied;
- else the count of jobs in r that needed the dataset goes up by one; at `replicate_after` (N > 0)
  the whole dataset is copied to r (S GB, the replica) and the job waits for that copy; the replica
  is stored from when it is complete to the end of the run. Never in a region the residency tag of
  any job reading the dataset forbids (engine.world.residency): there each job moves its own data;
- else, with `incremental`, when the dataset was moved to r before: only changed_fraction x s GB;
- else the job's s GB.
A move of g raw GB sends g / compression_ratio GB and takes g x compress_s_per_gb (CPU time to
compress and decompress) + (g / ratio) x 8 / transfer_gbps seconds (no bandwidth given: 0 s on the
wire). Without `prefetch` the job queues when its data is there (a deferred arrival, logged
"transferring-data"); with it the job queues at once, the transfer running during its wait, and a job
whose turn comes before its data is held ("waiting-for-data", the reason it waits) until the data is
there (a DATA_READY event re-runs its region's pass).

`transfers` (a result table): one row per job sent away from its dataset's home: row, job_id, dataset,
from_region, to_region, kind ("full", "incremental", "replica": the copy it triggered, "replica-hit"),
raw_gb, moved_gb, cpu_s, start_s, ready_s, waited_s (seconds the job was held by its data after it
could have started: all of the transfer without prefetch, from its first "waiting-for-data" to ready_s
with it). `datasets` (a result table): engine.world.datasets.COLUMNS with each dataset's replicas and
replica_s (when each replica was complete, seconds, joined by ";").
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from engine.sim.processes.base import WorldProcess
from engine.world import datasets

DATA_READY = 14
TRANSFER_COLUMNS = ["row", "job_id", "dataset", "from_region", "to_region", "kind", "raw_gb", "moved_gb", "cpu_s",
                    "start_s", "ready_s", "waited_s"]


class DataMoves(WorldProcess):
    """The datasets, replicas and transfers of one run."""

    kinds = (DATA_READY,)
    cause: str = "data arriving for prefetched jobs ([data] prefetch)"
    result_fields = ("transfers", "datasets")

    def __init__(self, run, model) -> None:
        w = run.w
        self.run, self.model, self.names = run, model, list(run.regions)
        ids, self.table = datasets.of_workload(w)
        index = {name: i for i, name in enumerate(self.table["dataset"])}
        self.dataset = [-1 if d is None else index[d] for d in ids.tolist()]
        self.size = self.table["size_gb"].astype(float).tolist()
        self.home = [run.region_index.get(h, -1) for h in self.table["home_region"]]
        self.may_hold = self._residency(run) if model.replicate_after > 0 else None
        self.needed: dict[tuple[int, int], int] = {}
        self.replica: dict[tuple[int, int], float] = {}  # (dataset, region) -> when the copy is complete
        self.synced: set[tuple[int, int]] = set()
        self.rows: list[list] = []
        self.row_of: dict[int, int] = {}  # job -> its row in rows
        self.prefetch = model.prefetch
        self.ready_at = [-np.inf] * len(w) if self.prefetch else None
        self.first_held: dict[int, float] = {}

    @classmethod
    def attach(cls, run) -> DataMoves | None:
        model = run.world.data if run.world is not None else None
        if model is None or not model.moves:
            return None
        moves = cls(run, model)
        run.data_moves = moves
        run.data_gate = moves.prefetch
        return moves

    def arrive(self, j: int, r: int, now: float) -> float:
        """Job j was sent to region r at `now`: move what it needs; returns when its data is there."""
        d = self.dataset[j]
        if d < 0 or self.home[d] < 0 or self.home[d] == r:
            return now
        key, raw = (d, r), float(self.run.data_gb[j])
        if key in self.replica:
            return self._record(j, d, r, "replica-hit", raw, 0.0, 0.0, now, max(now, self.replica[key]))
        self.needed[key] = self.needed.get(key, 0) + 1
        if 0 < self.model.replicate_after <= self.needed[key] and self.may_hold[d, r]:
            ready = self._move(j, d, r, "replica", self.size[d], now)
            self.replica[key] = ready
            return ready
        if self.model.incremental and key in self.synced:
            return self._move(j, d, r, "incremental", raw * self.model.changed_fraction, now)
        self.synced.add(key)
        return self._move(j, d, r, "full", raw, now)

    def _residency(self, run) -> np.ndarray:
        """datasets x regions bool: every job reading the dataset may have its data there."""
        w = run.w
        tags = pd.DataFrame({"job_id": w.job_id, "residency": w.residency if w.residency is not None else None})
        allowed = run.region_facts().allowed(tags)
        out = np.ones((len(self.table), len(self.names)), bool)
        reads = np.flatnonzero(np.asarray(self.dataset) >= 0)
        if len(reads):
            which = np.asarray(self.dataset)[reads]
            np.logical_and.at(out, which, allowed[reads])
        return out

    def _move(self, j: int, d: int, r: int, kind: str, raw: float, now: float) -> float:
        model = self.model
        moved = raw / model.compression_ratio
        cpu = raw * model.compress_s_per_gb
        wire = moved * 8.0 / model.transfer_gbps if model.transfer_gbps > 0 else 0.0
        return self._record(j, d, r, kind, raw, moved, cpu, now, now + cpu + wire)

    def _record(self, j: int, d: int, r: int, kind: str, raw: float, moved: float, cpu: float, now: float,
                ready: float) -> float:
        self.row_of[j] = len(self.rows)
        self.rows.append([j, d, self.home[d], r, kind, raw, moved, cpu, now, ready,
                          0.0 if self.prefetch else ready - now])
        if self.prefetch and ready > now:
            self.ready_at[j] = ready
            self.run.events.push(ready, DATA_READY, r)
        return ready

    def held(self, j: int, now: float) -> None:
        """Job j could have started at `now` but its data is not there yet (prefetch)."""
        if j not in self.first_held:
            self.first_held[j] = now
            self.rows[self.row_of[j]][-1] = self.ready_at[j] - now

    def holds_back(self, j: int, now: float) -> bool:
        """Job j's turn came (`held`) and its data is still on its way."""
        return j in self.first_held and self.ready_at[j] > now

    def on_event(self, kind: int, payload: int, now: float) -> Iterable[str]:
        name = self.names[payload]
        self.run.freed[name] = True  # a job held for its data may start now: retry the blocked head
        return (name,)

    def result(self) -> dict[str, object]:
        w, names = self.run.w, self.names
        rows = pd.DataFrame(self.rows, columns=["row", "d", "from", "to", *TRANSFER_COLUMNS[5:]])
        ids = self.table["dataset"].to_numpy(object)
        transfers = pd.DataFrame({
            "row": rows["row"].astype(np.int64), "job_id": w.job_id[rows["row"].to_numpy(np.int64)].astype(str),
            "dataset": ids[rows["d"].to_numpy(np.int64)] if len(rows) else np.array([], object),
            "from_region": [names[i] for i in rows["from"]], "to_region": [names[i] for i in rows["to"]],
            **{c: rows[c] for c in TRANSFER_COLUMNS[5:]}})
        copies: dict[int, list[tuple[str, float]]] = {}
        for (d, r), ready in sorted(self.replica.items(), key=lambda item: (item[0][0], item[1], item[0][1])):
            copies.setdefault(d, []).append((names[r], ready))
        table = self.table.assign(
            replicas=[";".join(n for n, _ in copies.get(d, [])) for d in range(len(self.table))],
            replica_s=[";".join(repr(float(t)) for _, t in copies.get(d, [])) for d in range(len(self.table))])
        return {"transfers": transfers[TRANSFER_COLUMNS], "datasets": table}
